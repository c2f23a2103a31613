"""A one-factor source-ability scale, fitted on every model with source scores. Pure numpy.

Why: a proxy fitted on a handful of frontier models only learns how *they* differ; a new model far
below (or above) them needs a scale on which "weaker on the sources" means something. The scale is
fitted on every model that has source scores, labelled or not (models without target scores pin
its lower end), so it never looks at a target.

Features are leaf means on the logit scale: ``z[i, l] = logit(clip(mean score of model i on leaf l,
EPS, 1 - EPS))``, NaN where the model has no score in the leaf or the cell collapsed (a harness
failure, see sql/016_collapsed_cells.sql). Each leaf is standardised over the fitting models; the
first principal component of the standardised matrix (missing cells filled by iterated rank-1
reconstruction, a "soft impute") gives the loadings ``v``. A model's ability is the least-squares
coordinate of its standardised leaf vector on ``v`` over the leaves it has:

    theta(i) = sum_l v_l s_il / sum_l v_l^2      (l over the leaves model i has; s standardised)

so models that ran different subsets of the benchmarks stay comparable, and the formula is plain
enough to recompute in SQL (sql/061_predictions.sql). The sign is fixed so that higher leaf means
give a higher ability.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["EPS", "AbilityScale", "leaf_logits", "fit_ability_scale", "ability"]

EPS = 0.02             # logit clip: a leaf mean of 0 or 1 carries no more information than 2% / 98%
MIN_SHARE = 0.5        # a leaf enters the scale when at least half the fitting models have it
MIN_MODELS = 3
_ITERATIONS = 500
_TOL = 1e-9


@dataclass(frozen=True)
class AbilityScale:
    """leaves: (k,) indices of the leaves used; centre, scale: (k,) logit mean and standard deviation
    over the fitting models; loading: (k,) first-component loadings (unit norm)."""

    leaves: np.ndarray
    centre: np.ndarray
    scale: np.ndarray
    loading: np.ndarray


def leaf_logits(leaf_means: np.ndarray) -> np.ndarray:
    """(n, L) leaf means in [0, 1] (NaN = missing) -> clipped logits, same shape."""
    p = np.clip(np.asarray(leaf_means, dtype=np.float64), EPS, 1 - EPS)
    return np.log(p / (1 - p))


def fit_ability_scale(z: np.ndarray) -> AbilityScale:
    """Fit the scale on the fitting models' leaf logits ``z`` (m, L), NaN = missing."""
    z = np.asarray(z, dtype=np.float64)
    m = z.shape[0]
    present = (~np.isnan(z)).sum(axis=0)
    with np.errstate(invalid="ignore"):
        centre = np.nanmean(np.where(present >= 1, z, 0.0), axis=0)
        scale = np.nanstd(np.where(present >= 1, z, 0.0), axis=0)
    usable = (present >= max(MIN_MODELS, int(np.ceil(MIN_SHARE * m)))) & (scale > 1e-9)
    leaves = np.flatnonzero(usable)
    if leaves.size == 0:
        raise ValueError("no source leaf is shared by enough models to fit an ability scale")
    s = (z[:, leaves] - centre[leaves]) / scale[leaves]
    observed = ~np.isnan(s)
    filled = np.where(observed, s, 0.0)
    for _ in range(_ITERATIONS):
        u, sv, vt = np.linalg.svd(filled, full_matrices=False)
        rank1 = sv[0] * np.outer(u[:, 0], vt[0])
        nxt = np.where(observed, s, rank1)
        done = np.max(np.abs(nxt - filled)) < _TOL
        filled = nxt
        if done:
            break
    loading = np.linalg.svd(filled, full_matrices=False)[2][0]
    if loading.sum() < 0:        # higher leaf means -> higher ability
        loading = -loading
    return AbilityScale(leaves, centre[leaves], scale[leaves], loading)


def ability(scale: AbilityScale, z: np.ndarray) -> np.ndarray:
    """(n, L) leaf logits -> (n,) abilities on ``scale`` (NaN for a model with none of its leaves)."""
    s = (np.asarray(z, dtype=np.float64)[:, scale.leaves] - scale.centre) / scale.scale
    observed = ~np.isnan(s)
    num = np.where(observed, s, 0.0) @ scale.loading
    den = observed.astype(np.float64) @ (scale.loading ** 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
