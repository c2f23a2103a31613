import numpy as np
import pytest

from models.common.pooling import (bootstrap_labels, fit_seed, loocv_seed, no_bootstrap_stats,
                            pooled_stats)
from models.common.regress import goal_a_predict, mix, ols_predict, prefix_weights, spearman_weights
from models.common.spearman import spearman_columns


def test_seeds():
    assert loocv_seed(42, 3, 2) == 42 + 997 * 3 + 31 * 2
    assert fit_seed(42, 3) == 42 + 93


def test_bootstrap_labels_match_literal_draws():
    rng = np.random.default_rng(0)
    P = (rng.random((13, 57)) < 0.4).astype(np.float32)
    Yb = bootstrap_labels(P, 25, 1234)
    r = np.random.RandomState(1234)
    for b in range(25):
        idx = r.choice(57, 57, replace=True)
        np.testing.assert_array_equal(Yb[b], P[:, idx].mean(axis=1))
    assert Yb.dtype == np.float32


def _naive_goal_a(U_tr, U_new, Yb):
    """Literal §7 on the B·m tiled pool."""
    B, m = Yb.shape
    Up = np.tile(U_tr, (B, 1))
    yp = Yb.ravel().astype(np.float64)
    rho = spearman_columns(Up, Yb.ravel())
    w = rho.astype(np.float64) / (np.abs(rho.astype(np.float64)).sum() + 1e-12)
    x = Up @ w
    xi = U_new @ w
    xm, ym = x.mean(), yp.mean()
    if x.std() < 1e-8 * max(abs(xm), 1e-12) or ((x - xm) ** 2).sum() < 1e-12:
        return np.full(len(xi), ym)
    a = ((x - xm) * (yp - ym)).sum() / ((x - xm) ** 2).sum()
    pred = a * (xi - xm) + ym
    R = max(yp.max() - yp.min(), 1e-6)
    bad = ~np.isfinite(pred) | (pred < yp.min() - 2 * R) | (pred > yp.max() + 2 * R)
    return np.where(bad, ym, pred)


@pytest.mark.parametrize("seed", range(8))
def test_fast_pooled_ols_equals_naive_tiled(seed):
    rng = np.random.default_rng(seed)
    m, k, B = 13, 5, 300
    U = rng.standard_normal((m, k))
    U[2] = U[7]
    P = (rng.random((m, 120)) < rng.random((m, 1))).astype(np.float32)
    Yb = bootstrap_labels(P, B, seed)
    st = pooled_stats(Yb)
    u_new = rng.standard_normal((3, k)) * (1 if seed % 2 else 50)  # some clamp cases
    fit = goal_a_predict(U, u_new, st, prefixes=True)
    for j in range(k):
        naive = _naive_goal_a(U[:, : j + 1], u_new[:, : j + 1], Yb)
        np.testing.assert_allclose(fit.pred[:, j], naive, rtol=0, atol=1e-12)
    single = goal_a_predict(U, u_new, st, prefixes=False)
    np.testing.assert_allclose(single.pred[:, 0], _naive_goal_a(U, u_new, Yb), rtol=0, atol=1e-12)


def test_guards_and_envelope():
    st = no_bootstrap_stats(np.linspace(0.2, 0.6, 13))
    # constant x -> mean
    f = ols_predict(np.full(13, 3.0), np.array([5.0]), st)
    assert f.guarded[0] and f.pred[0, 0] == pytest.approx(st.ybar)
    # far outside the envelope -> mean
    x = np.linspace(0, 1, 13)
    f = ols_predict(x, np.array([0.5, 1e6]), st)
    assert f.pred[0, 0] == pytest.approx(0.4)
    assert f.pred[1, 0] == pytest.approx(st.ybar) and f.clamped[1, 0]


def test_weights_and_mix():
    rho = np.array([0.5, -0.25, 0.25], dtype=np.float32)
    w = spearman_weights(rho)
    assert np.abs(w).sum() == pytest.approx(1.0, abs=1e-9)
    W = prefix_weights(rho)
    np.testing.assert_allclose(W[:, 2], w)
    np.testing.assert_allclose(W[:1, 0], [1.0], atol=1e-9)
    assert mix(0.0, np.nan, 2.0) == 2.0 and mix(1.0, 3.0, np.nan) == 3.0
    assert mix(0.25, 4.0, 0.0) == 1.0
