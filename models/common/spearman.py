"""Average-rank Spearman kernels (spec §3).

All functions are pure (no I/O) and work on numpy arrays.

The published helper ranks every column of ``A`` (m × p) and the vector ``y``
(m) with average ranks, centres each ranked column, divides it by its
population standard deviation + 1e-12 and returns ``dot / m``; the result is
cast to float32 (``compat``) — which creates extra exact ties between columns.
Pass ``out_dtype=np.float64`` to keep full precision (``default`` method).
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "average_ranks",
    "average_ranks_few_values",
    "normalized_ranks",
    "spearman_columns",
    "spearman_from_normalized",
    "tiled_rank_normalized",
]

_EPS_STD = 1e-12


def average_ranks(A: np.ndarray) -> np.ndarray:
    """Average ranks (1-based, ties → mean rank) of every column of ``A``.

    A: (m,) or (m, p) numeric array. Returns float64 of the same shape.
    Exact (ranks are half-integers). Uses pairwise comparisons when m is
    small (m ≤ 64: O(m²·p), vectorised) and a sort otherwise.
    """
    A = np.asarray(A)
    vec = A.ndim == 1
    if vec:
        A = A[:, None]
    m = A.shape[0]
    if m * m * A.shape[1] <= 2_000_000:
        # rank_j = #(a < a_j) + (#(a == a_j) + 1) / 2, all pairs at once
        lt = (A[None, :, :] < A[:, None, :]).sum(axis=1)
        eq = (A[None, :, :] == A[:, None, :]).sum(axis=1)
        R = lt + (eq + 1.0) / 2.0
    elif m <= 64:
        less = np.zeros(A.shape, dtype=np.float64)
        eq = np.zeros(A.shape, dtype=np.float64)
        for k in range(m):
            row = A[k]
            less += row < A
            eq += row == A
        R = less + (eq + 1.0) / 2.0
    else:
        R = _average_ranks_sort(A)
    return R[:, 0] if vec else R


def average_ranks_few_values(A: np.ndarray) -> np.ndarray:
    """``average_ranks`` of an (m, p) array without NaN, ranking the columns with at most three distinct
    values (binary scores, plus the training mean a missing score was imputed with) by counting instead
    of sorting: the same half-integer ranks, ~5x cheaper for those columns (half of the source instances
    are binary)."""
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] < 2 or np.isnan(A).any():
        return average_ranks(A)
    head = np.sort(A[:32], axis=0)
    candidate = (head[1:] != head[:-1]).sum(axis=0) <= 2     # at most three values in the first rows
    if not candidate.any():
        return average_ranks(A)
    if candidate.all():
        return _ranks_by_counting(A)
    R = np.empty(A.shape)
    R[:, candidate] = _ranks_by_counting(A[:, candidate])
    R[:, ~candidate] = average_ranks(A[:, ~candidate])
    return R


def _ranks_by_counting(A: np.ndarray) -> np.ndarray:
    """Average ranks of the columns of A (m, p) with at most three distinct values from their counts;
    the other columns by ``average_ranks``."""
    m = A.shape[0]
    lo, hi = A.min(axis=0), A.max(axis=0)
    inner = (A != lo) & (A != hi)
    mid = np.where(inner, A, -np.inf).max(axis=0)      # -inf when a column has at most two values
    few = ~inner.any(axis=0) | (mid == np.where(inner, A, np.inf).min(axis=0))
    n_lo = (A == lo).sum(axis=0)
    n_mid = (A == mid).sum(axis=0)
    # a tie group at 0-based positions s..e has the mean rank (s + e) / 2 + 1; every term is a half-integer,
    # so the sums below are exact
    r_lo = (n_lo + 1) / 2.0
    r_mid = n_lo + (n_mid + 1) / 2.0
    r_hi = n_lo + n_mid + (m - n_lo - n_mid + 1) / 2.0
    R = r_lo + (A != lo) * (r_mid - r_lo) + (A == hi) * (r_hi - r_mid)
    if not few.all():
        R[:, ~few] = average_ranks(A[:, ~few])
    return R


def _average_ranks_sort(A: np.ndarray) -> np.ndarray:
    """Average ranks by one sort per column, vectorised over the columns (p may be 10^5); the columns
    are sorted as contiguous rows of A.T. Tied values get their group's mean rank whatever order the
    sort leaves them in, so the fastest (unstable, SIMD) sort gives the same ranks as a stable one."""
    At = np.ascontiguousarray(np.asarray(A).T)
    p, m = At.shape
    order = np.argsort(At, axis=1)
    S = np.take_along_axis(At, order, axis=1)
    new = np.ones((p, m), dtype=bool)
    new[:, 1:] = S[:, 1:] != S[:, :-1]             # a tie group starts here
    idx = np.arange(m)[None, :]
    start = np.maximum.accumulate(np.where(new, idx, 0), axis=1)
    last = np.ones((p, m), dtype=bool)
    last[:, :-1] = new[:, 1:]                      # a tie group ends here
    end = np.minimum.accumulate(np.where(last, idx, m)[:, ::-1], axis=1)[:, ::-1]
    avg = (start + end) / 2.0 + 1.0                # mean of the 1-based ranks start+1 .. end+1
    R = np.empty((p, m), dtype=np.float64)
    np.put_along_axis(R, order, avg, axis=1)
    return np.ascontiguousarray(R.T)


def normalized_ranks(A: np.ndarray) -> np.ndarray:
    """Ranked, centred, scaled columns: (R - mean) / (pop std + 1e-12).

    A: (m,) or (m, p). Returns float64 of the same shape. A constant column
    maps to zeros. ``spearman = Za.T @ zy / m`` for two such outputs.
    """
    R = average_ranks(A)
    R = R - R.mean(axis=0)
    return R / (np.sqrt((R * R).mean(axis=0)) + _EPS_STD)


def spearman_from_normalized(Z: np.ndarray, zy: np.ndarray, out_dtype=np.float32) -> np.ndarray:
    """Spearman of pre-normalised rank columns Z (m × p) vs zy (m): (p,)."""
    m = Z.shape[0]
    return ((Z.T @ zy) / m).astype(out_dtype)


def spearman_columns(A: np.ndarray, y: np.ndarray, out_dtype=np.float32) -> np.ndarray:
    """§3 Spearman of every column of A (m × p) against y (m) → (p,) ``out_dtype``."""
    return spearman_from_normalized(normalized_ranks(A), normalized_ranks(y), out_dtype)


def tiled_rank_normalized(U: np.ndarray, B: int) -> np.ndarray:
    """Normalised ranks of ``np.tile(U, (B, 1))`` computed from the m distinct rows.

    U: (m, k). Returns Z (m, k) such that the normalised-rank column of the
    B-times tiled matrix equals ``np.tile(Z, (B, 1))`` (up to float rounding):
    a value of average rank r among m tiles to average rank B·(r − ½) + ½
    among m·B, and mean/std over the tiled vector equal those over the m
    values with equal multiplicity.
    """
    R = average_ranks(U)
    T = B * (R - 0.5) + 0.5
    T = T - T.mean(axis=0)
    return T / (np.sqrt((T * T).mean(axis=0)) + _EPS_STD)
