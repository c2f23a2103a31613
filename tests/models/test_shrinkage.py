"""The default method's kernels: ability scale, monotone link, shrinkage (synthetic arrays only)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from models.default.ability import ability, fit_ability_scale, leaf_logits
from models.default.link import fit_logit_link
from models.default.shrinkage import instance_centres, leaf_means


def _abilities_and_leaves(n=30, leaves=12, seed=0):
    """Leaf means from a one-factor model: model i, leaf l -> expit(theta_i - difficulty_l) + noise."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n)
    difficulty = rng.normal(scale=0.7, size=leaves)
    means = expit(theta[:, None] - difficulty[None, :] + rng.normal(scale=0.1, size=(n, leaves)))
    return theta, means


def test_ability_recovers_the_factor_and_its_sign():
    theta, means = _abilities_and_leaves()
    scale = fit_ability_scale(leaf_logits(means))
    est = ability(scale, leaf_logits(means))
    assert np.corrcoef(est, theta)[0, 1] > 0.98          # same order, same sign (higher means -> higher)


def test_ability_of_a_model_with_half_the_leaves_stays_on_the_scale():
    theta, means = _abilities_and_leaves()
    scale = fit_ability_scale(leaf_logits(means))
    full = ability(scale, leaf_logits(means))
    partial = means.copy()
    partial[:, ::2] = np.nan                             # every model lost half its benchmarks
    est = ability(scale, leaf_logits(partial))
    assert np.corrcoef(est, full)[0, 1] > 0.95
    assert np.all(np.isnan(ability(scale, leaf_logits(np.full((1, means.shape[1]), np.nan)))))


def test_link_is_monotone_and_flat_when_the_data_say_nothing():
    theta = np.linspace(-2, 2, 12)
    rising = fit_logit_link(theta, expit(0.3 + 0.8 * theta), np.full(12, 200))
    assert rising.slope == pytest.approx(0.8, abs=1e-6) and rising.intercept == pytest.approx(0.3, abs=1e-6)
    falling = fit_logit_link(theta, expit(0.3 - 0.8 * theta), np.full(12, 200))
    assert falling.slope == 0.0                          # stronger models never predicted weaker
    assert expit(falling.linear(np.array([0.0])))[0] == pytest.approx(np.mean(expit(0.3 - 0.8 * theta)), abs=0.02)
    # the standard error of the fitted logit grows away from the data
    assert rising.linear_se(np.array([8.0]))[0] > rising.linear_se(np.array([0.0]))[0]


def test_floor_pseudo_model_pulls_the_link_down_below_the_data():
    theta = np.linspace(0, 2, 10)
    y = expit(0.5 + 0.1 * theta)
    plain = fit_logit_link(theta, y)
    floored = fit_logit_link(theta, y, floor=(-10.0, 0.01))
    assert floored.slope > plain.slope
    assert expit(floored.linear(np.array([-5.0])))[0] < expit(plain.linear(np.array([-5.0])))[0] - 0.1


def test_instance_centred_leaf_means():
    rng = np.random.default_rng(3)
    X = rng.random((8, 10))
    leaf = np.array([0] * 5 + [1] * 5)
    centres = instance_centres(X, np.arange(8))
    # a model with every instance: both estimates are its plain leaf mean
    assert np.allclose(leaf_means(X, leaf, 2, centres), leaf_means(X, leaf, 2))
    # a model scored on the two hardest instances of leaf 0 only: the centred estimate corrects for it
    hard = np.argsort(centres[:5])[:2]
    row = np.full((1, 10), np.nan)
    row[0, hard] = centres[hard] + 0.1               # 0.1 above the average model on those two
    est = leaf_means(row, leaf, 2, centres)[0, 0]
    assert est == pytest.approx(centres[:5].mean() + 0.1)
    assert leaf_means(row, leaf, 2)[0, 0] < est       # the plain mean would call it weaker


