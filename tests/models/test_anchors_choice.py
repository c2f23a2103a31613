"""models.anchors: the choice of the next anchors (adaptive, never a repeat, cost-aware), the baselines of
the spec, the priors and the conformal widening."""
from __future__ import annotations

import numpy as np
import pytest

from models.anchors import (ability_grid, estimate_full_mean, invert_mean_curve, next_anchors, normal_log_prior,
                            random_draws, regression_prior, stratified_draws)
from models.anchors.baselines import strata
from models.anchors.calibration import conformal_factor, interval_scores, widen
from models.anchors.choice import variance_path
from models.anchors.items import ItemParams
from models.anchors.simulate import simulate_2pl

GRID = ability_grid()


@pytest.fixture(scope="module")
def population():
    return simulate_2pl(models=40, items=120, seed=7)


def test_adaptive_batches_never_repeat_an_item_and_stay_in_the_models_items(population):
    params, y = population.params, population.y[0]
    members = np.ones(y.size, bool)
    members[::7] = False
    observed = np.zeros(y.size, bool)
    seen: list[int] = []
    for _ in range(8):
        batch = next_anchors(params, GRID, normal_log_prior(GRID), y, observed, members, 5)
        assert batch.size == 5
        assert not observed[batch].any() and members[batch].all()
        assert len(set(batch.tolist())) == 5
        observed[batch] = True
        seen += batch.tolist()
    assert len(seen) == len(set(seen))
    rest = next_anchors(params, GRID, normal_log_prior(GRID), y, observed, members, 500)
    assert rest.size == members.sum() - observed.sum()       # fewer remain than asked: all of them, once


def test_the_variance_path_falls_as_anchors_are_added_and_ends_at_zero(population):
    """The linearised variance left after the first k planned anchors: non-increasing along the greedy order,
    and 0 once every item is run (nothing is left to estimate). It is what `pace plan --target-width`
    projects the interval with."""
    params, y = population.params, population.y[3]
    members = np.ones(y.size, bool)
    observed = np.zeros(y.size, bool)
    observed[:4] = True
    prior = normal_log_prior(GRID)
    order = next_anchors(params, GRID, prior, y, observed, members, 500)
    path = variance_path(params, GRID, prior, y, observed, members, order)
    assert path.shape == (order.size + 1,) and path[0] > 0
    assert np.all(np.diff(path) <= 1e-15) and path[-1] == pytest.approx(0, abs=1e-12)
    assert path[10] < 0.5 * path[0]                       # the first anchors buy most of the narrowing


def test_the_next_batch_follows_the_posterior(population):
    params = population.params
    members = np.ones(params.a.size, bool)
    observed = np.zeros(params.a.size, bool)
    observed[:10] = True
    weak = next_anchors(params, GRID, normal_log_prior(GRID), np.zeros(params.a.size), observed, members, 5)
    strong = next_anchors(params, GRID, normal_log_prior(GRID), np.ones(params.a.size), observed, members, 5)
    assert params.b[weak].mean() < params.b[strong].mean()   # a model that failed gets easier items


def test_adaptive_anchors_beat_random_ones_on_simulated_models():
    pop = simulate_2pl(models=40, items=300, seed=2)
    plain = ability_grid(slips=(0.0,))
    prior = normal_log_prior(plain)
    rng = np.random.default_rng(0)
    members = np.ones(300, bool)
    err_adaptive, err_random = [], []
    for r in range(40):
        y = pop.y[r]
        observed = np.zeros(300, bool)
        for _ in range(4):
            observed[next_anchors(pop.params, plain, prior, y, observed, members, 5)] = True
        chosen = np.zeros(300, bool)
        chosen[rng.choice(300, 20, replace=False)] = True
        truth = y.mean()
        for obs, errs in ((observed, err_adaptive), (chosen, err_random)):
            errs.append(abs(estimate_full_mean(pop.params, plain, prior, y, obs, members).mean[0] - truth))
    assert np.mean(err_adaptive) < np.mean(err_random)


def test_cost_aware_choice_prefers_the_cheaper_of_two_equal_items():
    params = ItemParams(np.array([1.0, 1.0, 1.0]), np.array([0.0, 0.0, 3.0]))
    members = np.ones(3, bool)
    none = np.zeros(3, bool)
    plain = ability_grid(slips=(0.0,))
    assert next_anchors(params, plain, normal_log_prior(plain), np.zeros(3), none, members, 1)[0] == 0
    cheap_second = next_anchors(params, plain, normal_log_prior(plain), np.zeros(3), none, members, 1,
                                cost=np.array([5.0, 1.0, 1.0]))
    assert cheap_second[0] == 1


def test_random_and_stratified_baselines():
    rng = np.random.default_rng(1)
    y = (np.arange(100) % 3 == 0).astype(float)
    members = np.ones(100, bool)
    members[90:] = False
    d = random_draws(y, members, 10, 50, rng)
    assert d.items.shape == (50, 10) and members[d.items].all()
    assert all(len(set(row.tolist())) == 10 for row in d.items)
    assert np.allclose(d.estimate, y[d.items].mean(1))
    assert np.all((d.low <= d.estimate) & (d.estimate <= d.high))
    solve = np.linspace(0, 1, 100)
    cut = strata(solve, members, 9)
    assert [c.size for c in cut] == [10] * 9 and np.all(np.diff([solve[c].mean() for c in cut]) > 0)
    s = stratified_draws(y, members, solve, 9, 50, rng)
    for row in s.items:                                          # one item per stratum
        assert sorted(int(np.flatnonzero([j in c for c in cut])[0]) for j in row) == list(range(9))
    everything = stratified_draws(y, members, solve, 90, 3, rng)  # one item per stratum of one: the exact mean
    assert np.allclose(everything.estimate, y[:90].mean())


def test_invert_and_regression_priors():
    theta = np.linspace(-6, 6, 121)
    curve = np.clip((theta + 6) / 12, 0, 1)
    assert invert_mean_curve(theta, curve, 0.5) == pytest.approx(0.0)
    assert invert_mean_curve(theta, curve, 2.0) == pytest.approx(6.0)       # clamped to the grid's end
    rng = np.random.default_rng(4)
    x = rng.normal(size=(40, 2))
    theta = 0.8 * x[:, 0] - 0.3 * x[:, 1] + rng.normal(0, 0.1, 40)
    mean, sd = regression_prior(x, theta, np.array([[1.0, 0.0], [-1.0, 0.0]]), ridge=0.01)
    assert mean[0] == pytest.approx(0.8, abs=0.1) and mean[1] == pytest.approx(-0.8, abs=0.1)
    assert 0.05 < sd < 0.2


def test_conformal_widening():
    scores = interval_scores(np.array([0.5, 0.5, 0.5]), np.array([0.4, 0.4, 0.4]), np.array([0.7, 0.7, 0.7]),
                             np.array([0.6, 0.3, 0.5]))
    assert np.allclose(scores, [0.5, 2.0, 0.0])
    assert conformal_factor(np.arange(1.0, 10.0), 0.8) == 8.0       # ceil(10 * 0.8) = 8th smallest
    assert conformal_factor(np.array([1.0, 2.0]), 0.8) == np.inf    # too few for 80 %
    low, high = widen(np.array([0.5]), np.array([0.4]), np.array([0.7]), 2.0)
    assert low[0] == pytest.approx(0.3) and high[0] == pytest.approx(0.9)
