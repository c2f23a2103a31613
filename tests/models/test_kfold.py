"""K-fold tuning above the model-count threshold (models/common/folds.py KFOLD_ABOVE): with K equal to the number
of models it is leave-one-out, so the K-fold code must reproduce the leave-one-out fits exactly."""
from __future__ import annotations

import numpy as np

from models.common.autotune import DefaultGrid
from models.default.goal_a import fit_abs_default
from models.common.folds import kfold_sets
from models.default.goal_b import fit_pair_default

SMALL = DefaultGrid(q=(0.0, 0.5, 1.0), nc=(1, 2, 8), m=(0.0, 0.5, 1.0))


def _data(n=9, S=120, N=30, seed=4):
    rng = np.random.default_rng(seed)
    ability = rng.normal(size=n)
    X = (rng.random((n, S)) < 1 / (1 + np.exp(-(ability[:, None] - rng.normal(size=S))))).astype(float)
    X[rng.random((n, S)) < 0.05] = np.nan
    P = [(rng.random((n, N)) < 1 / (1 + np.exp(-(ability[:, None] * w - rng.normal(size=N))))).astype(float)
         for w in (1.0, 0.6)]
    return X, P, ["t0", "t1"]


def test_kfold_sets_partition_round_robin():
    sets = kfold_sets([3, 5, 7, 8, 11], 2)
    assert [s.tolist() for s in sets] == [[3, 7, 11], [5, 8]]
    assert [s.tolist() for s in kfold_sets([1, 2], 10)] == [[1], [2]]


def test_kfold_tuning_with_k_equal_n_is_leave_one_out():
    X, P, targets = _data()
    loo = fit_abs_default(X, P, targets, count=15, grid=SMALL, B=20, kfold_above=10 ** 6)
    kfold = fit_abs_default(X, P, targets, count=15, grid=SMALL, B=20, kfold_above=2, kfold=X.shape[0])
    for t in targets:
        assert kfold.configs[t] == loo.configs[t]
        assert np.array_equal(kfold.proxies[t].cols, loo.proxies[t].cols)
        assert np.allclose(kfold.proxies[t].weight, loo.proxies[t].weight, rtol=0, atol=1e-12)
    # and a real K-fold (3 folds) still picks a grid config and a proxy within the budget
    three = fit_abs_default(X, P, targets, count=15, grid=SMALL, B=20, kfold_above=2, kfold=3)
    configs = [SMALL.config(k) for k in range(SMALL.configs().shape[0])]
    assert all(three.configs[t] in configs and 0 < len(three.proxies[t].cols) <= 15 for t in targets)


def test_kfold_pair_margins_with_k_equal_n_are_leave_one_out():
    X, P, targets = _data(seed=6)
    loo = fit_pair_default(X, P, targets, count=15, B=20, kfold_above=10 ** 6)
    kfold = fit_pair_default(X, P, targets, count=15, B=20, kfold_above=2, kfold=X.shape[0])
    for t in targets:
        assert kfold.configs[t] == loo.configs[t]
        assert kfold.platt[t] == loo.platt[t]
