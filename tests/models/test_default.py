"""``models.default.goal_a``: honest (nested, inductive, masked, deterministic) Goal A method."""
from __future__ import annotations

import numpy as np
import pytest

from models.common.autotune import DefaultGrid
from models.default.basis import TrainingBasis
from models.common.configs import AbsConfig
from models.default.goal_a import fit_abs_default, loocv_abs_default
from models.default.goal_a_fold import AbsTargetFit
from models.common.inputs import target_means
from models.common.results import AbsResult

SMALL = DefaultGrid(q=(0.0, 0.5, 1.0), nc=(1, 2, 8), m=(0.0, 0.5, 1.0))


def make_data(n=9, S=240, T=2, N=40, seed=0, leaf=40):
    """Latent-ability toy data: binary sources, binary targets; NaN = missing."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    diff = rng.normal(size=S)
    X = (rng.random((n, S)) < 1 / (1 + np.exp(-(a[:, None] * 1.5 - diff)))).astype(float)
    P = []
    for t in range(T):
        d = rng.normal(size=N)
        P.append((rng.random((n, N)) < 1 / (1 + np.exp(-(a[:, None] * (1 + t) - d)))).astype(float))
    X[n - 1, :leaf] = np.nan  # the last model misses a whole "leaf"
    X[1, 100:103] = np.nan
    P[0][2, :3] = np.nan
    return X, P, [f"t{t}" for t in range(T)]


def run(X, P, targets, **kw):
    kw.setdefault("count", 20)
    kw.setdefault("grid", SMALL)
    kw.setdefault("B", 50)
    kw.setdefault("missing", "mask")  # the masked treatment; "zero" / "auto" are tested explicitly
    return loocv_abs_default(X, P, targets, **kw)


def test_result_is_absresult_and_deterministic():
    X, P, targets = make_data()
    r1 = run(X, P, targets)
    r2 = run(X, P, targets, n_jobs=2)
    assert isinstance(r1, AbsResult)
    assert r1.pred.shape == (X.shape[0], len(targets))
    assert np.isfinite(r1.pred).all()
    np.testing.assert_array_equal(r1.pred, r2.pred)
    assert r1.fold_configs == r2.fold_configs
    tab = r1.selection_table()
    assert set(tab) >= {"fold", "target", "side", "col_idx", "weight"}


def test_target_means_mask_missing():
    P = np.array([[1.0, np.nan, 0.0], [np.nan, np.nan, np.nan]])
    y = target_means(P)
    assert y[0] == 0.5 and np.isnan(y[1])


def test_nan_target_model_excluded_and_reported():
    X, P, targets = make_data()
    P[1][4, :] = np.nan
    r = run(X, P, targets)
    assert np.isnan(r.actual[4, 1])
    assert r.excluded["t1"] == ["model_4"]
    assert r.metrics["t1"]["n"] == X.shape[0] - 1
    assert np.isfinite(r.pred[4, 1])  # still predicted


def test_heldout_target_does_not_leak_nested():
    X, P, targets = make_data()
    i = 3
    r1 = run(X, P, targets)
    P2 = [p.copy() for p in P]
    for p in P2:
        p[i] = 1.0 - np.nan_to_num(p[i])  # flip every target instance of model i
    r2 = run(X, P2, targets)
    np.testing.assert_array_equal(r1.pred[i], r2.pred[i])
    for t in targets:
        assert r1.fold_configs[(i, t)] == r2.fold_configs[(i, t)]
    s1 = [s for s in r1.selections if s.fold == i]
    s2 = [s for s in r2.selections if s.fold == i]
    for a, b in zip(s1, s2):
        np.testing.assert_array_equal(a.H.cols, b.H.cols)
        np.testing.assert_array_equal(a.D.cols, b.D.cols)


def test_heldout_sources_do_not_shape_basis():
    X, P, targets = make_data()
    i = 2
    rows = np.asarray([j for j in range(X.shape[0]) if j != i])
    X2 = X.copy()
    obs = ~np.isnan(X2[i])
    X2[i, obs] = 1.0 - X2[i, obs]  # same missing pattern, different scores
    b1 = TrainingBasis(X, rows, np.asarray([i]), 0.75)
    b2 = TrainingBasis(X2, rows, np.asarray([i]), 0.75)
    np.testing.assert_array_equal(b1.rep_cols, b2.rep_cols)
    np.testing.assert_array_equal(b1.Vr, b2.Vr)
    r1, r2 = run(X, P, targets), run(X2, P, targets)
    for t in targets:
        assert r1.fold_configs[(i, t)] == r2.fold_configs[(i, t)]
    for a, b in zip([s for s in r1.selections if s.fold == i], [s for s in r2.selections if s.fold == i]):
        np.testing.assert_array_equal(a.H.cols, b.H.cols)
        np.testing.assert_array_equal(a.D.cols, b.D.cols)
        np.testing.assert_allclose(a.D.weight, b.D.weight)


def test_missing_leaf_is_masked_not_zero():
    X, P, targets = make_data(leaf=40)
    j = X.shape[0] - 1
    r = run(X, P, targets)
    for s in r.selections:
        if s.fold == j:  # predicting j only uses instances j has
            assert not np.isin(np.r_[s.H.cols, s.D.cols], np.arange(40)).any()
    f = fit_abs_default(X, P, targets, count=20, grid=SMALL, B=50, missing="mask")
    for prox in f.proxies.values():
        for c, mu in zip(prox.cols, prox.centre):
            rows = [k for k in range(X.shape[0]) if k in set(range(X.shape[0]))]
            assert mu == pytest.approx(np.nanmean(X[rows, c]))
    # the zero-filled version is a different problem (the missing leaf would be "failures")
    rz = run(np.nan_to_num(X), P, targets)
    assert not np.array_equal(rz.pred[j], r.pred[j])


def test_rank_truncation_no_blowup():
    rng = np.random.default_rng(3)
    n = 9
    base = (rng.random((n, 3)) < 0.5).astype(float)
    X = np.repeat(base, 30, axis=1) + 0.0  # rank ≤ 3, heavy duplication
    X = np.hstack([X, (rng.random((n, 20)) < 0.5).astype(float)])
    P = [(rng.random((n, 30)) < 0.5).astype(float)]
    cfg = {"t0": AbsConfig(m=1.0, nc_h=8, nc_d=8, q=1.0)}
    r = run(X, P, ["t0"], config=cfg)
    assert np.isfinite(r.pred).all()
    assert ((r.pred >= 0) & (r.pred <= 1)).all()
    f = fit_abs_default(X, P, ["t0"], count=20, grid=SMALL, config=cfg, B=50, missing="mask")
    assert np.abs(f.proxies["t0"].weight).max() < 1e3


def test_identical_columns_deduplicated():
    X, P, targets = make_data()
    S = X.shape[1]
    X2 = np.hstack([X, X[:, 50:120]])  # exact copies at the end
    cfg = {t: AbsConfig(m=1.0, nc_h=2, nc_d=1, q=1.0) for t in targets}  # H side only
    r1, r2 = run(X, P, targets, config=cfg), run(X2, P, targets, config=cfg)
    np.testing.assert_allclose(r1.pred, r2.pred, atol=1e-12)
    for s in run(X2, P, targets).selections:
        assert (np.r_[s.H.cols, s.D.cols] < S).all()  # the first copy represents the group
    b = TrainingBasis(X2, np.arange(X.shape[0] - 1), np.zeros(0, np.int64), 0.75)
    assert b.mult.sum() == b.cols.size and b.mult.max() >= 2


def test_linear_form_reproduces_fit():
    X, P, targets = make_data()
    f = fit_abs_default(X, P, targets, count=20, grid=SMALL, B=50, missing="mask")
    n = X.shape[0]
    for t_i, t in enumerate(targets):
        prox = f.proxies[t]
        rows = np.flatnonzero(np.isfinite(f.actual[:, t_i]))
        bs = TrainingBasis(X, rows, np.zeros(0, np.int64), 0.75)
        tf = AbsTargetFit(bs, f.actual[rows, t_i], bs.centred(X, np.arange(n)), SMALL, 20)
        lo, hi = prox.lo, prox.hi
        internal = np.clip(tf.all_configs()[SMALL.index(prox.config)], lo, hi)
        np.testing.assert_allclose(prox.predict(X), internal, rtol=0, atol=1e-9)
        np.testing.assert_allclose(f.pred[:, t_i], internal, rtol=0, atol=1e-9)
        # one model at a time, as a stored proxy would see it
        for z in range(n):
            assert abs(prox.predict(X[z])[0] - internal[z]) < 1e-9
        assert (np.diff(prox.cols) > 0).all() and prox.cols.size <= 20
        assert 0.0 <= lo <= hi <= 1.0


def test_nested_false_uses_one_config_per_target():
    X, P, targets = make_data()
    r = run(X, P, targets, nested=False)
    for t in targets:
        assert len({r.fold_configs[(i, t)] for i in range(X.shape[0])}) == 1


def test_nested_compat_config_ignores_heldout_target():
    from models.compat.nested import loocv_abs_autotune_nested

    X, P, targets = make_data(n=7, S=120, T=1, N=30)
    Xz = np.nan_to_num(X)
    Xz = Xz[:, Xz.astype(np.float32).var(axis=0) > 1e-10]
    P32 = [np.nan_to_num(p).astype(np.float32) for p in P]
    Y = np.stack([p.mean(axis=1) for p in P32], axis=1)
    kw = dict(count=10, B=20, q_grid=[0.0, 0.5, 1.0], nc_max=3, m_grid=(0.0, 0.5, 1.0))
    r1 = loocv_abs_autotune_nested(Xz, Y, P32, targets, **kw)
    i = 2
    P2 = [p.copy() for p in P32]
    P2[0][i] = 1.0 - P2[0][i]
    Y2 = np.stack([p.mean(axis=1) for p in P2], axis=1)
    r2 = loocv_abs_autotune_nested(Xz, Y2, P2, targets, **kw)
    assert r1.warnings[i] == r2.warnings[i]  # fold i's chosen config
    np.testing.assert_array_equal(r1.pred[i], r2.pred[i])
    assert np.isfinite(r1.pred).all()


def test_missing_zero_is_zero_filled_input():
    X, P, targets = make_data()
    r = run(X, P, targets, missing="zero")
    rz = run(np.nan_to_num(X), P, targets)
    np.testing.assert_array_equal(r.pred, rz.pred)
    assert set(r.fold_missing.values()) == {"zero"}


def test_missing_auto_is_nested_and_reproducible():
    X, P, targets = make_data()
    i = 3
    r1 = run(X, P, targets, missing="auto")
    assert set(r1.fold_missing.values()) <= {"mask", "zero"}
    P2 = [p.copy() for p in P]
    for p in P2:
        p[i] = 1.0 - np.nan_to_num(p[i])
    r2 = run(X, P2, targets, missing="auto")
    np.testing.assert_array_equal(r1.pred[i], r2.pred[i])
    for t in targets:
        assert r1.fold_missing[(i, t)] == r2.fold_missing[(i, t)]
        assert r1.fold_configs[(i, t)] == r2.fold_configs[(i, t)]
    # a ranking-weighted objective is a valid tuning objective too
    r3 = run(X, P, targets, missing="auto", rank_weight=3.0)
    assert np.isfinite(r3.pred).all()
    with pytest.raises(ValueError):
        run(X, P, targets, missing="nan")


@pytest.mark.parametrize("missing", ["zero", "auto"])
def test_linear_form_reproduces_fit_with_fill(missing):
    X, P, targets = make_data()
    f = fit_abs_default(X, P, targets, count=20, grid=SMALL, B=50, missing=missing)
    n = X.shape[0]
    for t_i, t in enumerate(targets):
        prox = f.proxies[t]
        assert prox.missing == f.missing[t]
        Xf = np.nan_to_num(X) if prox.missing == "zero" else X
        rows = np.flatnonzero(np.isfinite(f.actual[:, t_i]))
        bs = TrainingBasis(Xf, rows, np.zeros(0, np.int64), 0.75)
        tf = AbsTargetFit(bs, f.actual[rows, t_i], bs.centred(Xf, np.arange(n)), SMALL, 20)
        internal = np.clip(tf.all_configs()[SMALL.index(prox.config)], prox.lo, prox.hi)
        np.testing.assert_allclose(prox.predict(X), internal, rtol=0, atol=1e-9)
        np.testing.assert_allclose(f.pred[:, t_i], internal, rtol=0, atol=1e-9)
        for z in range(n):  # a raw row with its NaNs, one model at a time
            assert abs(prox.predict(X[z])[0] - internal[z]) < 1e-9
    fz = fit_abs_default(X, P, targets, count=20, grid=SMALL, B=50, missing="zero")
    assert all(p.fill is not None and (p.fill == 0).all() for p in fz.proxies.values())
    # a model missing the whole first leaf: zero mode treats it as failures there
    assert any(np.isin(p.cols, np.arange(40)).any() for p in fz.proxies.values())
