"""A monotone logistic link from an ability to a target score, with its standard errors.

The target mean of model i, y_i in [0, 1] (a share of solved instances), is modelled as a binomial
proportion with ``logit E[y_i] = a + b * theta_i``, fitted by statsmodels' GLM (Binomial family,
logit link, ``var_weights`` = the number of target instances behind y_i, dispersion estimated from
Pearson's chi-square: a quasi-binomial fit, since models differ by more than instance noise).

Monotone: stronger models score higher on both sides, so the slope may not be negative. When the
unconstrained fit gives b < 0 the link is the intercept-only fit (b = 0): the ability carries no
usable signal for that target and the prediction is the training level, with its uncertainty.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

__all__ = ["LogitLink", "fit_logit_link", "logit"]

_CLIP = 1e-4


def logit(p: np.ndarray | float, eps: float = _CLIP) -> np.ndarray:
    """Elementwise log(p / (1 - p)) with p clipped to [eps, 1 - eps]."""
    q = np.clip(np.asarray(p, dtype=np.float64), eps, 1 - eps)
    return np.log(q / (1 - q))


@dataclass(frozen=True)
class LogitLink:
    """logit(y) = intercept + slope * theta; cov: (2, 2) covariance of (intercept, slope)."""

    intercept: float
    slope: float
    cov: np.ndarray

    def linear(self, theta: np.ndarray) -> np.ndarray:
        """(n,) abilities -> (n,) logits."""
        return self.intercept + self.slope * np.asarray(theta, dtype=np.float64)

    def linear_se(self, theta: np.ndarray) -> np.ndarray:
        """(n,) standard error of the fitted logit at each ability (grows away from the data)."""
        t = np.asarray(theta, dtype=np.float64)
        var = self.cov[0, 0] + 2 * t * self.cov[0, 1] + t * t * self.cov[1, 1]
        return np.sqrt(np.maximum(var, 0.0))


def fit_logit_link(theta: np.ndarray, y: np.ndarray, n_instances: np.ndarray | None = None,
                   floor: tuple[float, float] | None = None) -> LogitLink:
    """Fit the monotone link on (theta_i, y_i); rows with a NaN in either are ignored.

    theta, y: (m,); n_instances: (m,) target instances behind each y (default 1 each).
    floor: (theta_0, y_0), a pseudo-model weighing as much as an average real one (e.g. a model at chance
    level on every source, scoring y_0 near 0 on the target): the pessimistic reading used to widen the
    interval of a model below the training range.
    """
    # The GLM module alone: statsmodels.api imports every statsmodels subpackage (~0.3-0.9 s more of a
    # command's start-up).
    from statsmodels.genmod import families
    from statsmodels.genmod.generalized_linear_model import GLM

    theta = np.asarray(theta, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w = np.ones_like(y) if n_instances is None else np.asarray(n_instances, dtype=np.float64)
    ok = np.isfinite(theta) & np.isfinite(y) & (w > 0)
    theta, y, w = theta[ok], np.clip(y[ok], _CLIP, 1 - _CLIP), w[ok]
    if floor is not None and y.size:
        theta = np.append(theta, floor[0])
        y = np.append(y, np.clip(floor[1], _CLIP, 1 - _CLIP))
        w = np.append(w, w.mean())
    if y.size < 2:
        raise ValueError("a link needs at least two models with a target score")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # perfect-separation and convergence chatter on 13 rows
        if y.size >= 3 and np.ptp(theta) > 0:
            design = np.column_stack([np.ones_like(theta), theta])
            fit = GLM(y, design, family=families.Binomial(), var_weights=w).fit(scale="X2")
            a, b = (float(v) for v in fit.params)
            if b >= 0 and np.all(np.isfinite(fit.params)):
                return LogitLink(a, b, np.asarray(fit.cov_params(), dtype=np.float64))
        ones = np.ones((y.size, 1))
        fit = GLM(y, ones, family=families.Binomial(), var_weights=w).fit(scale="X2")
    cov = np.zeros((2, 2))
    cov[0, 0] = float(np.asarray(fit.cov_params())[0, 0])
    return LogitLink(float(fit.params[0]), 0.0, cov)
