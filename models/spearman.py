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
