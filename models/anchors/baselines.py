"""The anchors baselines of the spec: the plain mean of K random items, and the difficulty-stratified mean.
Pure numpy, deterministic given the generator passed in.

Random mean: K of the model's items drawn uniformly without replacement; estimate = their mean.
Stratified mean: the model's items sorted by their solve rate over the training models (ties by index), cut
into K strata of (as nearly as possible) equal size; one item drawn per stratum; estimate = sum over strata of
(stratum size / n) x the drawn item's result.
Both give a Wald interval with the finite-population correction, sd = sqrt(p (1 - p) / K (n - K) / (n - 1)).
"""
from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

__all__ = ["Draws", "random_draws", "stratified_draws", "strata"]


@dataclass(frozen=True)
class Draws:
    """items: (D, K) the drawn item indices; estimate, low, high: (D,) shares in [0, 1]."""

    items: np.ndarray
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray


def _interval(estimate: np.ndarray, k: int, n: int, level: float):
    p = np.clip(estimate, 0.5 / k, 1 - 0.5 / k)
    fpc = (n - k) / max(n - 1, 1)
    half = NormalDist().inv_cdf((1 + level) / 2) * np.sqrt(p * (1 - p) / k * fpc)
    return np.clip(estimate - half, 0, 1), np.clip(estimate + half, 0, 1)


def random_draws(y: np.ndarray, members: np.ndarray, k: int, draws: int, rng: np.random.Generator,
                 level: float = 0.8) -> Draws:
    """``draws`` random means of ``k`` of the model's items. y: (n_items,) 0/1; members: (n_items,) bool."""
    pool = np.flatnonzero(members)
    k = min(k, pool.size)
    items = np.stack([rng.choice(pool, size=k, replace=False) for _ in range(draws)])
    est = y[items].mean(1)
    return Draws(items, est, *_interval(est, k, pool.size, level))


def strata(solve_rate: np.ndarray, members: np.ndarray, k: int) -> list[np.ndarray]:
    """The model's items cut into ``k`` strata of equal size by training solve rate (ascending; ties by index)."""
    pool = np.flatnonzero(members)
    order = pool[np.lexsort((pool, np.nan_to_num(solve_rate[pool], nan=0.5)))]
    return [s for s in np.array_split(order, min(k, pool.size)) if s.size]


def stratified_draws(y: np.ndarray, members: np.ndarray, solve_rate: np.ndarray, k: int, draws: int,
                     rng: np.random.Generator, level: float = 0.8) -> Draws:
    """``draws`` difficulty-stratified means (see the module doc); solve_rate: (n_items,) over training models."""
    cut = strata(solve_rate, members, k)
    n = int(sum(s.size for s in cut))
    weight = np.asarray([s.size / n for s in cut])
    items = np.stack([np.asarray([rng.choice(s) for s in cut]) for _ in range(draws)])
    est = y[items] @ weight
    return Draws(items, est, *_interval(est, len(cut), n, level))
