"""Goal A metrics (spec §10), scalar and row-wise (for auto-tune sweeps)."""
from __future__ import annotations

import numpy as np

from .spearman import average_ranks

__all__ = ["mae", "pearson", "spearman", "r2", "rowwise_mae", "rowwise_spearman",
           "rowwise_pearson", "abs_objective", "metrics_table"]


def mae(pred, y) -> float:
    """Mean absolute error (score units; ×100 → percentage points)."""
    return float(np.mean(np.abs(np.asarray(pred, float) - np.asarray(y, float))))


def pearson(a, b) -> float:
    """Pearson r; NaN when either input is constant (as SciPy)."""
    return float(rowwise_pearson(np.asarray(a, float)[None, :], np.asarray(b, float))[0])


def spearman(a, b) -> float:
    """Spearman ρ with average ranks (SciPy ``spearmanr``); NaN for constant input."""
    return pearson(average_ranks(np.asarray(a, float)), average_ranks(np.asarray(b, float)))


def r2(pred, y) -> float:
    """1 − SS_res/SS_tot; 0 when SS_tot ≤ 1e-12."""
    pred = np.asarray(pred, float)
    y = np.asarray(y, float)
    ss_tot = float(((y - y.mean()) ** 2).sum())
    if ss_tot <= 1e-12:
        return 0.0
    return 1.0 - float(((y - pred) ** 2).sum()) / ss_tot


def rowwise_mae(P: np.ndarray, y: np.ndarray) -> np.ndarray:
    """MAE of every row of P (K, n) vs y (n) → (K,)."""
    return np.abs(P - y).mean(axis=1)


def rowwise_pearson(P: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson of every row of P (K, n) vs y (n) → (K,); NaN for constant rows."""
    Pc = P - P.mean(axis=1, keepdims=True)
    yc = y - y.mean()
    num = Pc @ yc
    den = np.sqrt((Pc * Pc).sum(axis=1) * (yc @ yc))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = num / den
    r = np.where(den > 0, r, np.nan)
    return np.clip(r, -1.0, 1.0)


def rowwise_spearman(P: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman (average ranks) of every row of P (K, n) vs y (n) → (K,)."""
    return rowwise_pearson(average_ranks(P.T).T, average_ranks(np.asarray(y, float)))


def abs_objective(P: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Goal A auto-tune objective 100·MAE − Spearman per row (lower is better)."""
    y = np.asarray(y, dtype=np.float64)
    return 100.0 * rowwise_mae(P, y) - rowwise_spearman(P, y)


def metrics_table(pred: np.ndarray, Y: np.ndarray, targets) -> dict:
    """Per-target MAE / Spearman / Pearson / R² plus an unweighted AVERAGE row.

    pred, Y: (n, T). Returns {target: {"mae", "spearman", "pearson", "r2"}}.
    """
    out = {}
    for t_i, t in enumerate(targets):
        p, y = pred[:, t_i], np.asarray(Y[:, t_i], float)
        out[t] = {"mae": mae(p, y), "spearman": spearman(p, y),
                  "pearson": pearson(p, y), "r2": r2(p, y)}
    keys = ["mae", "spearman", "pearson", "r2"]
    out["AVERAGE"] = {k: float(np.mean([out[t][k] for t in targets])) for k in keys}
    return out
