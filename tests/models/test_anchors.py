"""models.anchors on a simulated 2PL population: item recovery, the grid posterior's edge cases (no anchor,
every item), monotonicity and the interval's coverage."""
from __future__ import annotations

import numpy as np
import pytest

from models.anchors import (ability_curve, ability_grid, estimate_full_mean, fit_items, mean_curve,
                            normal_log_prior, prediction_prior)
from models.anchors.items import ItemParams
from models.anchors.posterior import grid_quantile, log_likelihood, posterior_weights
from models.anchors.simulate import simulate_2pl

GRID = ability_grid()                    # abilities x slip rates
PLAIN = ability_grid(slips=(0.0,))      # abilities only
FIT = ability_grid(points=61)           # the coarser grid item fits run on (as bench/anchors.py)


@pytest.fixture(scope="module")
def population():
    return simulate_2pl(models=60, items=150, seed=3)


def test_item_fit_recovers_the_simulated_items_and_abilities(population):
    fit = fit_items(population.y, grid=FIT)
    assert fit.converged
    assert fit.slip_weights[0] > 0.8 and np.mean(fit.slip) < 0.05      # nobody slips in this population
    assert np.corrcoef(fit.params.b, population.params.b)[0, 1] > 0.9
    assert np.corrcoef(fit.params.a, population.params.a)[0, 1] > 0.3
    assert np.corrcoef(fit.ability, population.theta)[0, 1] > 0.95
    assert np.all(fit.params.a > 0)


def test_missing_results_are_not_failures(population):
    y = population.y.copy()
    y[:, 0] = np.nan
    y[:5, 0] = 1.0                      # only five models ran item 0, all solved it
    fit = fit_items(y, grid=FIT)
    assert fit.params.b[0] < np.median(fit.params.b)     # seen as easy, not as failed by 55 models


def test_the_shared_slope_model_has_one_discrimination(population):
    fit = fit_items(population.y, slopes="shared", grid=FIT)
    assert np.ptp(fit.params.a) == 0
    with pytest.raises(ValueError, match="slopes"):
        fit_items(population.y, slopes="two")


def test_no_anchor_gives_the_prior_estimate(population):
    params = population.params
    members = np.ones(params.a.size, bool)
    none = np.zeros(params.a.size, bool)
    est = estimate_full_mean(params, PLAIN, normal_log_prior(PLAIN, 0.7, 0.3), np.zeros(params.a.size), none,
                             members, noise=False)
    curve = mean_curve(params, PLAIN, np.zeros(params.a.size), none, members)[0]
    assert est.median[0] == pytest.approx(np.interp(0.7, PLAIN.theta, curve), abs=2e-3)
    # a prior built from a prediction and its interval returns both with no anchor
    centre, sd = prediction_prior(PLAIN.theta, curve, 0.62, 0.5, 0.7)
    est = estimate_full_mean(params, PLAIN, normal_log_prior(PLAIN, centre, sd), np.zeros(params.a.size), none,
                             members, noise=False)
    assert est.median[0] == pytest.approx(0.62, abs=3e-3)
    assert est.low[0] == pytest.approx(0.5, abs=0.02) and est.high[0] == pytest.approx(0.7, abs=0.02)


def test_every_item_observed_gives_the_exact_mean(population):
    y = population.y[0]
    members = np.ones(y.size, bool)
    est = estimate_full_mean(population.params, GRID, normal_log_prior(GRID), y, members, members)
    assert est.mean[0] == pytest.approx(y.mean(), abs=1e-12)
    assert est.median[0] == pytest.approx(y.mean(), abs=1e-12)
    assert est.low[0] == pytest.approx(y.mean(), abs=1e-12) and est.high[0] == pytest.approx(y.mean(), abs=1e-12)


def test_the_full_mean_is_over_the_models_own_items(population):
    y = population.y[0]
    members = np.zeros(y.size, bool)
    members[:40] = True
    est = estimate_full_mean(population.params, GRID, normal_log_prior(GRID), y, members, members)
    assert est.mean[0] == pytest.approx(y[:40].mean(), abs=1e-12)


def test_more_successes_never_lower_the_estimate(population):
    params = population.params
    observed = np.zeros(params.a.size, bool)
    observed[:20] = True
    members = np.ones(params.a.size, bool)
    previous = -1.0
    for solved in range(21):
        y = np.zeros(params.a.size)
        y[:solved] = 1.0
        est = estimate_full_mean(params, GRID, normal_log_prior(GRID), y, observed, members)
        assert est.mean[0] >= previous - 1e-12
        assert est.low[0] <= est.median[0] <= est.high[0]
        previous = est.mean[0]
    curve = mean_curve(params, GRID, np.zeros(params.a.size), observed, members)[0]
    for level in range(GRID.levels.size):        # rises with the ability, falls with the slip rate
        assert np.all(np.diff(curve[GRID.level == level]) >= 0)
    assert np.all(np.diff(curve.reshape(GRID.levels.size, -1), axis=0) <= 0)


def test_likelihood_and_posterior_are_the_spec_formulas():
    params = ItemParams(np.array([1.0, 2.0]), np.array([0.0, 1.0]))
    grid = ability_grid(-1.0, 1.0, 3, slips=(0.0, 0.2))
    y = np.array([1.0, 0.0])
    ll = log_likelihood(params, grid, y, np.array([True, True]))[0]
    p = (1 - grid.slip[:, None]) / (1 + np.exp(-params.a * (grid.theta[:, None] - params.b)))
    assert np.allclose(ll, np.log(p[:, 0]) + np.log(1 - p[:, 1]))
    w = posterior_weights(np.log(np.full(6, 1 / 6)), ll[None, :])[0]
    assert np.allclose(w, np.exp(ll) / np.exp(ll).sum())
    # quantile: midpoint CDF, linear between grid points
    assert grid_quantile(np.array([[0.5, 0.5]]), np.array([[0.0, 1.0]]), 0.5)[0] == pytest.approx(0.5)


def test_the_interval_covers_at_its_nominal_rate_on_simulated_models():
    """True item parameters and the true population prior: the 80 % interval of the realised full mean
    holds about 80 % of 400 simulated models after 20 random anchors (binomial sd of the rate: 2 points)."""
    pop = simulate_2pl(models=400, items=200, seed=11)
    rng = np.random.default_rng(5)
    observed = np.zeros(pop.y.shape, bool)
    for r in range(pop.y.shape[0]):
        observed[r, rng.choice(pop.y.shape[1], 20, replace=False)] = True
    members = np.ones(pop.y.shape, bool)
    est = estimate_full_mean(pop.params, GRID, normal_log_prior(GRID), pop.y, observed, members, level=0.8)
    truth = pop.y.mean(1)
    inside = np.mean((est.low <= truth) & (truth <= est.high))
    assert 0.74 <= inside <= 0.88
    assert np.mean(np.abs(est.mean - truth)) < np.mean(np.abs((pop.y * observed).sum(1) / 20 - truth))


def test_a_slipping_model_is_seen_as_one(population):
    """A model failing a third of its items at random: the slip-aware posterior finds the slip, and its
    estimate from 30 random anchors is closer to the truth than the slip-free model's."""
    rng = np.random.default_rng(8)
    theta = 1.0
    p = population.params.prob_at(np.array([theta]))[0]
    errors = {True: [], False: []}
    fit = {True: fit_items(population.y, grid=FIT),
           False: fit_items(population.y, grid=ability_grid(points=61, slips=(0.0,)))}
    for _ in range(20):
        y = ((rng.random(p.size) < p) & (rng.random(p.size) > 0.33)).astype(float)
        observed = np.zeros(p.size, bool)
        observed[rng.choice(p.size, 30, replace=False)] = True
        members = np.ones(p.size, bool)
        for slips, grid in ((True, GRID), (False, PLAIN)):
            prior = normal_log_prior(grid, 0.0, 1.0, fit[slips].slip_weights)
            est = estimate_full_mean(fit[slips].params, grid, prior, y, observed, members)
            errors[slips].append(abs(est.mean[0] - y.mean()))
    assert np.mean(errors[True]) < np.mean(errors[False])


def test_the_curve_a_sources_prior_inverts_averages_the_slip_levels(population):
    values = mean_curve(population.params, GRID, np.zeros(150), np.zeros(150, bool), np.ones(150, bool))[0]
    theta, curve = ability_curve(GRID, values, np.eye(GRID.levels.size)[0])
    assert np.allclose(theta, PLAIN.theta) and np.allclose(curve, values[GRID.level == 0])


def test_bad_inputs_are_refused(population):
    with pytest.raises(ValueError, match="level"):
        estimate_full_mean(population.params, GRID, normal_log_prior(GRID), population.y[0],
                           np.zeros(150, bool), np.ones(150, bool), level=1.5)
    with pytest.raises(ValueError, match="sd"):
        normal_log_prior(GRID, 0.0, 0.0)
    with pytest.raises(ValueError, match="at least one item"):
        estimate_full_mean(population.params, GRID, normal_log_prior(GRID), population.y[0],
                           np.zeros(150, bool), np.zeros(150, bool))
    y = population.y[0].copy()
    y[3] = np.nan
    with pytest.raises(ValueError, match="without a result"):
        estimate_full_mean(population.params, GRID, normal_log_prior(GRID), y, np.arange(150) < 5,
                           np.ones(150, bool))
    with pytest.raises(ValueError, match="grid"):
        ability_grid(1.0, 0.0)
    with pytest.raises(ValueError, match="slip"):
        ability_grid(slips=(0.0, 1.0))


def test_the_item_fit_with_missing_results_maximises_the_likelihood_of_the_results_alone(population):
    # fit_items sums over the items a model lacks and subtracts them (a sparse mask): its posterior must be
    # the one of the observed results only, written out here over each model's observed items
    y = population.y.copy()
    rng = np.random.default_rng(0)
    y[rng.random(y.shape) < 0.03] = np.nan
    y[0, :] = np.nan
    y[0, :3] = 1.0                               # a model with three results
    fit = fit_items(y, slopes="shared", grid=FIT)
    log_p, log_q = fit.params.log_probs(FIT)
    weights = fit.slip_weights[FIT.level]
    prior = -0.5 * FIT.theta ** 2 + np.log(weights)
    for m in (0, 1, 7):
        seen = np.isfinite(y[m])
        loglik = log_p[:, seen] @ y[m, seen] + log_q[:, seen] @ (1 - y[m, seen]) + prior
        expected = np.exp(loglik - loglik.max())
        np.testing.assert_allclose(fit.posterior[m], expected / expected.sum(), rtol=1e-8, atol=1e-12)
