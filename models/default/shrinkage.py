"""The ``default`` method: the instance-level Pace proxy shrunk toward a structural ability prediction.

Per target t, on the logit scale of the target mean:

    z_pace(x)   = the Pace proxy (``models.default.goal_a``: selection, embeddings, nested tuning; no clamp to
                  the training range) fitted to logit(y) of the training models;
    z_struct(x) = a + b * theta(x), theta the one-factor source ability (``models.default.ability``, fitted on
                  every model with source scores except the ones being predicted) and (a, b >= 0) the
                  monotone logistic link (``models.default.link``, statsmodels GLM);
    z(x)        = (1 - w) * z_pace(x) + w * z_struct(x),  prediction = expit(z(x)),

with ``w = W_BASE + (1 - W_BASE) * min(1, d / GATE)``: an even average for a model inside the training
models' ability range, moving to the structural prediction as the model's ability lies ``d`` training
standard deviations outside that range. This module fits the parts (``fit_pace_parts``,
``ability_without``, ``fit_ability_link``); the combination is written once, as the SQL macros
``ability_distance``, ``ability_gate``, ``gated_logit`` and ``pace_expit`` (sql/), which the evaluation
(``warehouse.methods.default``) and the ``predictions`` view both use. Why (bench/accuracy.py, real data and the synthetic weak tail):
the Pace proxy learns how the training models differ from each other and pulls every outlier back to
their mean (19-20 pp error on a synthetic weak tail); the ability link extrapolates but is a cruder
predictor in range. Averaging them wins or ties in every protocol measured; the gate recovers most of
the structural model's extrapolation where a model is truly outside the range.

Missing sources: the Pace part imputes a missing selected score with its centre (as ``models.default.goal_a``);
the ability uses the leaves the model has. Collapsed cells (``collapsed``: harness failures, see
sql/016_collapsed_cells.sql) are left out of the ability only: measured on the real data, masking them
in the Pace part too costs 0.4 pp MAE on the family split (their zeros still rank models there).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from models.default.ability import AbilityScale, ability, fit_ability_scale, leaf_logits
from models.common.folds import KFOLD_ABOVE
from models.default.link import LogitLink, fit_logit_link, logit
from models.common.parallel import single_blas

__all__ = ["W_BASE", "GATE", "LOGIT_EPS", "FLOOR_SCORE", "AbilityLink", "leaf_means", "training_rows",
           "fit_pace_parts", "ability_without", "fit_ability_link", "chance_ability", "instance_centres",
           "ability_leaf_means", "robust_range"]

W_BASE = 0.5
GATE = 4.0
LOGIT_EPS = 1e-3     # target means of exactly 0 or 1 are clipped to this before the logit
FLOOR_SCORE = 0.01   # the floor reading: a model at chance on every source leaf scores ~1% on a target


#: columns per chunk of the leaf means (n × CHUNK float64: 32 MB at 1,000 models)
CHUNK = 4096


class _LeafSums:
    """Running per-leaf sums and counts of an (n, S) matrix's finite values, fed column chunk by column
    chunk in column order (so every sum adds the same values in the same order as one pass would)."""

    def __init__(self, n: int, n_leaves: int):
        self.sums = np.zeros((n, n_leaves))
        self.counts = np.zeros((n, n_leaves))

    def add(self, values: np.ndarray, leaf_of_col: np.ndarray) -> None:
        observed = ~np.isnan(values)
        filled = np.where(observed, values, 0.0)
        cuts = np.flatnonzero(np.diff(leaf_of_col)) + 1
        for a, b in zip(np.r_[0, cuts], np.r_[cuts, leaf_of_col.size]):     # runs of one leaf (leaves are
            leaf = leaf_of_col[a]                                            # contiguous in column order)
            # the running sum, then the run's columns one after the other (an accumulation adds them in
            # that order): bit for bit the sums np.add.at gives, ~20x faster
            self.sums[:, leaf] = np.add.accumulate(np.vstack([self.sums[:, leaf], filled[:, a:b].T]), axis=0)[-1]
            self.counts[:, leaf] += observed[:, a:b].sum(axis=1)

    def means(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.counts > 0, self.sums / np.maximum(self.counts, 1), np.nan)


def _leaf_average(values: np.ndarray, leaf_of_col: np.ndarray, n_leaves: int) -> np.ndarray:
    """(n, S) values (NaN = none) -> (n, n_leaves) mean of each row's finite values per leaf (NaN if none)."""
    acc = _LeafSums(values.shape[0], n_leaves)
    for a in range(0, values.shape[1], CHUNK):
        acc.add(values[:, a:a + CHUNK], leaf_of_col[a:a + CHUNK])
    return acc.means()


def leaf_means(X: np.ndarray, leaf_of_col: np.ndarray, n_leaves: int, centres: np.ndarray | None = None) -> np.ndarray:
    """(n, S) scores (NaN = missing) and (S,) leaf index per column -> (n, n_leaves) leaf means (NaN where a
    model has no score in the leaf).

    Without ``centres``: the mean over the instances the model has. With ``centres`` (S,) (each instance's
    mean over the models that fitted the scale; NaN = unusable instance): the leaf's mean centre plus the
    model's mean deviation from the centres on the instances it has, i.e. corrected for how hard the
    instances it happens to have are. Both agree for a model with every instance; the second stays unbiased
    for a model scored on a few selected instances (a new model run on its plan only).
    """
    X = np.asarray(X, dtype=np.float64)
    leaf_of_col = np.asarray(leaf_of_col, dtype=np.int64)
    if centres is None:
        return _leaf_average(X, leaf_of_col, n_leaves)
    centres = np.asarray(centres, dtype=np.float64)
    level, deviation = _LeafSums(1, n_leaves), _LeafSums(X.shape[0], n_leaves)
    for a in range(0, X.shape[1], CHUNK):
        _add_deviations(level, deviation, X[:, a:a + CHUNK], centres[a:a + CHUNK], leaf_of_col[a:a + CHUNK])
    return level.means() + deviation.means()


def _add_deviations(level: _LeafSums, deviation: _LeafSums, X: np.ndarray, centres: np.ndarray,
                    leaf_of_col: np.ndarray) -> None:
    usable = np.isfinite(centres)
    level.add(np.where(usable, centres, np.nan)[None, :], leaf_of_col)
    deviation.add(np.where(usable, X - centres, np.nan), leaf_of_col)


def instance_centres(X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """(S,) mean score of each instance over ``rows`` (NaN where none of them has it)."""
    block = np.asarray(X, dtype=np.float64)[np.asarray(rows)]
    with np.errstate(invalid="ignore"):
        count = (~np.isnan(block)).sum(axis=0)
        return np.where(count > 0, np.nansum(block, axis=0) / np.maximum(count, 1), np.nan)


def ability_leaf_means(X: np.ndarray, leaf_of_col: np.ndarray, n_leaves: int, scale_rows: np.ndarray,
                       hidden_cols: np.ndarray, collapsed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ability's inputs: X with the columns ``hidden_cols`` and the ``collapsed`` (n, S) cells left out
    (NaN), its instance centres over ``scale_rows`` (S,) and its centred leaf means (n, n_leaves) -- i.e.
    ``instance_centres`` and ``leaf_means(..., centres)`` of that copy of X, computed column chunk by
    column chunk (no (n, S) copy: 800 MB at 1,000 models x 100k instances)."""
    X = np.asarray(X, dtype=np.float64)
    leaf_of_col = np.asarray(leaf_of_col, dtype=np.int64)
    n, S = X.shape
    hidden = np.zeros(S, dtype=bool)
    hidden[np.asarray(hidden_cols, dtype=np.int64)] = True
    centres = np.empty(S)
    level, deviation = _LeafSums(1, n_leaves), _LeafSums(n, n_leaves)
    for a in range(0, S, CHUNK):
        block = X[:, a:a + CHUNK].copy()
        block[:, hidden[a:a + CHUNK]] = np.nan
        if collapsed is not None:
            block[np.asarray(collapsed[:, a:a + CHUNK], bool)] = np.nan
        centres[a:a + CHUNK] = instance_centres(block, scale_rows)
        _add_deviations(level, deviation, block, centres[a:a + CHUNK], leaf_of_col[a:a + CHUNK])
    return centres, level.means() + deviation.means()


def chance_ability(scale: AbilityScale, n_leaves: int) -> float:
    """The ability of a model scoring 0 on every leaf (the floor of the scale)."""
    return float(ability(scale, leaf_logits(np.zeros((1, n_leaves))))[0])


def _pace_logit_proxies(X, Z, rows, *, count, seed, n_jobs, models, kfold_above, configs=None):
    """The Pace proxies fitted to the logit target means ``Z`` (n, k) of ``rows`` (B = 0: no bootstrap
    envelope; the clamp is the training logit range widened by a quarter on each side), one per column
    of Z. Only the training rows are passed on: the proxies' column indices refer to ``X``'s columns
    either way. Targets with the same training rows are fitted together, so their leave-one-out tuning
    shares each training basis (with B = 0 the seed plays no part, so this equals one fit per target)."""
    from models.default.goal_a import fit_abs_default

    names = [f"t{k}" for k in range(Z.shape[1])]
    # a run of consecutive rows (every fold's training rows come first) is a view, not an (m, S) copy
    contiguous = rows.size and rows[-1] - rows[0] == rows.size - 1 and bool((np.diff(rows) == 1).all())
    Xr = X[rows[0]:rows[-1] + 1] if contiguous else X[rows]
    res = fit_abs_default(Xr, [Z[rows][:, [k]] for k in range(Z.shape[1])], names,
                          models=[models[i] for i in rows], count=count, B=0, seed=seed, n_jobs=n_jobs,
                          score_range=None, kfold_above=kfold_above,
                          config=None if configs is None else dict(zip(names, configs)))
    return [res.proxies[name] for name in names], list(res.warnings)


def training_rows(Y: np.ndarray, targets: Sequence[str], train: np.ndarray) -> dict[str, np.ndarray]:
    """target -> the rows of ``train`` with a finite target mean (Y: (n, T)); at least 3 each."""
    out = {}
    for t, target in enumerate(targets):
        rows = np.asarray([i for i in np.asarray(train) if np.isfinite(Y[i, t])], dtype=np.int64)
        if rows.size < 3:
            raise ValueError(f"{target}: fewer than 3 training models with a target score")
        out[target] = rows
    return out


def fit_pace_parts(X: np.ndarray, Y: np.ndarray, targets: Sequence[str], *, train: np.ndarray,
                   models: Sequence[str] | None = None, count: int = 100, seed: int = 42, n_jobs: int = 1,
                   kfold_above: int = KFOLD_ABOVE, configs: dict | None = None) -> tuple[dict, list[str]]:
    """The Pace part of each target: (target -> ``LinearProxy`` on the logit scale, warnings).

    X: (n, S) source scores, NaN = missing; Y: (n, T) target means (NaN = none); train: rows whose
    targets train (rows without the target are skipped per target). Targets are independent: a call with
    one target gives the same proxy as a call with several (targets with the same training rows only share
    the work of their training bases)."""
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    names = list(models) if models is not None else [f"model_{i}" for i in range(X.shape[0])]
    rows_of = training_rows(Y, targets, train)
    paces, warnings = {}, []
    groups: dict[tuple, list[int]] = {}
    for t, target in enumerate(targets):
        groups.setdefault(tuple(rows_of[target].tolist()), []).append(t)
    for key, ts in groups.items():
        rows = np.asarray(key, dtype=np.int64)
        Z = np.full((X.shape[0], len(ts)), np.nan)
        for k, t in enumerate(ts):
            Z[rows, k] = logit(np.clip(Y[rows, t], LOGIT_EPS, 1 - LOGIT_EPS))
        fitted, warn = _pace_logit_proxies(X, Z, rows, count=count, seed=seed, n_jobs=n_jobs, models=names,
                                           kfold_above=kfold_above,
                                           configs=None if configs is None else [configs[targets[t]] for t in ts])
        for t, proxy in zip(ts, fitted):
            paces[targets[t]] = proxy
            warnings += [f"{targets[t]}: {w}" for w in warn if "no target value" not in w]
    return {target: paces[target] for target in targets}, warnings


@single_blas   # the ability's soft impute: ~80x slower on two BLAS threads at 1,000 models (see models.common.parallel)
def ability_without(X: np.ndarray, leaf_of_col: np.ndarray, n_leaves: int, selected: np.ndarray, *,
                    scale_rows: np.ndarray, collapsed: np.ndarray | None = None,
                    call_group: np.ndarray | None = None) -> tuple[AbilityScale, np.ndarray, np.ndarray]:
    """The source-ability scale fitted on ``scale_rows`` without the ``selected`` columns: (scale, theta (n,)
    every row's ability, centres (S,) the instance centres of the scale's leaves, NaN elsewhere).

    The ability never reads the instances a proxy selected: they were chosen because they separate the
    training models, so a model scored on them alone (a new model run on its plan) would look further
    from the average than it is. Without them its ability comes from the other instances it has.
    call_group: (S,) int, columns one runner call scores together share a value; the siblings of a selected
    column are left out as well (the same call scores them). collapsed: (n, S) True where a cell collapsed.
    """
    selected = np.unique(np.asarray(selected, dtype=np.int64))
    if call_group is not None:
        group = np.asarray(call_group)
        selected = np.flatnonzero(np.isin(group, group[selected]))
    centres, means = ability_leaf_means(X, leaf_of_col, n_leaves, scale_rows, selected, collapsed)
    z_leaf = leaf_logits(means)
    scale = fit_ability_scale(z_leaf[np.asarray(scale_rows)])
    centres = np.where(np.isin(np.asarray(leaf_of_col), scale.leaves), centres, np.nan)
    return scale, ability(scale, z_leaf), centres


@dataclass
class AbilityLink:
    """One target's link from ability to target logit: the link, its floor-anchored refit, the training
    models' ability range (theta_lo, theta_hi, theta_sd) that sets the gate, and the robust range (range_lo,
    range_hi: ``robust_range``) the out-of-range verdict uses."""

    link: LogitLink
    floor: LogitLink
    theta_lo: float
    theta_hi: float
    theta_sd: float
    range_lo: float = float("nan")
    range_hi: float = float("nan")


def robust_range(theta: np.ndarray, trim: int = 1) -> tuple[float, float]:
    """The (trim+1)-th smallest and largest of the finite values of theta (m,), so that ``trim`` odd models
    at either end cannot stretch the range (bench/results/anchors_experiments.md, section 6: two
    agent-tuned training models sat 2-4 training standard deviations below the rest and made an older model
    look in range); the plain [min, max] when fewer than 2 (trim + 1) values are finite."""
    th = np.sort(np.asarray(theta, dtype=np.float64))
    th = th[np.isfinite(th)]
    if th.size == 0:
        return float("nan"), float("nan")
    if th.size < 2 * (trim + 1):
        return float(th[0]), float(th[-1])
    return float(th[trim]), float(th[-1 - trim])


def fit_ability_link(theta: np.ndarray, y: np.ndarray, n_instances: np.ndarray | None,
                     floor_ability: float) -> AbilityLink:
    """theta: (m,) training models' abilities; y: (m,) their target means; n_instances: (m,) instances behind
    each mean (GLM weights) or None; floor_ability: the chance-level model's ability (``chance_ability``)."""
    y = np.clip(np.asarray(y, dtype=np.float64), LOGIT_EPS, 1 - LOGIT_EPS)
    link = fit_logit_link(theta, y, n_instances)
    floor = fit_logit_link(theta, y, n_instances, floor=(floor_ability, FLOOR_SCORE))
    th = np.asarray(theta, dtype=np.float64)
    th = th[np.isfinite(th)]
    return AbilityLink(link, floor, float(th.min()), float(th.max()), float(th.std()) if th.size > 1 else 1.0,
                       *robust_range(th))
