"""A synthetic 2PL population for tests and sanity checks. Pure numpy, deterministic given a seed.

abilities theta_m ~ N(0, 1), slopes a_i ~ LogNormal(0, slope_log_sd), difficulties b_i ~ N(0, difficulty_sd),
y_mi ~ Bernoulli(sigma(a_i (theta_m - b_i))); the expected full mean of model m is mean_i sigma(.).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .items import ItemParams

__all__ = ["Population", "simulate_2pl"]


@dataclass(frozen=True)
class Population:
    """params: the true items; theta: (m,) true abilities; y: (m, n) 0/1 results; expected: (m,) each
    model's expected full mean over all n items."""

    params: ItemParams
    theta: np.ndarray
    y: np.ndarray
    expected: np.ndarray


def simulate_2pl(models: int, items: int, seed: int, slope_log_sd: float = 0.3, difficulty_sd: float = 1.2,
                 theta: np.ndarray | None = None) -> Population:
    """Draw a population (see the module doc); ``theta`` (models,) fixes the abilities instead of drawing."""
    rng = np.random.default_rng(seed)
    params = ItemParams(np.exp(rng.normal(0.0, slope_log_sd, items)), rng.normal(0.0, difficulty_sd, items))
    th = rng.normal(0.0, 1.0, models) if theta is None else np.asarray(theta, dtype=np.float64)
    p = params.prob_at(th)
    y = (rng.random(p.shape) < p).astype(np.float64)
    return Population(params, th, y, p.mean(1))
