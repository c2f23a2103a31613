"""models.anchors.range: a robust out-of-range verdict (one odd training model cannot stretch the range;
each benchmark votes once), the era check and the widened interval."""
from __future__ import annotations

import numpy as np

from models.anchors.range import era_side, leaf_range_shares, range_side, robust_bounds, widen_to_bounds


def test_one_odd_training_model_does_not_stretch_the_range():
    rng = np.random.default_rng(0)
    train = rng.normal(0, 1, (12, 6))
    train[0] = -20.0                                   # a harness quirk on every leaf
    lo, hi = robust_bounds(train)
    assert np.all(lo > -5) and np.all(hi < 5)
    plain_lo = train.min(0)
    judged = np.full((1, 6), -4.0)
    below, above, votes = leaf_range_shares(judged, lo, hi)
    assert below[0] == 1.0 and above[0] == 0.0 and votes[0] == 6
    assert np.all(judged[0] > plain_lo)               # inside the plain [min, max], outside the robust one


def test_a_leaf_with_too_few_models_has_no_bounds_and_no_vote():
    train = np.array([[0.0, 1.0], [1.0, np.nan], [2.0, np.nan], [3.0, np.nan]])
    lo, hi = robust_bounds(train)
    assert lo[0] == 1.0 and hi[0] == 2.0 and np.isnan(lo[1])
    below, above, votes = leaf_range_shares(np.array([[-1.0, -5.0]]), lo, hi)
    assert votes[0] == 1 and below[0] == 1.0


def test_each_benchmark_votes_once():
    lo, hi = np.zeros(5), np.ones(5)
    z = np.array([[-1.0, 0.5, 0.5, 0.5, 0.5],         # bench a (1 leaf) below; bench b (4 leaves) inside
                  [0.5, -1.0, -1.0, -1.0, 0.5]])       # bench b: 3 of 4 leaves below
    group = np.array(["a", "b", "b", "b", "b"])
    below, above, votes = leaf_range_shares(z, lo, hi, group)
    assert np.allclose(below, [0.5, 0.5]) and np.all(votes == 2)
    assert list(range_side(below, above, 0.25)) == ["below", "below"]
    assert list(range_side(np.array([0.2, 0.3]), np.array([0.0, 0.3]), 0.25)) == ["", ""]


def test_era_and_widening():
    assert list(era_side(np.array([2024.3, 2025.5, 2026.9, np.nan]), np.array([2025.0, 2026.0, np.nan]))) == \
        ["below", "", "above", ""]
    low, high = widen_to_bounds(np.array([0.5, 0.5, 0.5]), np.array([0.7, 0.7, 0.7]),
                                np.array(["below", "", "above"]))
    assert np.allclose(low, [0.01, 0.5, 0.5]) and np.allclose(high, [0.7, 0.7, 1.0])
