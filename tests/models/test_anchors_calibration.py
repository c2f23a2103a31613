"""The anchors estimator's interval calibration (models.anchors.target): the training range, the inner folds
with the extreme groups, the pooled factors and the out-of-range factor. Synthetic data only."""
from __future__ import annotations

import numpy as np
import pytest

from models.anchors.calibration import conformal_factor
from models.anchors.simulate import simulate_2pl
from models.anchors.target import (Prior, estimate, fit_target, model_factor, pool_factors, scored_members,
                                   training_range)


def test_the_training_range_is_the_second_lowest_and_highest_mean_over_each_models_own_items():
    y = np.array([[0, 0, np.nan], [1, 0, 0], [1, 1, 0], [1, 1, np.nan], [1, 1, 1.0]])   # means 0, 1/3, 2/3, 1, 1
    assert training_range(y) == pytest.approx((1 / 3, 1.0))
    assert training_range(y[:3]) == (-np.inf, np.inf)                   # too few models to trim one


def _with_scores(model, scores):
    model.scores = scores
    return model


def test_pooled_factors_use_every_targets_scores_and_the_outside_factor_is_never_below_the_pooled_one():
    base = fit_target(simulate_2pl(models=8, items=20, seed=1).y, [f"m{i}" for i in range(8)],
                      np.full((8, 1), np.nan), ks=(0,), inner_folds=1)
    a = _with_scores(base, {0: ([0.5, 0.9, 1.1], [3.0, 4.0, 5.0, 6.0])})
    b = _with_scores(fit_target(simulate_2pl(models=8, items=20, seed=2).y, [f"m{i}" for i in range(8)],
                                np.full((8, 1), np.nan), ks=(0,), inner_folds=1), {0: ([0.2, 0.3, 0.4, 0.6], [])})
    pool_factors([a, b])
    every = [0.5, 0.9, 1.1, 3.0, 4.0, 5.0, 6.0, 0.2, 0.3, 0.4, 0.6]
    assert a.factors == b.factors == {0: conformal_factor(np.array(every), 0.8)}
    assert a.factors_outside[0] == b.factors_outside[0] == max(conformal_factor(np.array([3.0, 4, 5, 6]), 0.8),
                                                               a.factors[0])
    # alone, b has no outside score: the pooled factor; with too few for the level, their largest
    pool_factors([b])
    assert b.factors_outside == b.factors == {0: conformal_factor(np.array([0.2, 0.3, 0.4, 0.6]), 0.8)}
    b.scores = {0: ([0.2, 0.3, 0.4, 0.6], [2.5, 1.5])}
    pool_factors([b])
    assert b.factors_outside == {0: 2.5}


def test_an_estimate_outside_the_training_range_takes_the_outside_factor():
    pop = simulate_2pl(models=8, items=30, seed=4)
    model = fit_target(pop.y, [f"m{i}" for i in range(8)], np.full((8, 1), np.nan), ks=(0, 5), inner_folds=1)
    model.factors, model.factors_outside = {0: 1.0, 5: 0.5}, {0: 3.0, 5: 1.0}
    model.range_lo, model.range_hi = 0.3, 0.7
    assert model_factor(model, 7, 0.5) == 0.5 and model_factor(model, 7, 0.8) == 1.0
    assert model_factor(model, 2, 0.1) == 3.0 and model_factor(model, 2, None) == 1.0   # None: in range
    y = pop.y[0]
    observed = np.zeros(y.size, bool)
    observed[:6] = True
    prior = Prior(0.0, 1.0, "population")
    point, _, _ = estimate(model, prior, y, observed)
    model.range_lo, model.range_hi = point - 0.01, point + 0.01               # inside
    inside = estimate(model, prior, y, observed)
    model.range_lo, model.range_hi = point + 0.01, 1.0                         # below the range
    outside = estimate(model, prior, y, observed)
    assert inside[0] == outside[0] == point
    assert 0 < outside[1] < inside[1] < point < inside[2] < outside[2] < 1       # neither side clipped
    assert point - outside[1] == pytest.approx(2 * (point - inside[1]), rel=1e-9)   # factor 1.0 against 0.5
    assert outside[2] - point == pytest.approx(2 * (inside[2] - point), rel=1e-9)

def test_fitting_learns_from_the_extreme_groups_and_widens_out_of_range_estimates_at_least_as_much():
    pop = simulate_2pl(models=16, items=40, seed=5)
    model = fit_target(pop.y, [f"m{i:02d}" for i in range(16)], np.full((16, 1), np.nan), ks=(0, 5))
    outside = sum(len(v[1]) for v in model.scores.values())
    assert outside >= 2                     # the weakest / strongest three estimated off their inner range
    assert sum(len(v[0]) + len(v[1]) for v in model.scores.values()) >= 2 * 16
    assert all(model.factors_outside[k] >= model.factors[k] for k in model.factors)
    lo, hi = training_range(pop.y)
    assert (model.range_lo, model.range_hi) == (lo, hi)


def test_a_large_inner_group_is_scored_on_evenly_spaced_members_and_a_small_one_whole():
    small = list(range(7, 47))                     # 40 members: every one (every real-data fit is this case)
    assert scored_members(small) == small
    big = list(range(100, 300))                    # 200 members (a 1,000-model fit's inner fold)
    picked = scored_members(big)
    assert len(picked) == 40 == len(set(picked)) and picked[0] == 100 and picked[-1] == 299
    assert picked == sorted(picked) and max(np.diff(picked)) - min(np.diff(picked)) <= 1
    assert scored_members(big) == picked           # deterministic


def test_the_inner_groups_on_threads_give_the_scores_of_one_thread():
    pop = simulate_2pl(models=16, items=40, seed=5)
    names, features = [f"m{i:02d}" for i in range(16)], np.full((16, 1), np.nan)
    one = fit_target(pop.y, names, features, ks=(0, 5), n_jobs=1)
    two = fit_target(pop.y, names, features, ks=(0, 5), n_jobs=2)
    assert one.scores.keys() == two.scores.keys()
    for k in one.scores:           # same scores in the same order (BLAS threads may move the last digits)
        assert len(one.scores[k][0]) + len(one.scores[k][1]) > 0
        for mine, theirs in zip(one.scores[k], two.scores[k]):
            assert len(mine) == len(theirs)
            np.testing.assert_allclose(mine, theirs, rtol=1e-9)
    assert one.factors == pytest.approx(two.factors, rel=1e-9)
