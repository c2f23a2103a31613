"""The chunked path of ``models.default.basis`` (large training blocks) and the exact shortcuts of the fit at scale:
the same basis as the dense path, bases shared inside one fit, prefix orders, pair soft labels from one
matrix, chunked ability inputs."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import rankdata

from models.default import basis as basis_mod
from models.default import shrinkage
from models.common.autotune import DefaultGrid
from models.default.basis import LEADING, TrainingBasis, shared_bases, training_basis
from models.default.goal_a_fold import AbsTargetFit
from models.common.embeddings import inductive_projection
from models.pair.pairwise import pair_values, soft_labels_half, win_matrix
from models.common.selection import order_desc_stable
from models.common.spearman import average_ranks, average_ranks_few_values, normalized_ranks


def block(m=48, S=3000, seed=0):
    """Latent-factor scores with the awkward cases: missing cells, binary and continuous columns,
    duplicated columns, constant columns, -0.0, a column observed by too few models."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(m, 3))
    load = rng.normal(size=(3, S))
    X = 1 / (1 + np.exp(-(a @ load + rng.normal(size=(m, S)))))
    X[:, ::3] = (X[:, ::3] > 0.5).astype(float)             # binary columns: many tied ranks
    X[rng.random((m, S)) < 0.05] = np.nan                   # missing cells (mean-imputed)
    X[:, 10:40] = X[:, [5]]                                 # one group of 31 identical columns
    X[:, 2100:2110] = X[:, 600:610]                         # duplicates in another chunk
    X[:, 50] = 0.25                                         # constant
    X[: m // 2, 61] = np.nan                                # observed by half the models: not usable
    X[:, 62] = -0.0
    X[::2, 63] = 0.0
    X[1::2, 63] = -0.0                                      # 0.0 and -0.0: one constant column
    X[:, 64] = np.where(X[:, 65] > 0.5, 0.0, 1.0)
    X[:, 66] = np.where(X[:, 65] > 0.5, -0.0, 1.0)          # equal to column 64 (-0.0 == 0.0)
    return X


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(basis_mod, "CHUNK", 700)            # several chunks
    monkeypatch.setattr(basis_mod, "LARGE_CELLS", 1000)     # training_basis takes the chunked path


def test_large_path_gives_the_dense_basis(small_chunks):
    X = block()
    rows = np.arange(2, 46)
    dense = TrainingBasis(X, rows, np.zeros(0, np.int64), 0.75, large=False)
    large = TrainingBasis(X, rows, np.zeros(0, np.int64), 0.75, large=True)
    assert large.large and not dense.large and large.Bc is None
    for name in ("cols", "mu", "reps", "mult", "rep_cols", "rep_mu"):
        np.testing.assert_array_equal(getattr(large, name), getattr(dense, name), err_msg=name)
    assert dense.mult.max() >= 31
    cols = np.asarray([0, 3, 7, dense.reps.size - 1])
    np.testing.assert_array_equal(large.block(cols), dense.Bc[:, cols])
    y = np.random.default_rng(1).random(rows.size)
    zy = normalized_ranks(y)
    np.testing.assert_allclose(large.rank_correlation(zy), dense.rank_correlation(zy), rtol=0, atol=1e-14)
    k = LEADING
    assert large.Vr.shape == (k, dense.reps.size) and dense.Vr.shape[0] > k
    np.testing.assert_allclose(large.lev, dense.lev[:k], rtol=0, atol=1e-10)
    signs = np.sign((large.Vr * dense.Vr[:k]).sum(axis=1))          # singular vectors: up to sign
    np.testing.assert_allclose(large.Vr * signs[:, None], dense.Vr[:k], rtol=0, atol=1e-10)
    # what a proxy sees: the same D-pt embedding of the same selected columns (signs cancel in E·Π)
    sel = np.arange(0, 60, 3)
    e_large = large.block(sel) @ inductive_projection(large.Vr, sel, 4)
    e_dense = dense.Bc[:, sel] @ inductive_projection(dense.Vr, sel, 4)
    np.testing.assert_allclose(np.abs(e_large), np.abs(e_dense), rtol=0, atol=1e-9)


def test_large_path_compares_the_values_of_columns_sharing_a_key(small_chunks, monkeypatch):
    # column_keys is a hash: with keys that collide everywhere (equal columns still share one), the groups
    # must still be the dense path's
    X = block(S=2200, seed=2)
    rows = np.arange(0, 40)
    dense = TrainingBasis(X, rows, np.zeros(0, np.int64), 0.75, large=False)
    keys = basis_mod.column_keys(np.array([[0.25, 1.0], [0.25, 1.0], [1.0, 0.25]]))
    assert keys[0] == keys[1] != keys[2]
    monkeypatch.setattr(basis_mod, "column_keys", lambda cols: [int(np.sum(col > 0.5)) % 17 for col in cols])
    large = TrainingBasis(X, rows, np.zeros(0, np.int64), 0.75, large=True)
    for name in ("reps", "mult", "rep_cols"):
        np.testing.assert_array_equal(getattr(large, name), getattr(dense, name), err_msg=name)
    assert dense.mult.max() >= 31


def test_large_path_selects_as_the_dense_path(small_chunks):
    X = block(seed=3)
    rows = np.arange(X.shape[0])
    y = np.random.default_rng(4).random(rows.size)
    grid = DefaultGrid(q=(0.0, 0.5, 1.0), nc=(1, 2, 8), m=(0.0, 0.5, 1.0))
    fits = [AbsTargetFit(TrainingBasis(X, rows, np.zeros(0, np.int64), 0.75, large=large), y,
                         np.zeros((0, 1)), grid, 30) for large in (False, True)]
    dense, large = fits
    np.testing.assert_allclose(large.absr, dense.absr, rtol=0, atol=1e-14)
    # the same orders but inside exact ties (equal correlations rounded another way: 1e-16 apart)
    np.testing.assert_allclose(dense.absr[large.order_h], dense.absr[dense.order_h], rtol=0, atol=1e-14)
    assert (large.order_h != dense.order_h).sum() <= 4
    for nc in grid.nc:
        d_score = dense.bs.lev[nc - 1] * dense.absr
        np.testing.assert_allclose(d_score[large.order_d(nc)], d_score[dense.order_d(nc)], rtol=0, atol=1e-10)
        assert (large.order_d(nc) != dense.order_d(nc)).sum() <= 4


def test_large_path_falls_back_when_the_rank_is_small(small_chunks):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3)) @ rng.normal(size=(3, 2000))        # rank 3 < LEADING
    bs = TrainingBasis(X, np.arange(40), np.zeros(0, np.int64), 0.75, large=True)
    assert not bs.large and bs.Bc is not None and bs.Vr.shape[0] == 3


def test_new_model_mask_on_the_large_path(small_chunks):
    X = block(seed=5)
    X[47, 100:130] = np.nan
    rows, new = np.arange(40), np.asarray([47])
    dense = TrainingBasis(X, rows, new, 0.75, large=False)
    large = TrainingBasis(X, rows, new, 0.75, large=True)
    np.testing.assert_array_equal(large.cols, dense.cols)
    assert not np.isin(np.arange(100, 130), large.cols).any()


def test_shared_bases_builds_each_block_once(small_chunks):
    X = block(seed=6)
    names = [f"m{i}" for i in range(X.shape[0])]
    rows = np.arange(30)
    copy = X[rows].copy()                                   # the same models, another array and row numbers
    none = np.zeros(0, np.int64)
    with shared_bases() as cache:
        first = training_basis(X, rows, none, 0.75, names=names)
        again = training_basis(copy, np.arange(30), none, 0.75, names=names[:30])
        other = training_basis(X, np.arange(1, 31), none, 0.75, names=names)
        masked = training_basis(X, rows, np.asarray([40]), 0.75, names=names)
        unnamed = training_basis(X, rows, none, 0.75)       # no names: never shared
        assert (cache.hits, cache.misses, cache.large) == (1, 3, 4)
        cache.release()                                     # nothing kept from now on
        training_basis(X, rows, none, 0.75, names=names)
        assert (cache.hits, cache.misses, len(cache.entries)) == (1, 4, 0)
    np.testing.assert_array_equal(first.reps, again.reps)
    np.testing.assert_array_equal(first.Vr, again.Vr)
    assert other.m == 30 and not np.array_equal(other.mu, first.mu)
    assert masked is not first and unnamed is not first
    outside = training_basis(X, rows, none, 0.75, names=names)
    assert outside is not first and basis_mod._ACTIVE is None


def test_shared_bases_guard_against_other_scores_under_the_same_names(small_chunks):
    X = block(seed=6)
    names = [f"m{i}" for i in range(X.shape[0])]
    changed = X.copy()
    changed[:, ::61] += 0.5                                 # the sampled columns differ: not the same block
    with shared_bases() as cache:
        training_basis(X, np.arange(30), np.zeros(0, np.int64), 0.75, names=names)
        training_basis(changed, np.arange(30), np.zeros(0, np.int64), 0.75, names=names)
    assert cache.hits == 0


def test_large_basis_in_a_cache_reads_the_caller_block(small_chunks):
    X = block(seed=7)
    names = [f"m{i}" for i in range(X.shape[0])]
    with shared_bases():
        first = training_basis(X, np.arange(10, 40), np.zeros(0, np.int64), 0.75, names=names)
        moved = np.concatenate([X[:5], X[10:40]])           # the same models at rows 5..34 here
        again = training_basis(moved, np.arange(5, 35), np.zeros(0, np.int64), 0.75, names=names[:5] + names[10:40])
    assert first.large and again._X is moved and first._X is X
    cols = np.arange(0, first.reps.size, 97)
    np.testing.assert_array_equal(again.block(cols), first.block(cols))


def test_prefix_order_is_the_full_order_prefix():
    rng = np.random.default_rng(8)
    for trial in range(30):
        s = np.round(rng.random(5000), int(rng.integers(1, 4)))    # heavy ties
        s[rng.integers(0, 5000, 50)] = 0.0
        full = np.lexsort((np.arange(s.size), -s))
        for k in (1, 2, 17, 302, 999, 4999, 5000, 6000):
            np.testing.assert_array_equal(order_desc_stable(s, k), full[:k])


def test_average_ranks_match_scipy():
    rng = np.random.default_rng(9)
    A = np.round(rng.random((300, 500)), 1)
    A[:, 0] = 1.0
    np.testing.assert_array_equal(average_ranks(A), rankdata(A, axis=0, method="average"))


def test_ranks_by_counting_match_scipy():
    rng = np.random.default_rng(13)
    m = 120
    A = rng.random((m, 40))
    A[:, :10] = (A[:, :10] < 0.4).astype(float)                                  # binary
    A[:, 10:20] = np.where(A[:, 10:20] < 0.1, 0.37, (A[:, 10:20] < 0.5))          # binary + an imputed mean
    A[:, 20] = 0.25                                                              # constant
    A[:, 21] = np.where(A[:, 21] < 0.5, -0.0, 0.0)                               # -0.0 and 0.0 tie
    A[:, 22:26] = np.round(A[:, 22:26] * 3) / 3                                  # four values
    A[60:, 26:30] = np.where(A[60:, 26:30] < 0.5, 1.0, 0.5)                      # a third value after row 32
    A[:60, 26:30] = np.where(A[:60, 26:30] < 0.5, 1.0, 0.0)
    A[70:, 30:33] = 0.75                                                         # a fourth value after row 32
    A[:70, 30:33] = np.where(A[:70, 30:33] < 0.3, 0.0, np.where(A[:70, 30:33] < 0.6, 0.5, 1.0))
    expected = rankdata(A, axis=0, method="average")
    np.testing.assert_array_equal(average_ranks_few_values(A), expected)
    np.testing.assert_array_equal(average_ranks_few_values(A[:, :20]), expected[:, :20])   # all by counting
    np.testing.assert_array_equal(average_ranks_few_values(A[:, 33:]), expected[:, 33:])   # none


def test_win_matrix_gives_the_soft_labels():
    rng = np.random.default_rng(10)
    Yb = np.round(rng.random((37, 12)), 1)
    Yb[rng.random(Yb.shape) < 0.1] = np.nan
    W = win_matrix(Yb)
    for rows in (np.arange(12), np.asarray([0, 3, 4, 9]), np.asarray([11, 2, 5])):
        np.testing.assert_array_equal(pair_values(W, rows), soft_labels_half(Yb[:, rows]))
    np.testing.assert_array_equal(W + W.T, np.ones((12, 12)))


def test_chunked_ability_inputs_equal_the_dense_ones(monkeypatch):
    rng = np.random.default_rng(11)
    n, S = 25, 3000
    X = rng.random((n, S))
    X[rng.random((n, S)) < 0.2] = np.nan
    leaf = np.sort(rng.integers(0, 7, S))
    hidden = rng.choice(S, 60, replace=False)
    collapsed = rng.random((n, S)) < 0.03
    scale_rows = np.arange(3, n)
    observed = ~np.isnan(X)                                 # the leaf sums as np.add.at adds them
    sums, counts = np.zeros((n, 7)), np.zeros((n, 7))
    np.add.at(sums.T, leaf, np.where(observed, X, 0.0).T)
    np.add.at(counts.T, leaf, observed.T.astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        np.testing.assert_array_equal(shrinkage.leaf_means(X, leaf, 7), np.where(counts > 0, sums / counts, np.nan))
    dense = X.copy()
    dense[:, hidden] = np.nan
    dense[collapsed] = np.nan
    centres = shrinkage.instance_centres(dense, scale_rows)
    means = shrinkage.leaf_means(dense, leaf, 7, centres)
    monkeypatch.setattr(shrinkage, "CHUNK", 333)
    got_centres, got_means = shrinkage.ability_leaf_means(X, leaf, 7, scale_rows, hidden, collapsed)
    np.testing.assert_array_equal(got_centres, centres)
    np.testing.assert_array_equal(got_means, means)
    np.testing.assert_array_equal(shrinkage.leaf_means(dense, leaf, 7, centres), means)


def test_pair_logistic_on_margins_is_the_pair_design_optimum():
    from models.pair.regress import fit_logit_newton, fit_logit_pairs
    from models.pair.pairwise import pair_index

    rng = np.random.default_rng(12)
    m = 30
    E = rng.normal(size=(m, 3))
    W = win_matrix(np.round(E @ [1.0, -0.5, 0.2] + rng.normal(size=(40, m)), 1))
    A, Bi = pair_index(m)
    ia, ib = np.triu_indices(m, 1)
    design = fit_logit_newton(E[A] - E[Bi], pair_values(W, np.arange(m)))
    margins = fit_logit_pairs(E, W[ia, ib])
    assert np.abs(design).max() > 0.1
    np.testing.assert_allclose(margins, design, rtol=0, atol=1e-10)
