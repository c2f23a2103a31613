"""A model's ability posterior on the grid given any subset of its target items (its anchors), and the
estimate of its full mean on the target with an interval. Pure numpy; batched over k models.

For one model with anchors ``A`` (items it has run, results ``y_i``) and its item set ``M`` (the instances
its full mean is over, ``n = |M|``), with item rows (a_i, b_i) and grid rows (theta_g, slip_g),
P_i(g) = (1 - slip_g) sigma(a_i (theta_g - b_i)):

    loglik(g)  = sum_{i in A} y_i log P_i(g) + (1 - y_i) log(1 - P_i(g))
    w(g)       = exp(loglik(g) + log prior(g) - max) / sum_h exp(loglik(h) + log prior(h) - max)
    mu(g)      = (sum_{i in A} y_i + sum_{j in M \\ A} P_j(g)) / n
    noise(g)   = sum_{j in M \\ A} P_j(g)(1 - P_j(g)) / n^2        (the unrun items' own coin flips)
    mean       = sum_g w(g) mu(g)
    median, quantile q: with the grid points ordered by mu(g), mu where the midpoint CDF
                F(g) = sum_{h before g} w(h) + w(g) / 2 crosses q (linear between neighbouring points)
    interval   = [median - sqrt((median - mu_lo)^2 + z^2 N), median + sqrt((mu_hi - median)^2 + z^2 N)]
                 with mu_lo, mu_hi the (1 -+ level) / 2 quantiles, N = sum_g w(g) noise(g) and z the normal
                 quantile of (1 + level) / 2: the ability's spread and the unrun items' spread, in quadrature

Every line is a sum over grid points or items, i.e. a GROUP BY over (model, grid point) rows joined with the
item rows; the quantile is a window sum over grid points ordered by mu. As a view, with item rows
(target, instance_id, a, b), grid rows (point, theta, slip) and a model's prior rows (point, log_prior):

    probs   AS (SELECT point, instance_id, (1 - slip) / (1 + exp(-a * (theta - b))) AS p FROM grid, items)
    loglik  AS (SELECT model, point, sum(CASE WHEN y = 1 THEN ln(p) ELSE ln(1 - p) END) AS ll
                FROM anchors JOIN probs USING (instance_id) GROUP BY model, point)
    post    AS (SELECT model, point, exp(ll + log_prior - max(ll + log_prior) OVER (PARTITION BY model)) AS u ...)
    w       = u / sum(u) OVER (PARTITION BY model)
    mu      AS (SELECT model, point, (solved + sum(p) FILTER (unrun)) / n, sum(p * (1 - p)) FILTER (unrun) / n^2 ...)
    F       = sum(w) OVER (PARTITION BY model ORDER BY mu ROWS UNBOUNDED PRECEDING) - w / 2
"""
from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from .grid import Grid, normalise_log
from .items import ItemParams

__all__ = ["Estimate", "log_likelihood", "posterior_weights", "mean_curve", "noise_curve",
           "grid_quantile", "estimate_full_mean"]


@dataclass(frozen=True)
class Estimate:
    """Per model (k,): posterior mean and median of the full mean, interval [low, high] at ``level``,
    and sd: the posterior sd of the full mean (ability spread and unrun items' spread). Shares in [0, 1]."""

    mean: np.ndarray
    median: np.ndarray
    low: np.ndarray
    high: np.ndarray
    sd: np.ndarray
    level: float


def _as2d(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    return x[None, :] if x.ndim == 1 else x


def log_likelihood(params: ItemParams, grid: Grid, y: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """(k, G) log-likelihood of each model's anchors. y: (k, n) 0/1 (read where observed); observed: (k, n)
    bool, the anchors. A model with no anchor has loglik 0 everywhere (its posterior is its prior)."""
    y, observed = _as2d(y), _as2d(observed).astype(bool)
    log_p, log_q = params.log_probs(grid)                    # (G, n) each
    # only the items some model ran: at most ~50 anchors of thousands of items (a product over every item
    # read the two (G, n) tables on each of the calibration's ~13,000 calls)
    ran = np.flatnonzero(observed.any(axis=0))
    y1 = np.where(observed[:, ran], np.nan_to_num(y[:, ran]), 0.0)
    y0 = observed[:, ran].astype(np.float64) - y1
    return y1 @ log_p[:, ran].T + y0 @ log_q[:, ran].T


def posterior_weights(log_prior: np.ndarray, loglik: np.ndarray) -> np.ndarray:
    """(k, G) posterior weights (each row sums to 1) from (G,) or (k, G) log prior and (k, G) loglik."""
    return np.exp(normalise_log(np.asarray(loglik) + np.asarray(log_prior)))


def mean_curve(params: ItemParams, grid: Grid, y: np.ndarray, observed: np.ndarray,
               members: np.ndarray) -> np.ndarray:
    """(k, G) the full mean at each grid ability: run anchors count as their results, the model's other
    items (``members`` (k, n) bool: the items its full mean is over) as their solve probability."""
    y, observed, members = _as2d(y), _as2d(observed).astype(bool), _as2d(members).astype(bool)
    observed = observed & members
    p = params.prob(grid)                                    # (G, n)
    n = members.sum(1).astype(np.float64)
    solved = np.where(observed, np.nan_to_num(y), 0.0).sum(1)
    unrun = (members & ~observed).astype(np.float64)
    return (solved[:, None] + unrun @ p.T) / n[:, None]


def noise_curve(params: ItemParams, grid: Grid, observed: np.ndarray, members: np.ndarray) -> np.ndarray:
    """(k, G) variance of the full mean that the unrun items' own outcomes add at each grid ability."""
    observed, members = _as2d(observed).astype(bool), _as2d(members).astype(bool)
    p = params.prob(grid)
    spread = params.table(grid, "noise", lambda: p * (1 - p))     # (G, n), once per item model
    n = members.sum(1).astype(np.float64)
    unrun = (members & ~observed).astype(np.float64)
    return (unrun @ spread.T) / (n * n)[:, None]


def grid_quantile(weights: np.ndarray, values: np.ndarray, q: float) -> np.ndarray:
    """(k,) the q-quantile of ``values`` (k, G) under ``weights`` (k, G): with the points ordered by value,
    the value where the midpoint CDF F(g) = sum_{h before g} w(h) + w(g)/2 crosses q (linear between)."""
    weights, values = _as2d(weights), _as2d(values)
    order = np.argsort(values, axis=1, kind="stable")
    w = np.take_along_axis(weights, order, axis=1)
    v = np.take_along_axis(values, order, axis=1)
    cdf = np.cumsum(w, axis=1) - w / 2
    out = np.empty(weights.shape[0])
    for r in range(weights.shape[0]):
        out[r] = np.interp(q, cdf[r], v[r])
    return out


def estimate_full_mean(params: ItemParams, grid: Grid, log_prior: np.ndarray, y: np.ndarray,
                       observed: np.ndarray, members: np.ndarray, level: float = 0.8,
                       noise: bool = True) -> Estimate:
    """The estimate of each model's full mean from its anchors and a prior (see the module doc).

    y, observed, members: (k, n) (or (n,) for one model); log_prior: (G,) or (k, G) normalised log weights.
    noise=False leaves the unrun items' spread out of the interval (the ability's spread alone)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), not {level}")
    if not _as2d(members).astype(bool).any(axis=1).all():
        raise ValueError("every model needs at least one item in its full mean (members)")
    observed = _as2d(observed).astype(bool) & _as2d(members).astype(bool)
    if np.isnan(np.where(observed, np.broadcast_to(_as2d(y), observed.shape), 0.0)).any():
        raise ValueError("an anchor without a result (y is NaN where observed)")
    w = posterior_weights(log_prior, log_likelihood(params, grid, y, observed))
    mu = mean_curve(params, grid, y, observed, members)
    mean = (w * mu).sum(1)
    median = grid_quantile(w, mu, 0.5)
    lo_mu, hi_mu = grid_quantile(w, mu, (1 - level) / 2), grid_quantile(w, mu, (1 + level) / 2)
    spread = (w * (mu - mean[:, None]) ** 2).sum(1)
    unrun_var = (w * noise_curve(params, grid, observed, members)).sum(1) if noise else np.zeros_like(mean)
    z = NormalDist().inv_cdf((1 + level) / 2)
    low = median - np.sqrt((median - lo_mu) ** 2 + z * z * unrun_var)
    high = median + np.sqrt((hi_mu - median) ** 2 + z * z * unrun_var)
    return Estimate(mean, median, np.clip(low, 0, 1), np.clip(high, 0, 1), np.sqrt(spread + unrun_var), level)
