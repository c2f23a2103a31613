"""`pace fit`: fit each target's proxy on every model with target scores and store it as rows.

The stored rows are the predictor: ``predictions`` (sql/061_predictions.sql, over sql/060_fit_predictions.sql) recomputes a model's prediction from
its score rows and ``proxy_weights`` with plain SQL. For ``default`` the rows reproduce the fitted
model's own in-sample predictions exactly; for ``compat`` (zeros for missing data, a fallback to the
mean instead of a clamp, spec §14.1) the gap is measured and reported.

The fit goes through the evaluation's path (:mod:`warehouse.evaluate`): its fold is the fold 'all' of
``eval_folds`` (nothing held out), read into the same inputs, and ``Method.fit`` returns the proxies.
Intervals: the same method is evaluated (``Method.evaluate``) on the split ``eval_folds('loo')`` of the
training models; the ``(1 -+ level) / 2`` quantiles of the held-out residuals (actual - predicted) become
the interval offsets. Their calibration is checked by leaving each residual out of its own interval.
With more than ``settings.kfold_above()`` labelled models (``$PACE_KFOLD_ABOVE``, default 40) the
residuals come from the ``kfold-10`` split instead (each fold reusing the fit's tuned configuration),
and the family split's families are dealt into at most 10 folds: each fold is a whole fit, so
leave-one-out would cost one fit per model (the fit says so in a note).
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import re
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from models.common.parallel import map_jobs
from models.default.basis import large_bases_note, shared_bases
from models.common.folds import KFOLD
from models.common.intervals import interval_offsets
from models.default.link import logit
from warehouse import methods
from warehouse.evaluate import evaluate_split, read_folds, read_inputs, resolve, split_folds
from warehouse.matrices import Matrices, build_matrices
from warehouse.methods.base import Method
from warehouse.methods.data import Folds
from warehouse.methods.options import Options
from warehouse.methods.results import Fit, StoredPairProxy, StoredProxy
from warehouse.registered import registered
from warehouse.settings import jobs, kfold_above
from warehouse.storing import fill_fit_constants, insert_arrow, transaction

__all__ = ["FitRequest", "FitReport", "StoredProxy", "StoredPairProxy", "fit_and_store", "interval_offsets",
           "loo_interval_coverage", "held_out_coverage", "out_of_range_models"]


class FitRequest:
    """What to fit: a method and its options (``count=40``, ...), the source and target benchmarks (None:
    every one of that role), models left out (``exclude``, e.g. to predict them), the interval level,
    whether to estimate intervals, the tasks (Goal A ``abs``, Goal B ``pair``) and, for a restricted fit
    made by `pace predict`, the model it is for."""

    def __init__(self, method: str = "default", *, sources: list[str] | None = None,
                 targets: list[str] | None = None, exclude: list[str] | None = None, level: float = 0.8,
                 intervals: bool = True, tasks: tuple[str, ...] = ("abs", "pair"), restricted_for: str | None = None,
                 **options: Any):
        self.method, self.sources, self.targets, self.exclude = method, sources, targets, list(exclude or [])
        self.level, self.intervals, self.tasks, self.restricted_for = level, intervals, tuple(tasks), restricted_for
        self.options = options


@dataclass
class FitReport:
    fit_id: str
    method: str
    models: list[str]
    targets: list[str]
    n_instances: dict[str, int]
    view_gap: dict[str, float]               # max |predictions view - kernel in-sample| per target
    formula_gap: dict[str, float]            # the same with missing scores as the method sees them
                                             # (compat: 0) instead of the view's training-mean imputation
    resid_lo: dict[str, float]
    resid_hi: dict[str, float]
    interval_loo_coverage: dict[str, float]  # share of held-out truths inside a leave-one-out interval
    seconds: float
    warnings: list[str]
    pair_view_gap: dict[str, float] = field(default_factory=dict)   # max |pair_predictions margin - kernel|
    pair_calibration: dict[str, tuple[float, float]] = field(default_factory=dict)
    loocv_mae: dict[str, float] = field(default_factory=dict)       # held-out MAE per target (score units)
    oor_lo: dict[str, float] = field(default_factory=dict)          # out-of-range interval offsets (logits)
    oor_hi: dict[str, float] = field(default_factory=dict)
    trained_on: dict[str, list[str]] = field(default_factory=dict)  # per target, the models with its scores
    anchors: dict[str, tuple[int, int]] = field(default_factory=dict)  # target -> (models, instances) of its
                                                                     # anchors item model (warehouse.anchors)
    predictions_stored: int = 0          # models whose predictions were stored after the fit (stored_predictions)


def data_hash(models: list[str], columns: list, X: np.ndarray, P: list[np.ndarray]) -> str:
    h = hashlib.sha256(json.dumps([models, [list(c) for c in columns]]).encode())
    for arr in [X, *P]:
        h.update(np.ascontiguousarray(arr, dtype=np.float64).tobytes())
    return h.hexdigest()


EXTRAPOLATION_SPLITS = ("family", "low-3", "high-3")
#: the link keys that are the out-of-range check's robust ability range (stored NULL when not finite)
ROBUST_RANGE = ("range_lo", "range_hi")


def dense(rows: pa.Table, m: Matrices) -> np.ndarray:
    """Prediction rows (model, target, predicted) -> (n, T) in the matrices' order, NaN where none."""
    out = np.full((len(m.models), len(m.targets)), np.nan)
    row, col = {name: i for i, name in enumerate(m.models)}, {t: k for k, t in enumerate(m.targets)}
    for model, target, value in zip(*(rows.column(c).to_pylist() for c in ("model", "target", "predicted"))):
        if model in row and target in col and value is not None:
            out[row[model], col[target]] = value
    return out


def _split_predictions(con: duckdb.DuckDBPyConnection, method: Method, folds: Folds, opts: Options,
                       req: FitRequest, fitted: Fit | None) -> tuple[np.ndarray, np.ndarray]:
    """(actual, held-out predicted), each (n, T), of the method on ``folds``; NaN where a model was not
    held out or has no truth. ``fitted``: the fit, whose configuration the folds may reuse."""
    evaluation = evaluate_split(con, method, "abs", folds, opts, req.sources, req.targets, fitted)
    m = folds.matrices
    actual = m.target_means() if evaluation.actual is None else np.asarray(evaluation.actual, float)
    return actual, dense(resolve(con, evaluation.predictions), m)


def _splits_residuals(con: duckdb.DuckDBPyConnection, method: Method, splits: list[Folds], opts: Options,
                      req: FitRequest, fitted: Fit | None, link: str) -> list[np.ndarray]:
    """Each split's held-out residuals (:func:`_residuals`), in the order of ``splits``. A split of several
    folds runs them on the worker threads; the splits of one fold each (low-3, high-3) would leave all but
    one thread idle, so they run side by side, each on its own cursor (at 1,000 models: ~11 s of 22)."""
    def one(split: Folds, on: duckdb.DuckDBPyConnection) -> np.ndarray:
        return _residuals(*_split_predictions(on, method, split, opts, req, fitted), link)

    single = [k for k, split in enumerate(splits) if len(split.names) == 1]
    out: dict[int, np.ndarray] = {k: one(split, con) for k, split in enumerate(splits) if k not in single}

    def on_cursor(k: int) -> np.ndarray:
        with con.cursor() as cursor:
            return one(splits[k], cursor)

    out.update(zip(single, map_jobs(on_cursor, single, min(jobs(), len(single)))))
    return [out[k] for k in range(len(splits))]


def _residuals(actual: np.ndarray, pred: np.ndarray, link: str) -> np.ndarray:
    """actual - predicted on the link's scale (logits for 'logit')."""
    if link == "logit":
        return logit(actual, 1e-3) - logit(pred, 1e-3)
    return actual - pred


#: the views split_folds reads (sql/037_split_folds.sql): each derives its rows from every score row
_SPLIT_INPUTS = ("target_means", "model_family", "source_ability")


@contextmanager
def _split_inputs_once(con: duckdb.DuckDBPyConnection):
    """Inside the block this connection reads the views behind ``split_folds`` from TEMP tables holding
    their rows (DuckDB looks a name up in the temp schema first), so a fit's four splits compute them
    once: each split costs ~30 s at 10^8 score rows otherwise, nearly all of it these views. The tables
    hold the views' rows as of the block's start and are dropped at its end."""
    made = []
    try:
        for view in _SPLIT_INPUTS:
            con.execute(f"CREATE TEMP TABLE {view} AS SELECT * FROM main.{view}")
            made.append(view)
        yield
    finally:
        for view in made:
            con.execute(f"DROP TABLE IF EXISTS temp.main.{view}")


def _extrapolation_splits(con: duckdb.DuckDBPyConnection, m: Matrices, kfold: bool = False) -> list[Folds]:
    """The extrapolation splits' folds over ``m`` (a split with too few models to train on is skipped).
    ``kfold``: the families are dealt (largest first) into at most KFOLD folds, whole families together."""
    out = []
    for split in EXTRAPOLATION_SPLITS:
        try:
            split_folds(con, split)
        except ValueError:          # too few labelled models for this split
            continue
        folds = read_folds(con, split, m, m.targets)
        if kfold and len(folds.held_out) > KFOLD:
            merged: list[list[int]] = [[] for _ in range(KFOLD)]
            for fold in sorted(folds.held_rows(), key=lambda f: (-len(f), m.models[f[0]])):
                min(merged, key=len).extend(fold)
            folds = Folds(split, m, {f"k{k}": [m.models[r] for r in sorted(f)] for k, f in enumerate(merged) if f})
        out.append(folds)
    return out


def loo_interval_coverage(residuals: np.ndarray, level: float) -> float:
    """Share of residuals inside the interval built from all the *other* residuals."""
    r = residuals[np.isfinite(residuals)]
    if r.size < 3:
        return float("nan")
    inside = []
    for i in range(r.size):
        lo, hi = interval_offsets(np.delete(r, i), level)
        inside.append(lo <= r[i] <= hi)
    return float(np.mean(inside))


def held_out_coverage(preds: dict, loo: dict, ext: dict, out_of_range: set[str], level: float,
                      logit_scale: bool) -> dict[str, float]:
    """Per target, the share (0-1) of a run's held-out truths inside the interval the method's stored fit
    would give them; ``AVERAGE`` the mean over targets.

    ``preds``, ``loo``, ``ext``: ``{(model, target): (predicted, actual)}`` of the run judged, of the same
    method's leave-one-out run, and of its extrapolation-split runs. A model's interval is its
    prediction plus the split-conformal offsets (:func:`interval_offsets`) of the *other* models' LOO
    residuals, as `pace fit` stores them; on the logit scale when ``logit_scale`` (method default), where a
    model in ``out_of_range`` pools the extrapolation residuals too (``oor_lo`` / ``oor_hi``). Judging a
    run by its own residuals instead would say nothing: with n distinct residuals the share is a function
    of n alone (12 of 14 inside at 80 %), whatever the predictions."""
    def scale(v):
        return logit(v, 1e-3) if logit_scale else np.asarray(v, float)

    out = {}
    for target in sorted({t for _, t in preds}):
        inside = []
        for (model, t), (p, a) in preds.items():
            if t != target:
                continue
            pool = [scale(aa) - scale(pp) for (mm, tt), (pp, aa) in loo.items() if tt == target and mm != model]
            if logit_scale and model in out_of_range:
                pool += [scale(aa) - scale(pp) for (mm, tt), (pp, aa) in ext.items() if tt == target and mm != model]
            lo, hi = interval_offsets(np.asarray(pool, float), level)
            inside.append(scale(p) + lo <= scale(a) <= scale(p) + hi)
        out[target] = float(np.mean(inside)) if inside else float("nan")
    out["AVERAGE"] = float(np.nanmean(list(out.values()))) if out else float("nan")
    return out


def out_of_range_models(con: duckdb.DuckDBPyConnection, run_id: str) -> set[str]:
    """The held-out models of a stored run whose source ability (``source_ability``) lies outside the range of
    their fold's training models (the labelled models not held out with them)."""
    rows = con.execute("""
        WITH held AS (SELECT fold, model FROM loocv_folds WHERE run_id = ?),
        labelled AS (SELECT DISTINCT model FROM target_means WHERE n_scored > 0),
        ranges AS (
            SELECT h.fold, min(a.ability) AS lo, max(a.ability) AS hi
            FROM (SELECT DISTINCT fold FROM held) AS h
            CROSS JOIN labelled AS l
            JOIN source_ability AS a ON a.model = l.model
            WHERE l.model NOT IN (SELECT model FROM held AS x WHERE x.fold = h.fold)
            GROUP BY h.fold)
        SELECT h.model FROM held AS h JOIN ranges AS r USING (fold) JOIN source_ability AS a USING (model)
        WHERE a.ability < r.lo OR a.ability > r.hi""", [run_id]).fetchall()
    return {r[0] for r in rows}


# ------------------------------------------------------------------------------------------ store
def fit_and_store(con: duckdb.DuckDBPyConnection, req: FitRequest, reopen=None, also_store=None) -> FitReport:
    """Fit and store. ``reopen(con) -> con``, when given, is called between the computation and the
    writes: the CLI computes on a read-only connection (other readers keep working) and writes on
    a read-write one it opens only then. A training basis is built once per distinct training block
    (``models.default.basis.shared_bases``): the pairwise fit, the tuning and the K-fold interval residuals
    train on the same folds.

    The rows, the check that the stored rows predict what the kernels did, and ``also_store(con, fit_id)``
    (e.g. the anchors' item models of this fit) are one transaction: a failure in any stores nothing."""
    with shared_bases() as bases:
        return _fit_and_store(con, req, reopen, bases, also_store)


def _no_targets(con: duckdb.DuckDBPyConnection) -> str:
    """Why there is no target to fit: no benchmark has the role, or those that have it have no rows."""
    named = [b for (b,) in con.execute("SELECT benchmark FROM benchmarks WHERE role = 'target' "
                                       "ORDER BY benchmark").fetchall()]
    how = ("ingest agentic scores (gaia, swebench, ...) or `pace import openhands-index DIR`, or "
           "`pace benchmarks set NAME target`")
    if not named:
        return f"no benchmark has the role 'target': {how}"
    return (f"no target benchmark has score rows ({', '.join(named)} {'has' if len(named) == 1 else 'have'} "
            f"the role 'target' and no rows): {how}")


def _fit_and_store(con: duckdb.DuckDBPyConnection, req: FitRequest, reopen, bases, also_store=None) -> FitReport:
    method = methods.get(req.method)
    opts = method.options(req.options)
    started = time.perf_counter()
    _cap_duckdb_cache(con)
    everyone = build_matrices(con, sources=req.sources, targets=req.targets)
    _release_memory(con)
    if not everyone.targets:                                 # nothing to learn a proxy for
        raise ValueError(_no_targets(con))
    if not np.isfinite(everyone.target_means()).any():      # nothing to learn a proxy from
        raise ValueError(f"no model has scores on the target benchmarks ({', '.join(everyone.targets)}): ingest "
                         "them or `pace import openhands-index DIR` first")
    unknown = sorted(set(req.exclude) - set(everyone.models))
    if unknown:
        raise ValueError(f"--exclude names models the warehouse does not know: {', '.join(unknown)}")
    folds = read_folds(con, "all", everyone, req.targets)
    rows = [i for i, name in enumerate(everyone.models) if name not in set(req.exclude)]
    if method.labelled_only:
        rows = sorted(set(rows) & set(folds.labelled_rows()))
    folds = read_inputs(con, method, folds.restrict(rows), opts, req.sources, req.targets)
    m = folds.matrices
    models, X, P = m.models, m.X, m.P
    fitted = method.fit(folds, opts, req.tasks)
    _release_memory(con)
    proxies, pair_proxies, warnings = fitted.proxies, fitted.pair_proxies, list(fitted.warnings)
    if fitted.in_sample is not None:
        in_sample = dense(resolve(con, fitted.in_sample), m)
        for proxy in proxies:
            proxy.in_sample = in_sample[:, m.targets.index(proxy.target)]
    link = "logit" if proxies and proxies[0].link else "identity"
    empty = np.full((len(models), len(m.targets)), np.nan)
    n_labelled = int(np.isfinite(m.target_means()).any(axis=1).sum())
    interval_split = "loo" if n_labelled <= kfold_above() else f"kfold-{KFOLD}"
    # Above the threshold each interval fold may reuse the fit's configurations (q, nc, blend) instead of
    # tuning its own: a tuning costs K training bases, the fold's fit one (at 100 models x 90k instances
    # ~4 s each), and a fit has ~20 interval folds. Selection, weights and the ability are still refitted.
    reuse = fitted if interval_split != "loo" else None
    if req.intervals and proxies:
        with _split_inputs_once(con):
            interval_folds = read_folds(con, interval_split, m, m.targets)
            extrapolation_splits = _extrapolation_splits(con, m, interval_split != "loo") if link == "logit" else []
        _release_memory(con)
        actual, held_out = _split_predictions(con, method, interval_folds, opts, req, reuse)
        if interval_split != "loo":
            warnings.append(f"intervals from {KFOLD}-fold held-out residuals, not leave-one-out: {n_labelled} models "
                            f"with target scores > {kfold_above()} (PACE_KFOLD_ABOVE); families dealt into at most "
                            f"{KFOLD} folds; each fold refits selection and weights with the fit's tuned "
                            "configuration")
    else:
        actual, held_out = empty, empty
    residuals = _residuals(actual, held_out, link)
    bases.release()       # the extrapolation splits' training sets are their own: nothing left to share
    extrapolation = np.full((0, len(m.targets)), np.nan)
    if req.intervals and link == "logit":
        extrapolation = np.concatenate(_splits_residuals(con, method, extrapolation_splits, opts, req, reuse, link)
                                       or [extrapolation])
    if bases.large:
        warnings.append(large_bases_note(bases.large))
    fit_id = f"fit-{req.method}-{datetime.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
    digest = data_hash(models, m.columns, X, P)
    warnings = _merge_untrained(warnings)
    report = FitReport(fit_id, req.method, models, m.targets, {}, {}, {}, {}, {}, {}, 0.0, warnings)

    weight_rows, fit_rows, leaf_rows, centre_rows = [], [], [], None
    sources = sorted({c[0] for c in m.columns})
    for t, proxy in enumerate(proxies):
        lo_r, hi_r = interval_offsets(residuals[:, t], req.level)
        report.resid_lo[proxy.target], report.resid_hi[proxy.target] = lo_r, hi_r
        report.interval_loo_coverage[proxy.target] = loo_interval_coverage(residuals[:, t], req.level)
        report.n_instances[proxy.target] = len({int(c) for c in proxy.cols})
        report.trained_on[proxy.target] = list(proxy.trained_on or models)
        errors = np.abs(actual[:, t] - held_out[:, t])
        report.loocv_mae[proxy.target] = float(np.nanmean(errors)) if np.isfinite(errors).any() else float("nan")
        params = dict(proxy.config, B=opts.B, seed=opts.seed, sources=req.sources,
                      interval_loo_coverage=report.interval_loo_coverage[proxy.target])
        row = {"fit_id": fit_id, "task": "abs", "method": req.method, "target": proxy.target, "budget": opts.count,
               "params": json.dumps(params), "intercept": proxy.intercept, "clamp_lo": proxy.lo,
               "clamp_hi": proxy.hi, "mix_weight": proxy.mix, "resid_lo": _none(lo_r), "resid_hi": _none(hi_r),
               "interval_level": req.level, "trained_on": proxy.trained_on or models, "data_hash": digest,
               "link": "identity", "sources": sources, "restricted_for": req.restricted_for,
               "loocv_mae": _none(report.loocv_mae[proxy.target]),
               **released_range(con, proxy.trained_on or models)}
        if proxy.link:
            oor = extrapolation[:, t]
            oor_lo, oor_hi = interval_offsets(np.concatenate([oor, residuals[:, t]]), req.level)
            # a range bound that could not be computed is NULL, never NaN (DuckDB orders NaN above every number)
            row.update({k: _none(float(v)) if k in ROBUST_RANGE else float(v) for k, v in proxy.link.items()
                        if k not in ("scale", "centres")},
                       link="logit", oor_lo=_none(min(oor_lo, lo_r)), oor_hi=_none(max(oor_hi, hi_r)))
            report.oor_lo[proxy.target], report.oor_hi[proxy.target] = row["oor_lo"], row["oor_hi"]
            if t == 0:
                leaf_rows = _leaf_rows(fit_id, m, proxy.link["scale"])
                centre_rows = _centre_rows(fit_id, m, proxy.link["centres"])
        fit_rows.append(row)
        for c, side, w, ctr in zip(proxy.cols, proxy.side, proxy.weight, proxy.center):
            b, s, i = m.columns[int(c)]
            weight_rows.append((fit_id, "abs", proxy.target, b, s, i, side, float(w), float(ctr)))

    for proxy in pair_proxies:
        report.pair_calibration[proxy.target] = (proxy.cal_a, proxy.cal_b)
        params = dict(proxy.config, B=opts.B, seed=opts.seed, sources=req.sources)
        fit_rows.append({"fit_id": fit_id, "task": "pair", "method": req.method, "target": proxy.target,
                         "budget": opts.count, "params": json.dumps(params), "mix_weight": params.get("m"),
                         "cal_a": proxy.cal_a, "cal_b": proxy.cal_b, "trained_on": proxy.trained_on or models,
                         "data_hash": digest, "sources": sources, "restricted_for": req.restricted_for})
        for c, w, ctr in zip(proxy.cols, proxy.weight, proxy.center):
            b, s_, i = m.columns[int(c)]
            weight_rows.append((fit_id, "pair", proxy.target, b, s_, i, "pair", float(w), float(ctr)))

    if reopen is not None:
        con = reopen(con)
    with transaction(con):
        for row in fit_rows:
            names = list(row)
            con.execute(f"INSERT INTO proxy_fits ({', '.join(names)}, created_at) "
                        f"VALUES ({', '.join('?::JSON' if n == 'params' else '?' for n in names)}, "
                        "current_localtimestamp())", [row[n] for n in names])
        if weight_rows:                    # none when no instance got a weight (a restricted fit's only source)
            con.executemany("INSERT INTO proxy_weights VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", weight_rows)
        if leaf_rows:
            con.executemany("INSERT INTO proxy_leaves (fit_id, benchmark, subdir, centre, scale, loading) "
                            "VALUES (?, ?, ?, ?, ?, ?)", leaf_rows)
        if centre_rows is not None:
            insert_arrow(con, "proxy_ability_instances", centre_rows)
        fill_fit_constants(con)
        _check_stored(con, report, fit_id, models, proxies, pair_proxies, X, method)
        if also_store is not None:
            also_store(con, fit_id)
    report.seconds = time.perf_counter() - started
    return report


def _check_stored(con: duckdb.DuckDBPyConnection, report: FitReport, fit_id: str, models: list[str], proxies,
                  pair_proxies, X: np.ndarray, method: Method) -> None:
    """The stored rows must be the predictor: compare the view with the kernel on the training models (the
    gaps go into ``report``). The proxy's view (source_predictions), not ``predictions``: that one also
    computes every model's anchors estimate before its fit_id filter applies (~100 s at 1,000 models, for none
    here: a model served by its anchors has another fit_id there), and serves the proxy's rows as they are."""
    view = {(mo, t): v for mo, t, v in con.execute(
        "SELECT model, target, predicted FROM source_predictions WHERE fit_id = ?", [fit_id]).fetchall()}
    for proxy in proxies:
        kernel_value = (lambda k: float(k)) if proxy.link else (lambda k: float(np.clip(k, proxy.lo, proxy.hi)))
        gaps = [abs(view[(mo, proxy.target)] - kernel_value(k))
                for mo, k in zip(models, proxy.in_sample) if np.isfinite(k) and (mo, proxy.target) in view]
        report.view_gap[proxy.target] = max(gaps) if gaps else float("nan")
        if proxy.link:
            continue
        # compat's own semantics: a missing score is a 0, not the training mean
        x = np.nan_to_num(X[:, proxy.cols], nan=0.0) if method.missing_as_zero else \
            np.where(np.isnan(X[:, proxy.cols]), proxy.center, X[:, proxy.cols])
        formula = np.clip(proxy.intercept + (x - proxy.center) @ proxy.weight, proxy.lo, proxy.hi)
        kernel = np.clip(proxy.in_sample, proxy.lo, proxy.hi)
        finite = np.isfinite(kernel)
        report.formula_gap[proxy.target] = float(np.abs(formula - kernel)[finite].max()) if finite.any() else float("nan")
    for proxy in pair_proxies:
        x = np.where(np.isnan(X[:, proxy.cols]), proxy.center, X[:, proxy.cols])
        # compared in SQL: a million pairs per target at 1,000 models
        with registered(con, _pair_kernel=pa.table({"model": models, "s": x @ proxy.weight})):
            gap = con.execute("""SELECT max(abs(p.margin - (a.s - b.s))) FROM pair_predictions AS p
                                 JOIN _pair_kernel AS a ON a.model = p.model
                                 JOIN _pair_kernel AS b ON b.model = p.opponent
                                 WHERE p.fit_id = ? AND p.target = ? AND p.model <> p.opponent""",
                              [fit_id, proxy.target]).fetchall()[0][0]
        report.pair_view_gap[proxy.target] = float("nan") if gap is None else float(gap)


def released_range(con: duckdb.DuckDBPyConnection, trained_on: list[str]) -> dict:
    """released_lo / released_hi: the earliest and latest release date (view model_release) of the models a
    proxy was trained on, for the era check of fit_predictions (None where no date is known)."""
    lo, hi = con.execute("SELECT min(release_date), max(release_date) FROM model_release "
                         "WHERE model IN (SELECT unnest(?::VARCHAR[]))", [list(trained_on)]).fetchone()
    return {"released_lo": lo, "released_hi": hi}


def _cap_duckdb_cache(con: duckdb.DuckDBPyConnection) -> None:
    """DuckDB keeps the blocks it read cached up to its memory_limit (80 % of RAM by default): 2.5 GB of
    the fit's peak at 100 models x 9M rows was cache. The kernels need that memory more, so the fit caps
    DuckDB at ``$PACE_FIT_MEMORY_LIMIT`` (default 2GB). The fit's own queries stream their cells
    (``fold_cells``): at 300 models x 100k instances a one-row list of them did not fit in 2GB."""
    limit = os.environ.get("PACE_FIT_MEMORY_LIMIT") or "2GB"
    try:
        con.execute(f"SET memory_limit = '{limit}'")
    except duckdb.Error as exc:
        raise ValueError(f"PACE_FIT_MEMORY_LIMIT must be a size such as 2GB, not {limit!r}") from exc


def _release_memory(con: duckdb.DuckDBPyConnection) -> None:
    """Hand back to the system what the fit holds but no longer uses; each stays resident through the
    whole fit otherwise (at 1,000 models x 100k instances, after the matrices are built): Arrow's
    allocator keeps the memory the cells freed (1.4 GB), DuckDB its cached blocks (0.8 GB: a later query
    reads them again), glibc the free parts of its heap (1.3 GB)."""
    pa.default_memory_pool().release_unused()
    try:
        con.execute("SET memory_limit = '64MB'")
    except duckdb.Error:      # more than that is pinned right now: keep the cache
        pass
    _cap_duckdb_cache(con)
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):   # not glibc
        pass


def _merge_untrained(warnings: list[str]) -> list[str]:
    """The kernels' per-target "T: no target value for A, B, ..." notes as one line per set of targets
    missed: models with source scores only (the ability scale uses them, no proxy trains on them), and
    models lacking only some targets (e.g. commit0, which fewer models have), named with those targets."""
    missed: dict[str, list[str]] = {}
    rest = []
    for w in warnings:
        found = re.search(r"^(.+?): no target value for (.+?) \(", w)
        if found:
            for name in found.group(2).split(","):
                missed.setdefault(name.strip(), []).append(found.group(1))
        elif w not in rest:
            rest.append(w)
    by_set: dict[tuple[str, ...], list[str]] = {}
    for name, ts in missed.items():
        by_set.setdefault(tuple(sorted(set(ts))), []).append(name)
    for ts, names in sorted(by_set.items(), key=lambda item: (-len(item[0]), item[0])):
        rest.append(f"{len(names)} models have no score on {', '.join(ts)} (not trained on there; the default "
                    f"method's ability scale uses their source scores): {', '.join(names)}")
    return rest


def _leaf_rows(fit_id: str, m: Matrices, scale) -> list[tuple]:
    """proxy_leaves rows of an ability scale: leaf index -> (benchmark, subdir) via the first column of it."""
    first = {}
    for col, leaf in enumerate(m.leaves):
        first.setdefault(int(leaf), col)
    rows = []
    for leaf, centre, spread, loading in zip(scale.leaves, scale.centre, scale.scale, scale.loading):
        benchmark, subdir, _ = m.columns[first[int(leaf)]]
        rows.append((fit_id, benchmark, subdir, float(centre), float(spread), float(loading)))
    return rows


def _centre_rows(fit_id: str, m: Matrices, centres: np.ndarray):
    """proxy_ability_instances rows (an Arrow table): the instances of the ability scale and their centres."""
    cols = np.flatnonzero(np.isfinite(centres))
    return pa.table({"fit_id": pa.array([fit_id] * cols.size, pa.string()),
                     "benchmark": pa.array([m.columns[c][0] for c in cols], pa.string()),
                     "subdir": pa.array([m.columns[c][1] for c in cols], pa.string()),
                     "instance_id": pa.array([m.columns[c][2] for c in cols], pa.string()),
                     "centre": pa.array(centres[cols], pa.float64())})


def _none(v: float) -> float | None:
    return None if not np.isfinite(v) else v
