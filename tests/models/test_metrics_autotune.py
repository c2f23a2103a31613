import numpy as np
import pytest
from scipy import stats

from models.common.autotune import (M_GRID, Q_GRID, nc_grid, nonstrict_configs, nonstrict_sweep,
                             strict_configs, strict_sweep)
from models.common.metrics import (mae, metrics_table, pearson, r2, rowwise_spearman,
                            spearman)


def test_metrics_match_scipy():
    rng = np.random.default_rng(0)
    a, b = rng.random(14), np.round(rng.random(14), 1)
    assert spearman(a, b) == pytest.approx(stats.spearmanr(a, b)[0], abs=1e-12)
    assert pearson(a, b) == pytest.approx(stats.pearsonr(a, b)[0], abs=1e-12)
    assert mae(a, b) == pytest.approx(np.mean(np.abs(a - b)))
    assert r2(b, b) == 1.0 and r2(a, np.ones(14)) == 0.0
    assert np.isnan(spearman(np.ones(14), b))
    P = rng.random((20, 14))
    P[3] = 0.5
    rs = rowwise_spearman(P, b)
    assert np.isnan(rs[3])
    np.testing.assert_allclose(rs[[0, 5]], [stats.spearmanr(P[0], b)[0], stats.spearmanr(P[5], b)[0]])
    t = metrics_table(np.c_[a, a], np.c_[b, b], ["x", "y"])
    assert t["AVERAGE"]["mae"] == pytest.approx(mae(a, b))


def test_grid_sizes():
    assert Q_GRID[3] == 0.3 and M_GRID[7] == 0.7 and len(Q_GRID) == 11
    assert len(strict_configs(Q_GRID, nc_grid(10), M_GRID)) == 9200


def _naive_strict_sweep(H, D, y, q_grid, ncs, m_grid):
    best, best_s = None, None
    for qi, q in enumerate(q_grid):
        for di, _ in enumerate(ncs):
            for m in m_grid:
                if q == 0.0 and m > 0.0:
                    continue
                if q == 1.0 and m < 1.0:
                    continue
                for hi, _ in enumerate(ncs):
                    if m == 0.0 and hi != 0:
                        continue
                    h, d = H[qi, di, hi], D[qi, di]
                    p = d if m == 0.0 else h if m == 1.0 else m * h + (1 - m) * d
                    s = 100 * np.mean(np.abs(p - y)) - stats.spearmanr(p, y)[0]
                    if not np.isnan(s) and (best_s is None or s < best_s):
                        best, best_s = (q, di, m, hi), s
    return best, best_s


def test_strict_sweep_equals_naive_loop_with_ties():
    rng = np.random.default_rng(1)
    q_grid, ncs, m_grid = (0.0, 0.5, 1.0), (1, 2, 3), (0.0, 0.5, 1.0)
    y = rng.random(14)
    H = np.round(rng.random((3, 3, 3, 14)), 1)
    H[:, :, 2] = H[:, :, 1]  # exact ties between configs -> first wins
    D = np.round(rng.random((3, 3, 14)), 1)
    res = strict_sweep(H, D, y, q_grid, ncs, m_grid)
    (q, di, m, hi), s = _naive_strict_sweep(H, D, y, q_grid, ncs, m_grid)
    assert (res.q, res.nc_d, res.m, res.nc_h) == (q, ncs[di], m, ncs[hi])
    assert res.score == pytest.approx(s, abs=1e-12)


def test_nonstrict_skips():
    cfg = nonstrict_configs((0.0, 0.5, 1.0), (1, 2), (0.0, 0.5, 1.0), 100)
    # q=0: C_L=0 -> only m=0, nc_h first, nc_d all -> 2 ; q=0.5: m0 (2) + m.5 (4) + m1 (2) = 8 ; q=1: m=1 -> 2
    assert len(cfg) == 12
    rng = np.random.default_rng(2)
    y = rng.random(14)
    r = nonstrict_sweep(rng.random((3, 2, 14)), rng.random((3, 2, 14)), y, 100,
                        (0.0, 0.5, 1.0), (1, 2), (0.0, 0.5, 1.0))
    assert r.scores.shape == (12,) and r.score == np.nanmin(r.scores)
