"""Out-of-range detection that one odd model cannot fool, and the interval it calls for. Pure numpy.

Why (bench/results/anchors_experiments.md, item 5): the current check places a model on the first principal
component of its source leaf logits and compares it with the training models' [min, max] there. Two
agent-tuned training models with instruction-following quirks (MiniMax-M2.1, -M2.5) sit 2-4 training
standard deviations below the others on that axis, so the range is so wide that an older model such as GPT-4o
(-1.29 on a range of -9.45 .. 5.35) is "inside" it while it is clearly weaker on the leaves that track the
targets (aime25 0.10 against a training minimum of 0.33, livecodebench code generation 0.41 against a median
of 0.77).

Leaf-wise robust range. Per source leaf l, the labelled training models' values (logit leaf means) give a
robust range [lo_l, hi_l]: the (trim + 1)-th smallest and largest value (trim = 1: one model's harness quirk
cannot stretch it). Each source benchmark the model has casts one vote (so lifbench's 11 leaves do not
outvote aime25's one): 'below' when more than half of its leaves with bounds lie below lo_l, 'above' likewise.

    below = #{benchmarks voting below} / #{benchmarks with a vote},   above likewise
    side  = 'below' if below >= share and below > above;  'above' if above >= share and above > below

Era range (era_side): a model released before every training model is 'below', after every one 'above';
unknown dates give no verdict.

Interval rule for a model with a side: the bound on that side moves to what the data can rule out, the floor
reading (FLOOR, 1 %) below and the ceiling (CEILING, 100 %) above; the other bound is kept.

In SQL: one row per (fit, leaf) with lo_l and hi_l (a window over the training models' leaf means: the
second value of each end), a GROUP BY (model, benchmark) over its leaf means joined to them for the votes,
a GROUP BY model for the shares and a CASE for the side; the era check joins model_metadata's release_date
with the fit's training models' dates (two more columns of proxy_fits). No UDF.
"""
from __future__ import annotations

import numpy as np

__all__ = ["FLOOR", "CEILING", "SHARE", "robust_bounds", "leaf_range_shares", "range_side", "era_side",
           "widen_to_bounds"]

FLOOR, CEILING = 0.01, 1.0
SHARE = 0.25


def robust_bounds(train: np.ndarray, trim: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(L,) lo and hi: the (trim+1)-th smallest and largest of each leaf's values over the training models.

    train: (m, L) leaf logits, NaN where a model has no value; a leaf with fewer than 2 (trim + 1) values has
    NaN bounds (it takes no part in a verdict)."""
    x = np.sort(np.asarray(train, dtype=np.float64), axis=0)           # NaN sort last
    count = np.isfinite(x).sum(0)
    cols = np.arange(x.shape[1])
    ok = count >= 2 * (trim + 1)
    lo = np.where(ok, x[np.minimum(trim, x.shape[0] - 1), cols], np.nan)
    hi = np.where(ok, x[np.clip(count - 1 - trim, 0, x.shape[0] - 1), cols], np.nan)
    return lo, hi


def leaf_range_shares(z: np.ndarray, lo: np.ndarray, hi: np.ndarray, group: np.ndarray | None = None):
    """(below, above, votes): each model's share of benchmark votes below lo / above hi, and its number of
    votes. z: (k, L) leaf logits of the models to judge (NaN = missing); group: (L,) the benchmark of each
    leaf (default: every leaf its own benchmark)."""
    z = np.atleast_2d(np.asarray(z, dtype=np.float64))
    group = np.arange(z.shape[1]) if group is None else np.asarray(group)
    usable = np.isfinite(z) & np.isfinite(lo) & np.isfinite(hi)
    low, high = usable & (z < lo), usable & (z > hi)
    below, above, votes = np.zeros(z.shape[0]), np.zeros(z.shape[0]), np.zeros(z.shape[0], dtype=np.int64)
    for g in np.unique(group):
        cols = group == g
        n = usable[:, cols].sum(1)
        has = n > 0
        votes += has
        below += has & (low[:, cols].sum(1) * 2 > n)
        above += has & (high[:, cols].sum(1) * 2 > n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(votes > 0, below / votes, 0.0), np.where(votes > 0, above / votes, 0.0), votes


def era_side(released: np.ndarray, train_released: np.ndarray) -> np.ndarray:
    """(k,) 'below' / 'above' / '' for release dates (any ordered numbers, NaN = unknown) outside the
    training models' known dates."""
    r = np.asarray(released, dtype=np.float64)
    t = np.asarray(train_released, dtype=np.float64)
    t = t[np.isfinite(t)]
    if t.size == 0:
        return np.full(r.shape, "")
    return np.where(r < t.min(), "below", np.where(r > t.max(), "above", ""))


def range_side(below: np.ndarray, above: np.ndarray, share: float = SHARE) -> np.ndarray:
    """(k,) 'below', 'above' or '' per model (module doc)."""
    below, above = np.asarray(below, dtype=np.float64), np.asarray(above, dtype=np.float64)
    return np.where((below >= share) & (below > above), "below",
                    np.where((above >= share) & (above > below), "above", ""))


def widen_to_bounds(low: np.ndarray, high: np.ndarray, side: np.ndarray, floor: float = FLOOR,
                    ceiling: float = CEILING):
    """(low, high) with the bound on each flagged model's side moved to the floor / ceiling."""
    side = np.asarray(side)
    return (np.where(side == "below", np.minimum(low, floor), low),
            np.where(side == "above", np.maximum(high, ceiling), high))
