import numpy as np
import pytest
from scipy import stats

from models.common.spearman import (average_ranks, normalized_ranks, spearman_columns,
                             tiled_rank_normalized)
from models.common.regress import tiled_spearman
from models.common.pooling import pooled_stats


def test_average_ranks_matches_scipy():
    rng = np.random.default_rng(0)
    for m in (1, 2, 13, 14, 70, 500):
        A = rng.integers(0, 4, size=(m, 7)).astype(np.float64)
        np.testing.assert_array_equal(average_ranks(A), stats.rankdata(A, axis=0))
        np.testing.assert_array_equal(average_ranks(A[:, 0]), stats.rankdata(A[:, 0]))


def test_spearman_columns_matches_scipy_and_is_float32():
    rng = np.random.default_rng(1)
    A = rng.integers(0, 3, size=(13, 200)).astype(float)
    A[:, 0] = 1.0  # constant column -> 0
    y = rng.random(13)
    r = spearman_columns(A, y)
    assert r.dtype == np.float32
    assert r[0] == 0.0
    ref = np.array([stats.spearmanr(A[:, j], y)[0] for j in range(1, 200)])
    np.testing.assert_allclose(r[1:], ref, atol=1e-6)


def test_float32_cast_creates_exact_ties():
    # two columns with different rank vectors but equal rho in float32
    rng = np.random.default_rng(2)
    y = rng.random(13)
    A = rng.integers(0, 2, size=(13, 2000)).astype(float)
    r32 = spearman_columns(A, y)
    r64 = spearman_columns(A, y, out_dtype=np.float64)
    assert len(np.unique(r32)) <= len(np.unique(r64))
    np.testing.assert_array_equal(r32, r64.astype(np.float32))


def _naive_tiled_spearman(U, Yb):
    B, m = Yb.shape
    Ut = np.tile(U, (B, 1))
    return spearman_columns(Ut, Yb.ravel())


@pytest.mark.parametrize("seed", range(6))
def test_fast_tiled_spearman_equals_naive(seed):
    rng = np.random.default_rng(seed)
    m, k, B = 13, 6, 300
    U = rng.standard_normal((m, k))
    U[3] = U[5]  # tied embedding rows
    U[:, 2] = np.round(U[:, 2])  # ties inside a column
    U[:, 4] = 0.25  # constant column
    Yb = rng.integers(0, 40, size=(B, m)).astype(np.float32) / np.float32(40)  # many label ties
    fast = tiled_spearman(U, pooled_stats(Yb))
    naive = _naive_tiled_spearman(U, Yb)
    np.testing.assert_array_equal(fast, naive)  # exact after the float32 cast
    f64 = tiled_spearman(U, pooled_stats(Yb), out_dtype=np.float64)
    n64 = spearman_columns(np.tile(U, (B, 1)), Yb.ravel(), out_dtype=np.float64)
    np.testing.assert_allclose(f64, n64, rtol=0, atol=1e-13)


def test_tiled_rank_normalized_matches_tiling():
    rng = np.random.default_rng(5)
    U = rng.integers(0, 3, size=(13, 4)).astype(float)
    Z = tiled_rank_normalized(U, 7)
    np.testing.assert_allclose(np.tile(Z, (7, 1)), normalized_ranks(np.tile(U, (7, 1))), atol=1e-12)
