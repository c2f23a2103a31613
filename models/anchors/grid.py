"""The fixed grid of person points every anchors quantity lives on, and priors over it. Pure numpy.

A model is never a free parameter: it is a distribution over P fixed grid points. Each point has an ability
``theta`` (in units of the training models' spread, which the item fit fixes at N(0, 1)) and a slip rate
``slip``: the share of items the model fails whatever their difficulty (a harness or tool failure mode:
some agents fail a third of the items every other model solves). The default grid is the product of 121
abilities (-6 to 6 by 0.1) and the slip levels 0, 0.1, 0.2, 0.3, 0.45; ``slips=(0,)`` gives the plain ability grid.
Every later step is a sum over grid points, so in SQL it is a GROUP BY over (model, grid point) rows.

A prior is a vector of log weights over the P points, normalised so that ``sum(exp(log_prior)) == 1``: a
normal on the ability times the slip levels' weights,

    log prior(p) = -(theta_p - mean)^2 / (2 sd^2) + log slip_weight(slip_p) - log Z
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["GRID_LO", "GRID_HI", "GRID_POINTS", "SLIPS", "Grid", "ability_grid", "normal_log_prior",
           "normalise_log", "log_sigmoid"]

GRID_LO, GRID_HI, GRID_POINTS = -6.0, 6.0, 121
SLIPS = (0.0, 0.1, 0.2, 0.3, 0.45)


@dataclass(frozen=True)
class Grid:
    """theta, slip: (P,) the grid points; levels: (S,) the distinct slip levels; level: (P,) each point's
    index into ``levels``. Points are ordered by slip level, then ability."""

    theta: np.ndarray
    slip: np.ndarray
    levels: np.ndarray
    level: np.ndarray

    @property
    def size(self) -> int:
        return int(self.theta.size)


def ability_grid(lo: float = GRID_LO, hi: float = GRID_HI, points: int = GRID_POINTS,
                 slips: tuple[float, ...] = SLIPS) -> Grid:
    """The product of ``points`` evenly spaced abilities from ``lo`` to ``hi`` and the slip levels."""
    if points < 2 or not hi > lo:
        raise ValueError(f"a grid needs at least 2 points and hi > lo (got {points}, {lo}, {hi})")
    levels = np.asarray(slips, dtype=np.float64)
    if levels.size == 0 or np.any((levels < 0) | (levels >= 1)):
        raise ValueError(f"slip levels must be in [0, 1), got {slips}")
    theta = np.linspace(lo, hi, points)
    return Grid(np.tile(theta, levels.size), np.repeat(levels, points), levels,
                np.repeat(np.arange(levels.size), points))


def normalise_log(log_w: np.ndarray) -> np.ndarray:
    """(..., P) unnormalised log weights -> the same, normalised over the last axis (log-sum-exp)."""
    log_w = np.asarray(log_w, dtype=np.float64)
    top = np.max(log_w, axis=-1, keepdims=True)
    return log_w - top - np.log(np.sum(np.exp(log_w - top), axis=-1, keepdims=True))


def normal_log_prior(grid: Grid, mean: np.ndarray | float = 0.0, sd: np.ndarray | float = 1.0,
                     slip_weights: np.ndarray | None = None, dof: float | None = None) -> np.ndarray:
    """Normal ability prior(s) times slip-level weights, as normalised log weights over the grid.

    mean, sd: scalars or (k,) arrays (one prior per model) -> (P,) or (k, P). slip_weights: (S,) weights of
    the grid's slip levels (default: all the mass on the lowest level, i.e. no slip). dof: a Student t with
    that many degrees of freedom and scale ``sd`` instead of the normal (heavy tails: anchors that disagree
    with the prior overrule it sooner), log weight -(dof + 1) / 2 log(1 + z^2 / dof)."""
    mean = np.asarray(mean, dtype=np.float64)
    sd = np.asarray(sd, dtype=np.float64)
    if np.any(~(sd > 0)):
        raise ValueError("a prior's sd must be positive")
    if slip_weights is None:
        slip_weights = np.zeros(grid.levels.size)
        slip_weights[0] = 1.0
    with np.errstate(divide="ignore"):
        log_slip = np.log(np.asarray(slip_weights, dtype=np.float64))[grid.level]
    z = (grid.theta - mean[..., None]) / sd[..., None]
    shape = -0.5 * z * z if dof is None else -(dof + 1) / 2 * np.log1p(z * z / dof)
    return normalise_log(shape + log_slip)


def log_sigmoid(x: np.ndarray) -> np.ndarray:
    """Elementwise log(1 / (1 + exp(-x))), stable for large |x|."""
    return -np.logaddexp(0.0, -np.asarray(x, dtype=np.float64))
