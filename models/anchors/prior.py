"""Priors on a model's ability before its anchors: from another method's prediction of its full mean
(the sources prior), from model metadata (a regression prior), or the training population. Pure numpy.

Sources prior. The source method predicts the full mean ``p`` with an interval [lo, hi] at ``level``. With
mu(theta_g) the expected full mean at each grid ability (the model's items, no anchors, averaged over the
slip levels' prior weights; increasing in theta),

    centre = mu^-1(p),   sd = (mu^-1(hi) - mu^-1(lo)) / (2 z),   z = normal quantile of (1 + level) / 2

(mu^-1 by linear interpolation over the grid). The prior's median full mean is then p, so with no anchors the
estimate's median is the source prediction.

Cross-target prior (conditional_prior): the ability on one target given the abilities the model's anchors
show on the others, by normal conditioning on the training models' joint abilities.

Regression prior. Ridge regression of the training models' abilities on standardised features (e.g. release
date, log price); the mean is the prediction, the sd the root mean square of the leave-one-out residuals.
"""
from __future__ import annotations

from statistics import NormalDist

import numpy as np

__all__ = ["invert_mean_curve", "prediction_prior", "regression_prior", "ability_curve", "conditional_prior"]


def invert_mean_curve(theta: np.ndarray, curve: np.ndarray, value: np.ndarray | float) -> np.ndarray:
    """The ability at which the (G,) ``curve`` over the increasing abilities ``theta`` (G,) reaches ``value``
    (the curve made non-decreasing first; clamped to the grid's ends)."""
    curve = np.maximum.accumulate(np.asarray(curve, dtype=np.float64))
    return np.interp(value, curve, np.asarray(theta, dtype=np.float64))


def prediction_prior(theta: np.ndarray, curve: np.ndarray, predicted: float, low: float, high: float,
                     level: float = 0.8, min_sd: float = 0.05) -> tuple[float, float]:
    """(centre, sd) of the normal ability prior matching a prediction and its interval (module doc)."""
    z = NormalDist().inv_cdf((1 + level) / 2)
    centre = float(invert_mean_curve(theta, curve, predicted))
    lo, hi = invert_mean_curve(theta, curve, [low, high])
    return centre, max(float(hi - lo) / (2 * z), min_sd)


def regression_prior(features: np.ndarray, ability: np.ndarray, new: np.ndarray,
                     ridge: float = 1.0) -> tuple[np.ndarray, float]:
    """Ridge prior means for new models and one sd.

    features: (m, f) training models' features (NaN: imputed by the column mean); ability: (m,) their
    abilities; new: (k, f) the new models' features. Returns ((k,) means, sd of the leave-one-out residuals)."""
    x = np.asarray(features, dtype=np.float64)
    t = np.asarray(ability, dtype=np.float64)
    centre = np.nanmean(x, axis=0)
    scale = np.nanstd(x, axis=0)
    scale = np.where(scale > 0, scale, 1.0)

    def design(v):
        s = (np.where(np.isfinite(v), v, centre) - centre) / scale
        return np.column_stack([np.ones(s.shape[0]), s])

    xd = design(x)
    penalty = ridge * np.eye(xd.shape[1])
    penalty[0, 0] = 0.0
    hat = xd @ np.linalg.solve(xd.T @ xd + penalty, xd.T)
    coef = np.linalg.solve(xd.T @ xd + penalty, xd.T @ t)
    resid = (t - hat @ t) / np.maximum(1 - np.diag(hat), 1e-6)
    return design(np.atleast_2d(np.asarray(new, dtype=np.float64))) @ coef, float(np.sqrt(np.mean(resid ** 2)))


def ability_curve(grid, values: np.ndarray, slip_weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(abilities (G,), curve (G,)): per-point ``values`` (P,) of a ``models.anchors.grid.Grid`` averaged over
    its slip levels with ``slip_weights`` (S,) at each ability (the curve a sources prior inverts)."""
    theta = grid.theta[grid.level == 0]
    w = np.asarray(slip_weights, dtype=np.float64)
    table = np.asarray(values, dtype=np.float64).reshape(grid.levels.size, theta.size)
    return theta, (w @ table) / w.sum()


def conditional_prior(abilities: np.ndarray, target: int, estimate: np.ndarray, variance: np.ndarray,
                      use: np.ndarray, shrink: float = 0.1) -> tuple[float, float]:
    """(mean, sd) of a model's ability on one target given its noisy abilities on the other targets.

    abilities: (m, T) the training models' abilities on each target (rows with a NaN are left out); the
    abilities are taken as jointly normal (mean mu, covariance S shrunk by ``shrink`` toward its diagonal).
    estimate, variance: (T,) the model's posterior mean and variance of the ability on each target (from its
    anchors there); use: (T,) bool, the targets to condition on (never ``target`` itself). Then

        mean = mu_t + S_tO (S_OO + diag(variance_O))^-1 (estimate_O - mu_O)
        var  = S_tt - S_tO (S_OO + diag(variance_O))^-1 S_Ot
    """
    x = np.asarray(abilities, dtype=np.float64)
    x = x[np.all(np.isfinite(x), axis=1)]
    mu = x.mean(0)
    cov = np.cov(x, rowvar=False)
    cov = (1 - shrink) * cov + shrink * np.diag(np.diag(cov))
    use = np.asarray(use, dtype=bool).copy()
    use[target] = False
    o = np.flatnonzero(use)
    if o.size == 0:
        return float(mu[target]), float(np.sqrt(cov[target, target]))
    gain = np.linalg.solve(cov[np.ix_(o, o)] + np.diag(np.asarray(variance, dtype=np.float64)[o]), cov[o, target])
    mean = mu[target] + gain @ (np.asarray(estimate, dtype=np.float64)[o] - mu[o])
    var = cov[target, target] - gain @ cov[o, target]
    return float(mean), float(np.sqrt(max(var, 1e-6)))
