"""Evaluation metrics (spec §10).

Goal A: MAE / Spearman / Pearson / R², scalar and row-wise (for auto-tune sweeps), per target
(``metrics_table``; ``masked_metrics`` skips rows without a truth). Goal B: directed pair accuracy
as published (``pair_accuracy``), and the ``default`` method's accuracy over unordered pairs of
averaged directed margins with half credit for an abstention (``sym_accuracy``, ``sym_logloss``).
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

import numpy as np

from models.pair.pairwise import TIE_EPS, antisymmetric, directed_pair_mask
from models.common.spearman import average_ranks

__all__ = ["mae", "pearson", "spearman", "r2", "rowwise_mae", "rowwise_spearman",
           "rowwise_pearson", "abs_objective", "metrics_table", "masked_metrics",
           "pair_accuracy", "pair_accuracy_many", "sym_accuracy", "sym_logloss"]


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


def masked_metrics(pred: np.ndarray, Y: np.ndarray, targets: Sequence[str]) -> dict:
    """§10 metrics per target over the rows with a finite truth and prediction; AVERAGE row."""
    out = {}
    for t_i, t in enumerate(targets):
        p = np.asarray(pred[:, t_i], float)
        y = np.asarray(Y[:, t_i], float)
        ok = np.isfinite(p) & np.isfinite(y)
        p, y = p[ok], y[ok]
        out[t] = {"mae": mae(p, y), "spearman": spearman(p, y), "pearson": pearson(p, y),
                  "r2": r2(p, y), "n": int(ok.sum())}
    keys = ["mae", "spearman", "pearson", "r2"]
    out["AVERAGE"] = {k: float(np.mean([out[t][k] for t in targets])) for k in keys}
    return out


# --------------------------------------------------------------------------- Goal B
def pair_accuracy(margins: np.ndarray, y: np.ndarray) -> Tuple[float, int]:
    """§10 pair accuracy of one target.

    margins: (n, n) directed margins (row k = held-out, column j = other; NaN =
    not predicted); y: (n,) truth. Counts k ≠ j with |y_k − y_j| ≥ 1e-9 and a
    non-NaN margin; correct iff (margin > 0) == (y_k > y_j). Returns
    (accuracy, count) (NaN accuracy when count = 0).
    """
    acc, cnt = pair_accuracy_many(np.asarray(margins)[None], y)
    return float(acc[0]), int(cnt[0])


def pair_accuracy_many(M: np.ndarray, y: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Vectorised ``pair_accuracy`` over K margin matrices M (K, n, n) → (acc (K,), count (K,))."""
    mask, win = directed_pair_mask(y)
    ok = mask[None] & ~np.isnan(M)
    correct = ((M > 0) == win[None]) & ok
    cnt = ok.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(cnt > 0, correct.sum(axis=(1, 2)) / np.maximum(cnt, 1), np.nan)
    return acc, cnt


def sym_accuracy(M: np.ndarray, y: np.ndarray, rows: Optional[np.ndarray] = None
                 ) -> Tuple[np.ndarray, int, np.ndarray]:
    """Accuracy of averaged directed margins over unordered pairs.

    M: (K, n, n) or (n, n) directed margins; y: (n,) truth (NaN = excluded); rows: models to
    evaluate (default all finite y). Pairs k < j with |y_k − y_j| ≥ 1e-9 and finite averaged
    margin; correct = sign agreement, margin 0 = half credit. Returns (acc (K,), pairs,
    neutral (K,)).
    """
    M = np.asarray(M, dtype=np.float64)
    single = M.ndim == 2
    if single:
        M = M[None]
    y = np.asarray(y, dtype=np.float64)
    n = y.size
    ok_row = np.isfinite(y) if rows is None else np.isin(np.arange(n), rows) & np.isfinite(y)
    S = antisymmetric(M)
    dy = y[:, None] - y[None, :]
    iu = np.triu(np.ones((n, n), dtype=bool), 1)
    mask = iu & ok_row[:, None] & ok_row[None, :] & (np.abs(np.nan_to_num(dy)) >= TIE_EPS)
    mask = mask[None] & np.isfinite(S)
    win = (dy > 0)[None]
    credit = np.where(S == 0, 0.5, ((S > 0) == win).astype(np.float64))
    cnt = mask.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(cnt > 0, (credit * mask).sum(axis=(1, 2)) / np.maximum(cnt, 1), np.nan)
    neutral = ((S == 0) & mask).sum(axis=(1, 2))
    return acc, int(cnt.max()) if cnt.size else 0, neutral


def sym_logloss(M: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Mean log-loss of σ(averaged margin) on the unordered pairs of ``sym_accuracy`` → (K,)."""
    S = antisymmetric(M)
    n = y.size
    dy = y[:, None] - y[None, :]
    iu = np.triu(np.ones((n, n), dtype=bool), 1)
    mask = iu & np.isfinite(dy) & (np.abs(np.nan_to_num(dy)) >= TIE_EPS)
    mask = mask[None] & np.isfinite(S)
    z = np.where(mask, np.where(dy > 0, S, -S), 0.0)
    ll = np.logaddexp(0.0, -z)
    cnt = np.maximum(mask.sum(axis=(1, 2)), 1)
    return np.where(mask, ll, 0.0).sum(axis=(1, 2)) / cnt
