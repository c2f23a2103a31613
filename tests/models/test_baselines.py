"""``models.baselines``: LOOCV baselines on the ``default`` inputs (NaN = missing)."""
from __future__ import annotations

import numpy as np

from models.baselines import (benchmark_averages, loocv_benchmark_ridge, loocv_random_c,
                              loocv_train_mean)
from models.common.results import AbsResult
from tests.models.test_default import make_data


def bench_names(S):
    return [f"b{k // 60}" for k in range(S)]


def test_train_mean_is_mean_of_others():
    X, P, targets = make_data()
    r = loocv_train_mean(X, P, targets)
    assert isinstance(r, AbsResult)
    y = r.actual[:, 0]
    for i in range(X.shape[0]):
        others = [j for j in range(X.shape[0]) if j != i and np.isfinite(y[j])]
        assert r.pred[i, 0] == np.float64(np.clip(y[others].mean(), 0, 1))


def test_baselines_do_not_leak_heldout_target_and_are_deterministic():
    X, P, targets = make_data()
    i = 4
    P2 = [p.copy() for p in P]
    for p in P2:
        p[i] = 1.0 - np.nan_to_num(p[i])
    names = bench_names(X.shape[1])
    for fn, kw in ((loocv_random_c, {"count": 20}), (loocv_benchmark_ridge, {"benchmarks": names})):
        a, b, c = fn(X, P, targets, **kw), fn(X, P2, targets, **kw), fn(X, P, targets, **kw)
        np.testing.assert_array_equal(a.pred[i], b.pred[i])
        np.testing.assert_array_equal(a.pred, c.pred)
        assert np.isfinite(a.pred).all() and ((a.pred >= 0) & (a.pred <= 1)).all()
        assert a.metrics["AVERAGE"]["mae"] < 0.5


def test_benchmark_averages_ignore_missing():
    X = np.array([[1.0, np.nan, 0.0], [np.nan, np.nan, 1.0]])
    F, names = benchmark_averages(X, ["a", "a", "b"])
    assert names == ["a", "b"]
    assert F[0, 0] == 1.0 and np.isnan(F[1, 0]) and F[1, 1] == 1.0


def test_nan_target_excluded():
    X, P, targets = make_data()
    P[0][5] = np.nan
    r = loocv_random_c(X, P, targets, count=10, draws=3)
    assert r.excluded["t0"] == ["model_5"] and r.metrics["t0"]["n"] == X.shape[0] - 1
