"""Target-instance bootstrap pooling (spec §6).

The pooled Goal A regression never needs the B·m tiled rows: the pooled OLS
equals the OLS of each training model's bootstrap-averaged label on x, and the
pooled Spearman weights only need, per training model j, the sum over
replicates of the normalised ranks of its pooled labels (see
``regress.tiled_spearman``). ``PooledStats`` carries exactly these sufficient
statistics plus the clamp envelope.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .spearman import normalized_ranks

__all__ = [
    "loocv_seed",
    "fit_seed",
    "bootstrap_labels",
    "PooledStats",
    "pooled_stats",
    "no_bootstrap_stats",
]


def loocv_seed(seed: int, fold: int, t: int) -> int:
    """LOOCV RNG seed: seed + 997·fold + 31·t (fold = held-out model index)."""
    return int(seed) + 997 * int(fold) + 31 * int(t)


def fit_seed(seed: int, t: int) -> int:
    """Fit-all / split RNG seed: seed + 31·t."""
    return int(seed) + 31 * int(t)


def bootstrap_labels(P_tr: np.ndarray, B: int, seed: int) -> np.ndarray:
    """Paired bootstrap over target instances → labels (B, m) float32.

    P_tr: (m, N) float32 per-instance target scores of the training models.
    Legacy ``RandomState(seed)``; replicate b draws
    ``choice(N, N, replace=True)`` sequentially; y_b[j] = mean of row j over the
    drawn columns (float32 arithmetic, as published). Row b of the result is
    replicate b; the published pooled vector is ``result.ravel()``
    (replicate-major).
    """
    P_tr = np.ascontiguousarray(P_tr, dtype=np.float32)
    m, N = P_tr.shape
    out = np.zeros((B, m), dtype=np.float32)
    if N == 0:
        return out
    rng = np.random.RandomState(seed)
    for b in range(B):
        idx = rng.choice(N, N, replace=True)
        out[b] = P_tr[:, idx].mean(axis=1)
    return out


@dataclass(frozen=True)
class PooledStats:
    """Sufficient statistics of the pooled labels y_pool = Yb.ravel() (B·m,).

    ybar_j: (m,) per-model mean over replicates (float64),
    ybar: mean of y_pool, ymin/ymax: its range (clamp envelope),
    zsum: (m,) Σ_b of the normalised ranks of y_pool at rows (b, j),
    B: replicates, m: training models.
    """

    ybar_j: np.ndarray
    ybar: float
    ymin: float
    ymax: float
    zsum: np.ndarray
    B: int
    m: int


def pooled_stats(Yb: np.ndarray) -> PooledStats:
    """Statistics of labels Yb (B, m) (float32 from ``bootstrap_labels``)."""
    B, m = Yb.shape
    y = Yb.ravel()
    z = normalized_ranks(y).reshape(B, m)
    Y64 = Yb.astype(np.float64)
    return PooledStats(
        ybar_j=Y64.mean(axis=0),
        ybar=float(y.astype(np.float64).mean()),
        ymin=float(y.min()),
        ymax=float(y.max()),
        zsum=z.sum(axis=0),
        B=B,
        m=m,
    )


def no_bootstrap_stats(y_tr: np.ndarray) -> PooledStats:
    """Un-resampled pooling (exact training means, B = 1)."""
    return pooled_stats(np.asarray(y_tr, dtype=np.float32)[None, :])
