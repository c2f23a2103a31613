"""Pairwise maths of Goal B (spec §6, §8, §10): ordered pairs, soft labels, masks.

A model pair (a, b) is ordered: row a "beats" row b. Training pairs are all a ≠ b of the m
training models in row-major order (``pair_index``); the B bootstrap replicates of the labels
reduce to one soft label per pair (the published pooled fit over B·m(m−1) rows has the same
objective as one fit on m(m−1) rows against those soft labels).
"""
from __future__ import annotations

from typing import Tuple

import numpy as np

__all__ = ["TIE_EPS", "pair_index", "soft_labels", "soft_labels_half", "win_matrix", "pair_values", "pooled_design",
           "directed_pair_mask", "antisymmetric"]

#: two truths closer than this are a tie: the pair is not evaluated (§10)
TIE_EPS = 1e-9


def pair_index(m: int) -> Tuple[np.ndarray, np.ndarray]:
    """Ordered pairs (a, b), a ≠ b, of m items in row-major order → (A (m(m−1),), Bi (m(m−1),))."""
    a, b = np.meshgrid(np.arange(m), np.arange(m), indexing="ij")
    off = a != b
    return a[off], b[off]


def soft_labels(Yb: np.ndarray) -> np.ndarray:
    """Soft labels of the ordered training pairs (published rule).

    Yb: (B, m) bootstrap labels (row b = replicate b). Returns f (m(m−1),):
    f_p = fraction of replicates with y_b[a] − y_b[b] > 0 (strict; a tie is a
    loss for a, §8), pairs in ``pair_index`` order.
    """
    Yb = np.asarray(Yb)
    A, Bi = pair_index(Yb.shape[1])
    return (Yb[:, A] - Yb[:, Bi] > 0).mean(axis=0)


def soft_labels_half(Yb: np.ndarray) -> np.ndarray:
    """Soft labels with a tie as half a win for each side (``default`` rule, so f_ab + f_ba = 1).

    Yb: (B, m) replicate labels (NaN = undefined → tie) → f (m(m−1),) for ``pair_index`` pairs:
    P(y[a] > y[b]) + ½·P(tie). With no replicates, pass the observed means as one replicate.
    """
    Yb = np.asarray(Yb, dtype=np.float64)
    A, Bi = pair_index(Yb.shape[1])
    d = Yb[:, A] - Yb[:, Bi]
    win = np.where(np.isnan(d), 0.5, np.where(d > 0, 1.0, np.where(d < 0, 0.0, 0.5)))
    return win.mean(axis=0)


def win_matrix(Yb: np.ndarray) -> np.ndarray:
    """Every ordered pair's ``soft_labels_half`` label at once: (B, n) replicate labels (NaN = tie) →
    W (n, n), W[a, b] = P(y[a] > y[b]) + ½·P(tie); ``soft_labels_half(Yb[:, rows]) ==
    pair_values(W, rows)`` exactly (the wins are halves, so their sum is exact in any order). One
    (n, n) pass per replicate instead of B·m(m−1) values per training set."""
    Yb = np.asarray(Yb, dtype=np.float64)
    n = Yb.shape[1]
    signs = np.zeros((n, n))
    for y in Yb:
        d = np.sign(y[:, None] - y[None, :])
        signs += np.where(np.isnan(d), 0.0, d)
    return ((Yb.shape[0] + signs) * 0.5) / Yb.shape[0]      # sum of wins = (B + sum of signs) / 2


def pair_values(W: np.ndarray, rows) -> np.ndarray:
    """The entries of an (n, n) pair matrix for the ordered pairs of ``rows``, in ``pair_index`` order."""
    rows = np.asarray(rows, dtype=np.int64)
    sub = W[np.ix_(rows, rows)]
    return sub[~np.eye(rows.size, dtype=bool)]


def pooled_design(E_tr: np.ndarray, Yb: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The published explicit pool (§6): D_pool (B·m(m−1), k) = pair differences tiled B
    times, labels (B·m(m−1),) replicate-major, 1 iff dy > 0. Test/reference use only."""
    A, Bi = pair_index(E_tr.shape[0])
    Dp = E_tr[A] - E_tr[Bi]
    B = Yb.shape[0]
    lab = (Yb[:, A] - Yb[:, Bi] > 0).astype(np.float64).ravel()
    return np.tile(Dp, (B, 1)), lab


def directed_pair_mask(y: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Evaluated directed pairs of truths y (n,) → (mask (n, n): k ≠ j and |y_k − y_j| ≥ TIE_EPS,
    win (n, n): y_k > y_j)."""
    y = np.asarray(y, dtype=np.float64)
    dy = y[:, None] - y[None, :]
    n = y.size
    mask = (np.abs(dy) >= TIE_EPS) & ~np.eye(n, dtype=bool)
    return mask, dy > 0


def antisymmetric(M: np.ndarray) -> np.ndarray:
    """(…, n, n) directed margins → antisymmetric average (M − Mᵀ)/2 (NaN propagates)."""
    return 0.5 * (M - np.swapaxes(M, -1, -2))
