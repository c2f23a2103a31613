"""Intervals that keep their promise: a split-conformal widening factor for the estimate's interval, learnt
from models whose truth is known (inner folds of the training models). Pure numpy.

A model's nominal interval [low, high] around its point estimate ``m`` is asymmetric; its score against the
truth ``t`` is how far out the truth lies in units of the interval's half on that side:

    s = (t - m) / (high - m)  if t >= m,   (m - t) / (m - low)  otherwise     (0 / 0 = 0, x / 0 = inf)

With n calibration scores, the factor is the ceil((n + 1) level)-th smallest (split-conformal: a new model
exchangeable with the n is inside with probability >= level), and the widened interval is

    [m - f (m - low), m + f (high - m)]  clipped to [0, 1]

so a factor f is one stored number per (target, K) and the widening one line of SQL.
"""
from __future__ import annotations

import numpy as np

__all__ = ["interval_scores", "conformal_factor", "outside_factor", "widen"]


def interval_scores(point: np.ndarray, low: np.ndarray, high: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """(k,) the scores of k estimates against their truths (module doc)."""
    point, low, high, truth = (np.asarray(v, dtype=np.float64) for v in (point, low, high, truth))
    above = truth >= point
    gap = np.where(above, truth - point, point - truth)
    half = np.where(above, high - point, point - low)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(gap <= 1e-12, 0.0, np.where(half > 0, gap / half, np.inf))


def conformal_factor(scores: np.ndarray, level: float) -> float:
    """The split-conformal factor of the scores (module doc); inf when there are too few for ``level``."""
    s = np.sort(np.asarray(scores, dtype=np.float64)[~np.isnan(scores)])
    rank = int(np.ceil((s.size + 1) * level))
    return float(s[rank - 1]) if 1 <= rank <= s.size else float("inf")


def outside_factor(outside: np.ndarray, every: np.ndarray, level: float) -> float:
    """The factor of an estimate outside its training range: the conformal factor of the out-of-range scores
    (with too few for ``level``, their largest), never below the factor of ``every`` score (none outside:
    that factor)."""
    outside = np.asarray(outside, dtype=np.float64)
    pooled = conformal_factor(np.asarray(every, dtype=np.float64), level)
    if outside.size == 0:
        return pooled
    own = conformal_factor(outside, level)
    return max(own if np.isfinite(own) else float(np.max(outside)), pooled)


def widen(point: np.ndarray, low: np.ndarray, high: np.ndarray, factor: float):
    """(low, high) widened by ``factor`` about ``point``, clipped to [0, 1]."""
    point = np.asarray(point, dtype=np.float64)
    f = factor if np.isfinite(factor) else 1e6
    return (np.clip(point - f * (point - np.asarray(low)), 0, 1),
            np.clip(point + f * (np.asarray(high) - point), 0, 1))
