"""``anchors``: each target's item model, a prior on the held-out model's ability, and K of its own target
instances (its anchors), chosen adaptively; the estimate of its full mean (:mod:`models.anchors.target`).

This is the product's path (``pace fit`` stores the item models, ``pace plan --anchors K`` chooses the
anchors, the view ``anchor_estimates`` estimates) replayed per fold of a split. Per fold:

1. **Item models**, one per target (``fit_target``: 1PL with slips, the conformal widening factors learnt on
   inner folds), fitted on the fold's training models only: *every* model with target rows that the fold
   does not hold out and that is not held out of fits, models without source rows included (e.g. the
   agentic-only models of an OpenHands Index import). Their rows come from the query ``pace fit`` reads
   (:data:`warehouse.anchors.TARGET_ROWS`, a declared :class:`~warehouse.methods.data.SqlRows` input); the
   held-out models' rows are dropped before anything is fitted. A target with fewer than 3 training
   models gets no item model (no prediction, a warning).
2. **The prior** of each held-out model, as ``anchor_prior`` chooses it: from its metadata (the ridge
   regression of the training models' abilities on their metadata features) if it has usable metadata;
   else from the sources, i.e. the ``default`` method's held-out prediction of it on the same folds (a
   :class:`~warehouse.methods.data.Prior` input) with an 80 % interval made, as ``pace fit`` makes its
   intervals, from split-conformal offsets of the logit residuals of the fold's training models' own
   held-out ``default`` predictions (at least 3 needed: under low-K / high-K the training models are held
   out of no fold, so there are none); else the training population's N(0, 1).
3. **Anchors**: ``--anchors K`` of the held-out model's own target instances, chosen ``BATCH`` (5) at a time
   by ``plan`` (the most posterior variance of the full mean removed), each batch revealed from the fold
   with every other target cell of the held-out models still hidden (:meth:`Fold.hide_targets`), before
   the next batch is chosen. Only the instances the model has a result for can be revealed, and its full
   mean is over those instances (the truth it is scored against: ``target_means``); which instances it has
   is read, never their results. K = 0: the prior's answer.
4. **The estimate** (``estimate``): the posterior median of the full mean, with its widened interval.

Evaluated: the fold's held-out models present in the score matrices (models with source rows and a target
score: the models ``split_folds`` deals into folds), on every target with an item model; ``loocv_predictions``
stores the point (it has no interval columns), the returned rows also carry ``low``, ``high``, ``prior`` and
``anchors`` for a Python caller. Read: ``--anchors``, and ``--count`` / ``--seed`` (passed to the ``default``
prior). Known indirect path: the sources prior's interval (used only by a held-out model without usable
metadata) is made of other models' held-out residuals, whose folds trained on the held-out model's target
(as ``bench/anchors_sources.py`` and ``bench/accuracy.py`` do); the point and everything else never see it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from scipy.special import expit

from models.anchors.target import BATCH, POPULATION_SD, Prior as AbilityPrior, TargetModel, estimate, fit_target, \
    metadata_prior, plan, pool_factors, sources_prior
from models.common.intervals import interval_offsets
from models.common.parallel import blas_limit, map_jobs
from models.default.link import logit
from warehouse.anchors import METADATA, MIN_MODELS, TARGET_ROWS, feature_matrix, features_by_model, item_matrix
from warehouse.methods.base import Method
from warehouse.methods.data import Fold, Folds, Prior, SqlRows
from warehouse.methods.options import Option, Options
from warehouse.methods.results import Evaluation, Fit
from warehouse.settings import jobs

LEVEL = 0.8            # the intervals' level, as `pace fit` stores the item models
INNER_FOLDS = 5        # inner folds the widening factors are learnt on, as `pace fit`
MIN_RESIDUALS = 3      # held-out residuals a sources prior's interval needs
_EPS = 1e-3            # the logit clip of `pace fit`'s interval residuals


@dataclass
class _Inputs:
    """The evaluation's inputs in the shape the folds use. rows: target -> [(model, subdir, instance_id,
    score)]; columns: target -> {(subdir, instance_id): matrix column}; features: model -> (f,) metadata;
    sources: (model, target) -> the default method's held-out prediction; truth: model -> (T,) target means."""
    rows: dict[str, list[tuple]]
    columns: dict[str, dict[tuple[str, str], int]]
    features: dict[str, np.ndarray]
    sources: dict[tuple[str, str], float]
    truth: dict[str, np.ndarray]


@dataclass
class _Cell:
    """One held-out model on one target: its row in the fold, the target's item model and prior, the items
    its full mean is over (members), those it has a result for (available: the anchors it may reveal),
    their matrix columns, and the anchors revealed so far (observed, y)."""
    row: int
    t: int
    model: TargetModel
    prior: AbilityPrior
    members: np.ndarray
    available: np.ndarray
    cols: np.ndarray
    y: np.ndarray
    observed: np.ndarray


def _inputs(folds: Folds) -> _Inputs:
    m = folds.matrices
    rows: dict[str, list[tuple]] = {}
    for r in folds["target_rows"].to_pylist():
        rows.setdefault(r["target"], []).append((r["model"], r["subdir"], r["instance_id"], r["score"]))
    columns: dict[str, dict] = {}
    for r in folds["target_columns"].to_pylist():
        columns.setdefault(r["target"], {})[(r["subdir"], r["instance_id"])] = r["col"]
    sources = {(r["model"], r["target"]): r["predicted"] for r in folds["sources"].to_pylist()
               if r["predicted"] is not None and np.isfinite(r["predicted"])}
    return _Inputs(rows, columns, features_by_model(folds["metadata"].to_pylist()), sources,
                   dict(zip(m.models, m.target_means())))


def _sources_interval(data: _Inputs, target: str, t: int, predicted: float, train: list[str]):
    """(low, high) of the sources' prediction: split-conformal offsets of the training models' held-out logit
    residuals (None when fewer than MIN_RESIDUALS)."""
    pairs = [(data.truth[j][t], data.sources[(j, target)]) for j in train
             if (j, target) in data.sources and j in data.truth and np.isfinite(data.truth[j][t])]
    if len(pairs) < MIN_RESIDUALS:
        return None
    actual, pred = np.array(pairs).T
    lo, hi = interval_offsets(logit(actual, _EPS) - logit(pred, _EPS), LEVEL)
    z = float(logit(predicted, _EPS))
    return float(expit(z + lo)), float(expit(z + hi))


class Anchors(Method):
    name = "anchors"
    summary = ("the targets' item models, a prior from metadata or the sources, and K of the held-out "
               "model's own target instances (agentic anchors)")
    own_options = (Option("anchors", int, 30, "Agentic anchors K per target: the held-out model's own target "
                                              "instances revealed, chosen adaptively 5 at a time (0: the prior's "
                                              "answer).", lo=0, env_name="PACE_ANCHOR_COUNT"),)
    reads = {"abs": frozenset({"anchors", "count", "seed"})}
    trains_on_target_only = True
    inputs = (SqlRows("target_rows", TARGET_ROWS, lambda context: [context.targets, []]),
              SqlRows("target_columns", "SELECT target, subdir, instance_id, col FROM target_columns(?)",
                      lambda context: [context.targets]),
              SqlRows("metadata", METADATA),
              Prior("sources", "default"))

    def evaluate(self, task: str, folds: Folds, opts: Options, fitted: Fit | None = None) -> Evaluation:
        m = folds.matrices
        data = _inputs(folds)
        names = [name for name in folds.names if folds.held_out[name]]
        with blas_limit():           # the folds run on the worker threads; their arrays are small
            done = map_jobs(lambda name: self._fold(folds.fold(name), set(folds.held_out[name]), data,
                                                    opts.anchors), names, jobs())
        rows: dict[str, list] = {k: [] for k in ("model", "target", "predicted", "low", "high", "prior", "anchors")}
        warnings: list[str] = []
        for fold_rows, fold_warnings in done:
            for row in fold_rows:
                for key, value in zip(rows, row):
                    rows[key].append(value)
            warnings += [w for w in fold_warnings if w not in warnings]
        actual = m.target_means()
        held = folds.held_models()
        actual[[i for i, name in enumerate(m.models) if name not in held]] = np.nan
        table = pa.table({"model": pa.array(rows["model"], pa.string()), "target": pa.array(rows["target"], pa.string()),
                          **{k: pa.array(rows[k], pa.float64()) for k in ("predicted", "low", "high")},
                          "prior": pa.array(rows["prior"], pa.string()), "anchors": pa.array(rows["anchors"], pa.int64())})
        return Evaluation(table, actual, warnings=warnings)

    # ------------------------------------------------------------------------------------------ a fold
    def _fold(self, fold: Fold, exclude: set[str], data: _Inputs, count: int) -> tuple[list[tuple], list[str]]:
        """The rows (model, target, predicted, low, high, prior kind, anchors) of one fold's held-out models."""
        m = fold.matrices
        train = m.models[: fold.n_train]
        cells, warnings = [], []
        for t, target in enumerate(m.targets):
            models, keys, y = item_matrix(r for r in data.rows.get(target, []) if r[0] not in exclude)
            if len(models) < MIN_MODELS:
                warnings.append(f"{target}: {len(models)} training model(s) with target rows (at least {MIN_MODELS} "
                                "needed): no item model, no anchors prediction")
                continue
            item_model = fit_target(y, models, feature_matrix(data.features, models), level=LEVEL,
                                    inner_folds=INNER_FOLDS)
            where = data.columns.get(target, {})
            cols = np.array([where.get(k, -1) for k in keys], dtype=np.int64)
            for row in range(fold.n_train, len(m.models)):
                model = m.models[row]
                # which of the items it has (the set its full mean is over), never their results
                has = (cols >= 0) & ~np.isnan(m.P[t][row, np.maximum(cols, 0)]) if m.P[t].shape[1] else cols < -1
                prior, note = self._prior(item_model, data, model, target, t, train)
                if note and note not in warnings:
                    warnings.append(note)
                # none (no truth to score): the estimate of a full run, from the prior alone
                cells.append(_Cell(row, t, item_model, prior, has if has.any() else np.ones_like(has), has, cols,
                                   np.zeros(len(keys)), np.zeros(len(keys), dtype=bool)))
        pool_factors(list({id(c.model): c.model for c in cells}.values()))   # as `pace fit` does
        self._reveal(fold, cells, count)
        out = []
        for c in cells:
            point, low, high = estimate(c.model, c.prior, c.y, c.observed, c.members)
            out.append((m.models[c.row], m.targets[c.t], point, low, high, c.prior.kind, int(c.observed.sum())))
        return out, warnings

    @staticmethod
    def _prior(item_model: TargetModel, data: _Inputs, model: str, target: str, t: int,
               train: list[str]) -> tuple[AbilityPrior, str | None]:
        """metadata, else sources, else population (``anchor_prior``); a note when the sources were wanted
        but their interval could not be made."""
        if model in data.features:
            found = metadata_prior(item_model.features, item_model.abilities, data.features[model])
            if found is not None:
                return found, None
        predicted = data.sources.get((model, target))
        if predicted is not None:
            interval = _sources_interval(data, target, t, predicted, train)
            if interval is not None:
                return sources_prior(item_model, predicted, *interval, LEVEL), None
            return AbilityPrior(0.0, POPULATION_SD, "population"), (
                f"{target}: fewer than {MIN_RESIDUALS} training models with a held-out default prediction "
                "(the split holds none of them out): a model without metadata starts from the population prior")
        return AbilityPrior(0.0, POPULATION_SD, "population"), None

    @staticmethod
    def _reveal(fold: Fold, cells: list[_Cell], count: int) -> None:
        """Reveal up to ``count`` anchors per cell, BATCH at a time: each batch is chosen by ``plan`` from the
        anchors so far, then read from the fold with everything else of the held-out models hidden."""
        m = fold.matrices
        reveal: dict[str, list[tuple[int, int]]] = {}
        while True:
            asked = []
            for c in cells:
                want = min(count, int(c.available.sum())) - int(c.observed.sum())
                if want > 0:
                    step = plan(c.model, c.prior, c.y, c.observed, min(BATCH, want), members=c.available)
                    reveal.setdefault(m.models[c.row], []).extend((c.t, int(c.cols[j])) for j in step)
                    asked.append((c, step))
            if not asked:
                return
            shown = fold.hide_targets(reveal)
            for c, step in asked:
                c.y[step] = shown.P[c.t][c.row, c.cols[step]]
                c.observed[step] = True
