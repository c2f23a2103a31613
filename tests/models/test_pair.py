"""Synthetic tests of models.compat.goal_b (compat Goal B) and models.default.goal_b (default Goal B)."""
import numpy as np
import pytest
from scipy.optimize import minimize

from models.compat import goal_a as compat
from models.compat import goal_b as pair
from models.pair import regress as pair_regress
from models.pair import pairwise
from models.common.autotune import PairGrid, pair_sweep_configs
from models.common.configs import AbsConfig, PairConfig
from models.common.metrics import pair_accuracy, sym_accuracy
from models.common.pooling import bootstrap_labels


def _synthetic(seed=0, n=14, S=600, N=(40, 60), binary=True):
    rng = np.random.default_rng(seed)
    ability = rng.normal(size=n)
    diff = rng.normal(size=S)
    p = 1 / (1 + np.exp(-(ability[:, None] - diff)))
    X = (rng.random((n, S)) < p).astype(np.float64) if binary else np.clip(p + 0.1 * rng.normal(size=(n, S)), 0, 1)
    X = X[:, X.astype(np.float32).var(axis=0) > 1e-10]
    P = []
    for Nt in N:
        d = rng.normal(size=Nt)
        P.append((rng.random((n, Nt)) < 1 / (1 + np.exp(-(ability[:, None] - d)))).astype(np.float32))
    Y = np.stack([q.mean(axis=1) for q in P], axis=1)
    return X, Y, P, ["a_target", "b_target"]


ACFG = {"a_target": AbsConfig(0.5, 3, 4, 0.5), "b_target": AbsConfig(0.3, 2, 3, 0.3)}
BCFG = {"a_target": PairConfig(0.7, 3, 4), "b_target": PairConfig(0.4, 2, 3)}


# --------------------------------------------------------------------------- kernels
def _pool_case(seed=3, k=4, B=300):
    rng = np.random.default_rng(seed)
    E = rng.normal(size=(13, k))
    P = (rng.random((13, 50)) < rng.random((13, 1))).astype(np.float32)
    Yb = bootstrap_labels(P, B, 42 + seed)
    return E, Yb


def test_soft_label_objective_identity():
    E, Yb = _pool_case()
    A, Bi = pairwise.pair_index(13)
    assert A.size == 156 and np.all(A != Bi) and A[0] == 0 and Bi[0] == 1 and A[12] == 1 and Bi[12] == 0
    Dp = E[A] - E[Bi]
    f = pairwise.soft_labels(Yb)
    Dpool, lab = pairwise.pooled_design(E, Yb)
    assert Dpool.shape == (300 * 156, 4) and lab.shape == (300 * 156,)
    np.testing.assert_allclose(lab.reshape(300, 156).mean(axis=0), f, atol=0)
    soft = pair_regress.logit_objective(Dp, f, pair_regress.ALPHA)
    pooled = pair_regress.logit_objective(Dpool, lab, pair_regress.ALPHA)
    rng = np.random.default_rng(0)
    for _ in range(5):
        w = rng.normal(size=4)
        l1, g1 = soft(w)
        l2, g2 = pooled(w)
        assert abs(l1 - l2) <= 1e-12 * max(1, abs(l2))
        np.testing.assert_allclose(g1, g2, rtol=1e-10, atol=1e-13)


def test_soft_label_fit_equals_explicit_tiled_fit():
    for seed in range(3):
        E, Yb = _pool_case(seed, k=3 + seed)
        A, Bi = pairwise.pair_index(13)
        w_soft, sk1 = pair_regress.fit_logit_soft(E[A] - E[Bi], pairwise.soft_labels(Yb))
        w_pool, sk2 = pair_regress.fit_logit_pooled(*pairwise.pooled_design(E, Yb))
        assert not sk1 and not sk2
        np.testing.assert_allclose(w_soft, w_pool, atol=1e-6, rtol=0)
        # and both are the optimum (tight reference solve)
        fun = pair_regress.logit_objective(E[A] - E[Bi], pairwise.soft_labels(Yb), pair_regress.ALPHA)
        ref = minimize(fun, np.zeros(E.shape[1]), jac=True, method="L-BFGS-B",
                       options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 1000}).x
        np.testing.assert_allclose(w_soft, ref, atol=1e-4)  # default L-BFGS-B tolerances


def test_pair_accuracy_masks_ties_and_nan():
    y = np.array([0.5, 0.5, 0.7, 0.1])
    M = np.array([[np.nan, 1.0, -1.0, 1.0],
                  [-1.0, np.nan, 1.0, np.nan],
                  [1.0, -1.0, np.nan, 0.0],
                  [-1.0, 1.0, -1.0, np.nan]])
    acc, cnt = pair_accuracy(M, y)
    # scored: (0,2) ok, (0,3) ok, (1,2) wrong, (2,0) ok, (2,1) wrong, (2,3) margin 0 -> loss: wrong,
    # (3,0) ok, (3,1) wrong, (3,2) ok ; ties (0,1),(1,0) excluded; (1,3) NaN excluded
    assert cnt == 9
    assert acc == pytest.approx(5 / 9)


def test_sweep_config_order_and_skips():
    cfg = pair_sweep_configs((1, 2, 3), (0.0, 0.5, 1.0))
    # m=0: nc_h first only (3 nc_d); m=0.5: 9; m=1: nc_d first only (3 nc_h)
    assert cfg.shape == (15, 3)
    assert cfg[:3].tolist() == [[0, 0, 0], [0, 0, 1], [0, 0, 2]]
    assert cfg[3:6].tolist() == [[1, 0, 0], [1, 0, 1], [1, 0, 2]]
    assert cfg[-3:].tolist() == [[2, 0, 0], [2, 1, 0], [2, 2, 0]]


# --------------------------------------------------------------------------- compat pipeline
def test_frozen_shapes_antisymmetry_determinism():
    X, Y, P, T = _synthetic()
    r1 = pair.loocv_pair_frozen(X, Y, P, T, count=30, B=40, configs=BCFG, a_configs=ACFG)
    r2 = pair.loocv_pair_frozen(X, Y, P, T, count=30, B=40, configs=BCFG, a_configs=ACFG, n_jobs=2)
    assert r1.margins.shape == (14, 14, 2) and r1.prob.shape == (14, 14, 2)
    np.testing.assert_array_equal(r1.margins, r2.margins)
    assert np.all(np.isnan(r1.margins[np.arange(14), np.arange(14)]))
    off = ~np.eye(14, dtype=bool)
    assert np.all(np.isfinite(r1.margins[off]))
    for t in T:
        assert 0.0 <= r1.accuracy[t] <= 1.0
    assert len(r1.selections) == 28
    for fs in r1.selections:
        assert len(set(fs.H.cols) | set(fs.D.cols)) == 30
    # fit-all: one fit → exactly antisymmetric margins
    f = pair.fit_pair(X, Y, P, T, count=30, B=40, configs=BCFG, a_configs=ACFG)
    M = f.margins[:, :, 0]
    np.testing.assert_array_equal(M[off], -M.T[off])


def test_frozen_selection_is_goal_a_selection():
    X, Y, P, T = _synthetic(4)
    a = compat.loocv_abs_frozen(X, Y, P, T, count=30, B=20, configs=ACFG)
    b = pair.loocv_pair_frozen(X, Y, P, T, count=30, B=20, configs=BCFG, a_configs=ACFG)
    sa = {(s.fold, s.target): s for s in a.selections}
    for s in b.selections:
        np.testing.assert_array_equal(s.H.cols, sa[(s.fold, s.target)].H.cols)
        np.testing.assert_array_equal(s.D.cols, sa[(s.fold, s.target)].D.cols)


def test_leakage_heldout_targets_do_not_move_its_margins():
    X, Y, P, T = _synthetic(1)
    base = pair.loocv_pair_frozen(X, Y, P, T, count=30, B=30, configs=BCFG, a_configs=ACFG)
    i = 5
    P2 = [p.copy() for p in P]
    rng = np.random.default_rng(9)
    for p in P2:
        p[i] = (rng.random(p.shape[1]) < 0.9).astype(np.float32)
    Y2 = np.stack([p.mean(axis=1) for p in P2], axis=1)
    moved = pair.loocv_pair_frozen(X, Y2, P2, T, count=30, B=30, configs=BCFG, a_configs=ACFG)
    np.testing.assert_array_equal(base.margins[i], moved.margins[i])
    assert not np.array_equal(base.margins[(i + 1) % 14], moved.margins[(i + 1) % 14])


def test_degenerate_fold_gives_zero_margins_predicted_loss():
    X, Y, P, T = _synthetic(2)
    # target b: every model identical except model 0 (better) → fold 0 trains on identical labels
    rng = np.random.default_rng(5)
    row = (rng.random(60) < 0.4).astype(np.float32)
    Pb = np.tile(row, (14, 1))
    Pb[0] = 1.0
    P = [P[0], Pb]
    Y = np.stack([q.mean(axis=1) for q in P], axis=1)
    r = pair.loocv_pair_frozen(X, Y, P, T, count=30, B=30, configs=BCFG, a_configs=ACFG)
    assert (0, "b_target", "H", 2) in r.skipped and (0, "b_target", "D", 3) in r.skipped
    np.testing.assert_array_equal(r.margins[0, 1:, 1], 0.0)
    assert not np.any(r.pred_winner()[0, 1:, 1])  # zero margin = predicted loss (published)
    # only pairs involving model 0 are untied: 13 (row 0, all wrong) + 13 (column 0)
    assert r.count["b_target"] == 26
    assert r.accuracy["b_target"] <= 0.5


def test_autotune_small_grid_picks_first_best():
    X, Y, P, T = _synthetic(3)
    r = pair.loocv_pair_autotune(X, Y, P, T, count=30, B=20, nc_max=3, m_grid=(0.0, 0.5, 1.0),
                                 a_q_grid=(0.0, 0.5, 1.0))
    for t_i, t in enumerate(T):
        c = r.configs[t]
        assert r.sweep[t] == pytest.approx(r.accuracy[t])
        # recompute this config with the frozen path (same pinned selection rules when both pinned)
        if all(r.pinned[t]):
            f = pair.loocv_pair_frozen(X, Y, P, T, count=30, B=20, configs={tt: c for tt in T},
                                       a_configs=r.a_configs)
            np.testing.assert_allclose(f.margins[:, :, t_i], r.margins[:, :, t_i], rtol=1e-12, atol=1e-12)


def test_fit_pair_linear_form_reproduces_margins():
    X, Y, P, T = _synthetic(6, binary=False)
    cfg = {"a_target": PairConfig(0.6, 2, 3), "b_target": PairConfig(0.3, 3, 2)}
    f = pair.fit_pair(X, Y, P, T, count=30, B=30, configs=cfg, a_configs=ACFG)
    off = ~np.eye(14, dtype=bool)
    for t_i, t in enumerate(T):
        lin = f.proxies[t].margins(X)
        M = f.margins[:, :, t_i]
        np.testing.assert_allclose(lin[off], M[off], rtol=1e-9, atol=1e-9 * np.abs(M[off]).max())
        a, b = f.platt[t]
        assert (f.proxies[t].a, f.proxies[t].b) == (a, b)


# --------------------------------------------------------------------------- default Goal B
from models.default import goal_b as pdm  # noqa: E402


def _fP(P):
    return [p.astype(np.float64) for p in P]


def test_newton_solver_is_the_optimum():
    E, Yb = _pool_case(7, k=5)
    A, Bi = pairwise.pair_index(13)
    f = pairwise.soft_labels_half(Yb)
    np.testing.assert_allclose(f + pairwise.soft_labels_half(Yb)[_swap_index(13)], 1.0)
    w = pair_regress.fit_logit_newton(E[A] - E[Bi], f)
    fun = pair_regress.logit_objective(E[A] - E[Bi], f, pair_regress.ALPHA)
    ref = minimize(fun, np.zeros(5), jac=True, method="L-BFGS-B",
                   options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 1000}).x
    np.testing.assert_allclose(w, ref, atol=1e-6)
    assert np.max(np.abs(fun(w)[1])) < 1e-10


def _swap_index(m):
    A, Bi = pairwise.pair_index(m)
    pos = {(a, b): p for p, (a, b) in enumerate(zip(A.tolist(), Bi.tolist()))}
    return np.array([pos[(b, a)] for a, b in zip(A.tolist(), Bi.tolist())])


GRID = PairGrid(q=(0.5,), nc=(1, 2), m=(0.0, 0.5, 1.0))


def test_default_shapes_antisymmetry_determinism():
    X, Y, P, T = _synthetic(11)
    r1 = pdm.loocv_pair_default(X, _fP(P), T, count=30, B=30, grid=GRID)
    r2 = pdm.loocv_pair_default(X, _fP(P), T, count=30, B=30, grid=GRID, n_jobs=2)
    np.testing.assert_array_equal(r1.margins, r2.margins)
    off = ~np.eye(14, dtype=bool)
    for t_i in range(2):
        M, Pr = r1.margins[:, :, t_i], r1.prob[:, :, t_i]
        np.testing.assert_array_equal(M[off], -M.T[off])
        np.testing.assert_allclose(Pr[off] + Pr.T[off], 1.0, atol=1e-12)
        assert 0 <= r1.accuracy[T[t_i]] <= 1
    for (i, t), (a, b) in r1.fold_platt.items():
        assert np.isfinite(a) and np.isfinite(b)


def test_default_leakage_heldout_targets_do_not_move_its_predictions():
    X, Y, P, T = _synthetic(12)
    base = pdm.loocv_pair_default(X, _fP(P), T, count=30, B=30, grid=GRID)
    i = 4
    P2 = [p.copy() for p in P]
    rng = np.random.default_rng(3)
    for p in P2:
        p[i] = (rng.random(p.shape[1]) < 0.95).astype(np.float32)
    moved = pdm.loocv_pair_default(X, _fP(P2), T, count=30, B=30, grid=GRID)
    # fold i: config, margins and the cross-fitted Platt use only the other models' targets
    np.testing.assert_array_equal(base.directed_margins[i], moved.directed_margins[i])
    np.testing.assert_array_equal(base.directed_prob[i], moved.directed_prob[i])
    for t in T:
        assert base.fold_configs[(i, t)] == moved.fold_configs[(i, t)]
        assert base.fold_platt[(i, t)] == moved.fold_platt[(i, t)]


def test_default_degenerate_fold_is_neutral():
    X, Y, P, T = _synthetic(13)
    rng = np.random.default_rng(5)
    row = (rng.random(60) < 0.4).astype(np.float32)
    Pb = np.tile(row, (14, 1))
    Pb[0] = 1.0
    P = [P[0], Pb]
    r = pdm.loocv_pair_default(X, _fP(P), T, count=30, B=30, grid=GRID)
    # fold 0 trains on 13 identical models: soft labels all 1/2 → w = 0 → margin 0, p = 1/2
    np.testing.assert_array_equal(r.directed_margins[0, 1:, 1], 0.0)
    np.testing.assert_allclose(r.directed_prob[0, 1:, 1], 0.5)
    # the 13 untied unordered pairs {0, j}: fold j's margin decides (averaged), never a forced loss
    assert r.count["b_target"] == 13
    acc_zero_only = sym_accuracy(np.zeros((14, 14)), r.actual[:, 1])[0][0]
    assert acc_zero_only == 0.5  # all-neutral predictions score exactly 1/2


def test_default_missing_targets_are_excluded():
    X, Y, P, T = _synthetic(14)
    P = _fP(P)
    P[1][3] = np.nan
    r = pdm.loocv_pair_default(X, P, T, count=30, B=30, grid=GRID)
    assert r.excluded["b_target"] == ["model_3"]
    assert r.count["b_target"] <= 13 * 12 // 2  # unordered pairs among the 13 valid models
    # the model without a target value is still predicted (a new model), but never scored
    assert np.all(np.isfinite(np.delete(r.directed_margins[3, :, 1], 3)))
    M = r.directed_margins[:, :, 1].copy()
    M[3, :] = -M[3, :]
    M[:, 3] = -M[:, 3]
    assert sym_accuracy(M, r.actual[:, 1])[0][0] == r.accuracy["b_target"]


def test_default_fit_linear_form_reproduces_in_sample_margins():
    X, Y, P, T = _synthetic(15, binary=False)
    Xn = X.copy()
    Xn[2, :7] = np.nan  # missing scores are imputed by the training column mean
    f = pdm.fit_pair_default(Xn, _fP(P), T, count=30, B=30, grid=GRID)
    off = ~np.eye(14, dtype=bool)
    for t_i, t in enumerate(T):
        prox = f.proxies[t]
        lin = prox.margins(Xn)
        M = f.directed_margins[:, :, t_i]
        assert np.abs(M[off]).max() > 0
        np.testing.assert_allclose(lin[off], M[off], rtol=0, atol=1e-9)
        np.testing.assert_allclose(prox.prob(Xn)[off], f.prob[:, :, t_i][off], atol=1e-9)
        assert np.all(np.diff(prox.cols) > 0) and prox.cols.size <= 30
