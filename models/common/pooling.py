"""Target-instance bootstrap pooling (spec §6) and the clamp envelope.

compat: the pooled Goal A regression never needs the B·m tiled rows: the pooled
OLS equals the OLS of each training model's bootstrap-averaged label on x, and
the pooled Spearman weights only need, per training model j, the sum over
replicates of the normalised ranks of its pooled labels (see
``regress.tiled_spearman``). ``PooledStats`` carries exactly these sufficient
statistics plus the clamp envelope.

default: ``bootstrap_means`` draws NaN-aware replicate means (for the clamp
envelope ``clamp_envelope`` and the pair soft labels); the regression itself
uses the observed target means (the B → ∞ limit of the bootstrap mean).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from models.common.spearman import normalized_ranks

__all__ = [
    "loocv_seed",
    "fit_seed",
    "bootstrap_labels",
    "PooledStats",
    "pooled_stats",
    "no_bootstrap_stats",
    "bootstrap_means",
    "ENVELOPE",
    "clamp_envelope",
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


def bootstrap_means(P: np.ndarray, B: int, seed: int) -> np.ndarray:
    """Per-model bootstrap replicate means (B, n), NaN-aware, paired over instances (``default``).

    P: (n, N) per-instance scores (NaN = missing). Replicate b draws N instance indices with
    replacement (``default_rng(seed)``, one multinomial count vector per replicate); a model's
    replicate label is the mean of its observed drawn instances (NaN when it has none).
    (0, n) when B ≤ 0 or N = 0.
    """
    P = np.asarray(P, dtype=np.float64)
    n, N = P.shape
    if B <= 0 or N == 0:
        return np.zeros((0, n))
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(N, np.full(N, 1.0 / N), size=B).astype(np.float64)  # (B, N)
    obs = ~np.isnan(P)
    num = counts @ np.where(obs, P, 0.0).T
    den = counts @ obs.T.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.maximum(den, 1e-300), np.nan)


#: the clamp widens the replicate range by this fraction of it on each side
ENVELOPE = 0.25


def clamp_envelope(reps: np.ndarray, rows: np.ndarray, y_tr: np.ndarray,
                   score_range: Optional[Tuple[float, float]]) -> Tuple[float, float]:
    """Clamp [lo, hi] of a ``default`` prediction: [min − R/4, max + R/4] ∩ score_range.

    reps: (B, n) ``bootstrap_means``; rows: the training rows; y_tr: their target means (used when
    there are no finite replicates); min / max / R over the training rows' finite replicates.
    """
    vals = reps[:, rows] if reps.size else y_tr[None, :]
    vals = vals[np.isfinite(vals)]
    if vals.size == 0:
        vals = y_tr
    lo, hi = float(vals.min()), float(vals.max())
    R = hi - lo
    lo, hi = lo - ENVELOPE * R, hi + ENVELOPE * R
    if score_range is not None:
        lo, hi = max(lo, score_range[0]), min(hi, score_range[1])
    return lo, hi
