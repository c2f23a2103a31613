"""The proxy kernels as DuckDB UDFs, and the method table: (task, method, params) -> ``models``.

``pace_abs_eval`` / ``pace_pair_eval(<fold_matrix columns>, params)`` take one ``fold_matrix`` row
(sql/038: one fold's models as sparse cells, training models first) and return predictions,
configurations and selections as nested lists, which the evaluation SQL unnests into the ``loocv_*``
tables. Selection columns come back as indices into ``source_columns(src)``.

Each method says how it meets the folds (``unit``):

* ``fold``  the kernel fits on the fold's training rows and predicts its held-out rows; the evaluation
  calls it once per fold row of ``eval_folds`` (``default``), and ``pace fit`` is the fold 'all'.
* ``split`` the kernel needs every model of the split at once (``compat``: the published transductive
  basis and tie order; ``instance``: nested tuning shared between folds; the baselines); it is called
  once, on the fold 'all' row, with the split's held-out sets in ``params["folds"]``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

import duckdb
import numpy as np
import pyarrow as pa

from warehouse.matrices import Matrices, fold_row_to_matrices, published_arrays
from warehouse.udfs import REGISTRARS

_COMMON = ("configs STRUCT(target VARCHAR, fold INTEGER, m DOUBLE, nc_h INTEGER, nc_d INTEGER, "
           "q DOUBLE, objective DOUBLE, cal_a DOUBLE, cal_b DOUBLE)[], "
           "sel STRUCT(fold INTEGER, target VARCHAR, side VARCHAR, col INTEGER, rank INTEGER, "
           "weight DOUBLE, nc INTEGER)[], "
           "warnings VARCHAR[]")
ABS_RESULT = f"STRUCT(pred DOUBLE[][], actual DOUBLE[][], {_COMMON})"
PAIR_RESULT = f"STRUCT(margin DOUBLE[][][], prob DOUBLE[][][], neutral BOOLEAN[][][], actual DOUBLE[][], {_COMMON})"

METHODS: dict[str, Callable[..., Any]] = {}        # Goal A: name -> fn(Matrices, params)
PAIR_METHODS: dict[str, Callable[..., Any]] = {}   # Goal B
FOLD_METHODS: dict[str, Callable[..., Any]] = {}   # Goal A, unit 'fold': name -> fn(Matrices, n_train, params)


def method(name: str, registry: dict = METHODS):
    def register(fn):
        registry[name] = fn
        return fn
    return register


def unit(name: str) -> str:
    """'fold' when the method's kernel runs per fold row, 'split' when it needs the whole split at once."""
    return "fold" if name in FOLD_METHODS else "split"


@dataclass
class FoldResult:
    """Predictions of a split evaluation: pred (n, T) NaN outside the held-out folds; actual (n, T)."""
    pred: np.ndarray
    actual: np.ndarray
    configs: dict = field(default_factory=dict)
    selections: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    fold_configs: dict = field(default_factory=dict)
    sweep: dict = field(default_factory=dict)


def held_out_folds(m: Matrices, params: dict) -> list[list[int]] | None:
    """params["folds"] (lists of model names, from split_folds) -> row indices; None for plain LOOCV."""
    if params.get("split", "loo") == "loo" or not params.get("folds"):
        return None
    index = {name: i for i, name in enumerate(m.models)}
    folds = [[index[name] for name in fold if name in index] for fold in params["folds"]]
    return [f for f in folds if f]


def folds_by_masking(m: Matrices, folds: list[list[int]], loo_kernel) -> FoldResult:
    """Split predictions from a leave-one-out kernel that skips rows without a target: per fold, the
    held-out rows' targets are hidden, so each held-out row is predicted from exactly the fold's
    training rows (the other held-out rows have no target to train on)."""
    actual = m.target_means()
    pred = np.full(actual.shape, np.nan)
    warnings: list[str] = []
    for fold in folds:
        P = [p.copy() for p in m.P]
        for p in P:
            p[fold] = np.nan
        result = loo_kernel(m.X, P)
        pred[fold] = np.asarray(result.pred, float)[fold]
        warnings += [w for w in result.warnings if w not in warnings and "no target value" not in w]
    return FoldResult(pred, actual, warnings=warnings)


@method("compat")
def compat_abs(m: Matrices, params: dict):
    """The published pipeline on the published loader's arrays (zeros for missing, float32)."""
    from models import compat

    def run(X, P, models):
        Xv, kept, P32, Y = published_arrays(X, P)
        common = dict(models=models, count=params["count"], B=params["B"], seed=params["seed"])
        if params.get("mode") == "fit":
            configs, _ = compat.frozen_abs_configs(params["count"], m.targets, q=params.get("q"), m=params.get("m"),
                                                   nc_h=params.get("nc_h"), nc_d=params.get("nc_d"))
            return compat.fit_abs(Xv, Y, P32, m.targets, configs=configs, **common), kept
        if params.get("auto_tune"):
            q = params.get("q")
            m_grid = params.get("m_grid") or compat.M_GRID
            return compat.loocv_abs_autotune(Xv, Y, P32, m.targets, q_grid=None if q is None else [q],
                                             nc_max=params.get("nc_max", 10), m_grid=m_grid, **common), kept
        configs, warn = compat.frozen_abs_configs(params["count"], m.targets, q=params.get("q"), m=params.get("m"),
                                                  nc_h=params.get("nc_h"), nc_d=params.get("nc_d"))
        result = compat.loocv_abs_frozen(Xv, Y, P32, m.targets, configs=configs, **common)
        if warn:
            result.warnings.append(warn)
        return result, kept

    folds = held_out_folds(m, params)
    if folds is None:
        rows = labelled_rows(m)
        if len(rows) == len(m.models):
            return run(m.X, m.P, m.models)
        result, kept = run(m.X[rows], [p[rows] for p in m.P], [m.models[r] for r in rows])
        return on_rows(result, rows, len(m.models)), kept
    # The published loader gives every model a target (missing = 0), so held-out rows cannot be hidden by
    # masking: each held-out model is predicted by the published LOOCV on the training models plus itself.
    Y_pub = published_arrays(m.X, m.P)[3].astype(float)
    pred = np.full(Y_pub.shape, np.nan)
    for i, rows in _compat_fold_rows(m, folds):
        result, _ = run(m.X[rows], [p[rows] for p in m.P], [m.models[r] for r in rows])
        pred[i] = np.asarray(result.pred, float)[rows.index(i)]
    return FoldResult(pred, Y_pub), np.arange(m.X.shape[1])


def labelled_rows(m: Matrices) -> list[int]:
    """Rows of the models with a target score. The published pipeline's model list is exactly those: a
    model with source scores only (an older model ingested for the ability scale) would enter it with
    targets of 0."""
    return [int(i) for i in np.flatnonzero(np.isfinite(m.target_means()).any(axis=1))]


def on_rows(result, rows: list[int], n: int):
    """A result computed on ``rows`` of the matrices, expanded back to all n rows (NaN elsewhere); fold
    indices of its selections and configurations renumbered to the full row order."""
    from dataclasses import replace

    expand = np.full((n, np.asarray(result.pred).shape[1]), np.nan)
    pred, actual = expand.copy(), expand.copy()
    pred[rows], actual[rows] = np.asarray(result.pred, float), np.asarray(result.actual, float)
    fold = {k: rows[k] for k in range(len(rows))}
    selections = [replace(s, fold=fold.get(s.fold, s.fold)) for s in result.selections]
    configs = getattr(result, "fold_configs", None) or {}
    return FoldResult(pred, actual, configs=dict(result.configs), selections=selections,
                      warnings=list(result.warnings), fold_configs={(fold.get(f, f), t): c
                                                                   for (f, t), c in configs.items()})


def _compat_fold_rows(m: Matrices, folds: list[list[int]]):
    """(held-out row i, rows = its fold's training models + i) for every held-out row: compat's published
    loader gives every model a target, so a held-out model is evaluated by the published LOOCV on exactly
    the models it may learn from plus itself."""
    labelled = set(labelled_rows(m))
    for fold in folds:
        train = sorted(labelled - set(fold))
        for i in fold:
            yield i, sorted(train + [i])


@method("default", FOLD_METHODS)
def default_fold(m: Matrices, n_train: int, params: dict) -> np.ndarray:
    """The default method (models/shrinkage.py) on one fold: rows ``:n_train`` train (those with a target
    score train the proxies; all of them fit the ability scale), rows ``n_train:`` are predicted. Returns
    (n, T) predictions, NaN on the training rows. ``params["fixed_configs"]`` (target -> AbsConfig, in
    process only) fixes the Pace part's configuration instead of tuning it inside the fold."""
    from models import shrinkage

    actual = m.target_means()
    n = len(m.models)
    train = np.arange(n_train)
    held = np.arange(n_train, n)
    pred = np.full(actual.shape, np.nan)
    if held.size == 0:
        return pred
    labelled = train[np.isfinite(actual[train]).any(axis=1)]
    fit = shrinkage.fit_shrunk(m.X, actual, m.targets, m.leaves, m.n_leaves, train=labelled, scale_rows=train,
                               collapsed=m.collapsed_mask(), n_instances=m.target_counts(), models=m.models,
                               count=params["count"], seed=params["seed"], n_jobs=jobs(), kfold_above=kfold_above(),
                               configs=params.get("fixed_configs"), call_group=_call_group(m, params))
    pred[held] = fit.predict(m.X, held)
    return pred


def _call_group(m: Matrices, params: dict) -> np.ndarray:
    """(S,) runner-call group of each source column: from the matrices' column keys, or (a fold row
    from SQL carries no keys) from ``params["call_group"]``, which the evaluation adds."""
    if params.get("call_group") is not None:
        return np.asarray(params["call_group"], dtype=np.int64)
    return m.call_groups()


@method("default")
def default_abs(m: Matrices, params: dict):
    """The default method over a whole split in process (``pace fit``'s interval residuals): each fold's
    rows are reordered training-first and handed to ``default_fold``, exactly as the evaluation's fold
    rows are."""
    from models.parallel import blas_limit, map_jobs

    actual = m.target_means()
    labelled = np.flatnonzero(np.isfinite(actual).any(axis=1))
    folds = held_out_folds(m, params) or [[int(i)] for i in labelled]
    pred = np.full(actual.shape, np.nan)

    def run(fold):
        held = sorted(int(i) for i in fold)
        rows = [i for i in range(len(m.models)) if i not in set(held)] + held
        return held, default_fold(m.subset(rows), len(rows) - len(held), params)[len(rows) - len(held):]

    # With fixed configurations (a K-fold fit) a fold's fit has no tuning, hence no threads of its own:
    # the folds run on the worker threads, under one single-threaded BLAS scope for all of them.
    with blas_limit():
        for held, fold_pred in map_jobs(run, folds, jobs() if params.get("fixed_configs") else 1):
            pred[held] = fold_pred
    return FoldResult(pred, actual), np.arange(m.X.shape[1])


@method("instance")
def instance_abs(m: Matrices, params: dict):
    """The instance-level Pace proxy with the flaws of spec §18-§20 fixed (models/default.py): masked missing
    data, inductive basis, nested tuning. The default method before source abilities were added."""
    from models import default

    common = dict(models=m.models, count=params["count"], B=params["B"], seed=params["seed"], n_jobs=jobs())
    if params.get("mode") == "fit":
        return default.fit_abs_default(m.X, m.P, m.targets, **common), np.arange(m.X.shape[1])

    def loo(X, P):
        return default.loocv_abs_default(X, P, m.targets, nested=True, missing=params.get("missing") or "mask",
                                         **common)

    folds = held_out_folds(m, params)
    result = loo(m.X, m.P) if folds is None else folds_by_masking(m, folds, loo)
    return result, np.arange(m.X.shape[1])


def _baseline(name: str, doc: str):
    def run(m: Matrices, params: dict):
        from models import baselines

        def loo(X, P):
            if name == "mean":
                return baselines.loocv_train_mean(X, P, m.targets, models=m.models)
            if name == "random-c":
                return baselines.loocv_random_c(X, P, m.targets, models=m.models, count=params["count"],
                                                seed=params["seed"])
            return baselines.loocv_benchmark_ridge(X, P, m.targets, m.column_benchmarks(), models=m.models)

        folds = held_out_folds(m, params)
        result = loo(m.X, m.P) if folds is None else folds_by_masking(m, folds, loo)
        return result, np.arange(m.X.shape[1])
    run.__doc__ = doc
    return method(name)(run)


_baseline("mean", "Baseline: the training models' mean target.")
_baseline("random-c", "Baseline: C random source instances, their mean score, a 1-D OLS (20 draws).")
_baseline("bench-ridge", "Baseline: ridge regression on source-benchmark (leaf) averages.")


def kfold_above() -> int:
    """Above this many training models tuning and interval residuals use K-fold, not leave-one-out:
    $PACE_KFOLD_ABOVE, else ``models.folds.KFOLD_ABOVE``."""
    import os

    from models.folds import KFOLD_ABOVE

    value = os.environ.get("PACE_KFOLD_ABOVE")
    if not value:
        return KFOLD_ABOVE
    try:
        parsed = int(value)
    except ValueError:
        parsed = -1
    if parsed < 2:
        raise ValueError(f"PACE_KFOLD_ABOVE must be an integer >= 2, not {value!r}")
    return parsed


def jobs() -> int:
    """Worker threads for the kernels: see :func:`warehouse.settings.jobs` (``$PACE_JOBS``)."""
    from warehouse.settings import jobs as configured

    return configured()


@dataclass
class PairFoldResult:
    """Pair predictions of a split evaluation: margins / prob (n, n, T), NaN unless the row model was held out."""
    margins: np.ndarray
    prob: np.ndarray
    actual: np.ndarray
    configs: dict = field(default_factory=dict)
    selections: list = field(default_factory=list)
    warnings: list = field(default_factory=list)


@method("compat", PAIR_METHODS)
def compat_pair(m: Matrices, params: dict):
    """The published Goal B (pinned to Goal A's strict selection), on the published loader's arrays."""
    from models import pair

    def run(X, P, models):
        Xv, kept, P32, Y = published_arrays(X, P)
        common = dict(models=models, count=params["count"], B=params["B"], seed=params["seed"], pin_a=True,
                      strict=True)
        if params.get("auto_tune"):
            return pair.loocv_pair_autotune(Xv, Y, P32, m.targets, nc_max=params.get("nc_max", 10), **common), kept
        configs, _ = pair.frozen_pair_configs(params["count"], m.targets, pin_a=True)
        return pair.loocv_pair_frozen(Xv, Y, P32, m.targets, configs=_override(configs, params), **common), kept

    folds = held_out_folds(m, params)
    if folds is None:
        rows = labelled_rows(m)     # models with source scores only are not in the published model list
        result, kept = run(m.X[rows], [p[rows] for p in m.P], [m.models[r] for r in rows])
        if len(rows) < len(m.models):
            n, T = len(m.models), len(m.targets)
            margins, prob = np.full((n, n, T), np.nan), np.full((n, n, T), np.nan)
            margins[np.ix_(rows, rows)] = np.asarray(result.margins, float)
            prob[np.ix_(rows, rows)] = np.asarray(result.prob, float)
            actual = np.full((n, T), np.nan)
            actual[rows] = np.asarray(result.actual, float)
            result = PairFoldResult(margins, prob, actual, warnings=list(result.warnings))
        # the published rule: a zero margin is a predicted loss, never an abstention
        return result, kept, np.zeros(result.margins.shape, bool)
    # as compat_abs: each held-out model is evaluated by the published LOOCV on its training models plus itself
    n, T = m.X.shape[0], len(m.targets)
    margins, prob = np.full((n, n, T), np.nan), np.full((n, n, T), np.nan)
    for i, rows in _compat_fold_rows(m, folds):
        result, _ = run(m.X[rows], [p[rows] for p in m.P], [m.models[r] for r in rows])
        k = rows.index(i)
        margins[i, rows] = np.asarray(result.margins, float)[k]
        prob[i, rows] = np.asarray(result.prob, float)[k]
    actual = published_arrays(m.X, m.P)[3].astype(float)
    return PairFoldResult(margins, prob, actual), np.arange(m.X.shape[1]), np.zeros(margins.shape, bool)


@method("default", PAIR_METHODS)
def default_pair(m: Matrices, params: dict):
    """The honest Goal B (models/pair_default.py): soft labels, cross-fitted calibration, neutral abstentions."""
    from models import pair_default

    def loo(X, P):
        return pair_default.loocv_pair_default(X, P, m.targets, models=m.models, count=params["count"],
                                               B=params["B"], seed=params["seed"], n_jobs=jobs())

    folds = held_out_folds(m, params)
    if folds is None:
        result = loo(m.X, m.P)
    else:   # hide each fold's targets, as folds_by_masking does for Goal A
        n, T = m.X.shape[0], len(m.targets)
        margins, prob = np.full((n, n, T), np.nan), np.full((n, n, T), np.nan)
        for fold in folds:
            P = [p.copy() for p in m.P]
            for p in P:
                p[fold] = np.nan
            r = loo(m.X, P)
            margins[fold], prob[fold] = np.asarray(r.margins, float)[fold], np.asarray(r.prob, float)[fold]
        result = PairFoldResult(margins, prob, m.target_means())
    # an exactly zero margin is an abstention (degenerate fit): p = 1/2, half a correct answer
    neutral = np.isfinite(result.margins) & (result.margins == 0)
    return result, np.arange(m.X.shape[1]), neutral


def _override(configs: dict, params: dict) -> dict:
    """Apply --m / --nc-h / --nc-d to every target's frozen configuration."""
    from dataclasses import replace

    changes = {k: params[k] for k in ("m", "nc_h", "nc_d") if params.get(k) is not None}
    return {t: replace(c, **changes) for t, c in configs.items()} if changes else configs


def _config_row(target: str, fold: int, c, objective, platt=None) -> dict:
    q = getattr(c, "q", None)
    nc = getattr(c, "nc", None)          # default Goal B uses one rank for both sides
    nc_h, nc_d = (nc, nc) if nc is not None else (c.nc_h, c.nc_d)
    return {"target": target, "fold": int(fold), "m": float(c.m), "nc_h": int(nc_h), "nc_d": int(nc_d),
            "q": None if q is None else float(q), "objective": objective,
            "cal_a": None if platt is None else float(platt[0]), "cal_b": None if platt is None else float(platt[1])}


def _selection_rows(selections, kept: np.ndarray) -> list[dict]:
    rows = []
    for fs in selections:
        for side_name, side in (("H", fs.H), ("D", fs.D)):
            for c, r, w in zip(np.asarray(side.cols, int), np.asarray(side.rank), np.asarray(side.weight, float)):
                rows.append({"fold": int(fs.fold), "target": str(fs.target), "side": side_name, "col": int(kept[c]),
                             "rank": int(r), "weight": float(w), "nc": int(side.nc)})
    return rows


def _common_row(result, kept: np.ndarray) -> dict:
    fold_configs = getattr(result, "fold_configs", None) or {}
    fold_platt = getattr(result, "fold_platt", None) or {}
    platt = getattr(result, "platt", {}) or {}
    sweep = getattr(result, "sweep", {}) or {}
    if fold_configs:   # nested tuning: one configuration per (held-out model, target)
        configs = [_config_row(t, f, c, None, fold_platt.get((f, t), platt.get(t)))
                   for (f, t), c in sorted(fold_configs.items(), key=lambda kv: kv[0])]
    else:
        configs = [_config_row(t, -1, c, sweep.get(t), platt.get(t)) for t, c in result.configs.items()]
    return {"configs": configs, "sel": _selection_rows(result.selections, kept), "warnings": list(result.warnings)}


def abs_result_row(result: FoldResult, targets: list[str]) -> dict:
    """A Goal A result as the ``ABS_RESULT`` struct (no selections: every column index is kept)."""
    return _to_row(result, np.zeros(0, np.int64), targets)


def _to_row(result, kept: np.ndarray, targets: list[str]) -> dict:
    return {"pred": _nullable(result.pred), "actual": _nullable(result.actual), **_common_row(result, kept)}


def _to_pair_row(result, kept: np.ndarray, neutral: np.ndarray) -> dict:
    cube = lambda a: [_nullable(m) for m in np.asarray(a, float)]  # noqa: E731  (n, n, T) -> nested lists
    return {"margin": cube(result.margins), "prob": cube(result.prob), "neutral": neutral.tolist(),
            "actual": _nullable(result.actual), **_common_row(result, kept)}


def _nullable(matrix) -> list[list[float | None]]:
    """NaN (no target value: masked by ``default``) -> NULL, so SQL aggregates skip it."""
    return [[float(v) if np.isfinite(v) else None for v in row] for row in np.asarray(matrix, float)]


def _pick(registry: dict, params: dict):
    name = params.get("method", "default")
    if name not in registry:
        raise ValueError(f"unknown method {name!r} (choose from {', '.join(sorted(registry))})")
    return registry[name]


def abs_eval_row(m: Matrices, n_train: int, params: dict) -> dict:
    if params.get("method") in FOLD_METHODS:
        pred = FOLD_METHODS[params["method"]](m, n_train, params)
        return _to_row(FoldResult(pred, m.target_means()), np.arange(m.X.shape[1]), m.targets)
    result, kept = _pick(METHODS, params)(m, params)
    return _to_row(result, kept, m.targets)


def pair_eval_row(m: Matrices, n_train: int, params: dict) -> dict:
    result, kept, neutral = _pick(PAIR_METHODS, params)(m, params)
    return _to_pair_row(result, kept, neutral)


#: the ``fold_matrix`` columns a kernel UDF takes (then ``params`` JSON)
FOLD_COLUMNS = ("models", "n_train", "n_cols", "x", "targets", "t_cols", "p", "leaves", "leaf_benchmarks",
                "collapsed")
_FOLD_TYPES = ["VARCHAR[]", "INTEGER", "INTEGER", "STRUCT(r INTEGER, c INTEGER, v DOUBLE)[]", "VARCHAR[]",
               "INTEGER[]", "STRUCT(t INTEGER, r INTEGER, c INTEGER, v DOUBLE)[]", "INTEGER[]", "VARCHAR[]",
               "INTEGER[][]"]


def _arrow_udf(row_fn, result_sql: str):
    """An Arrow UDF computing ``row_fn`` per input row (normally one fold row per call)."""
    arrow_type = duckdb.sql(f"SELECT NULL::{result_sql} AS r").to_arrow_table().schema.field("r").type

    def udf(models, n_train, n_cols, x, targets, t_cols, p, leaves, leaf_benchmarks, collapsed, params):
        out = []
        for i in range(len(models)):
            m = fold_row_to_matrices(models[i].as_py() or [], n_cols[i].as_py(), x[i].values, targets[i].as_py() or [],
                                     t_cols[i].as_py() or [], p[i].values, leaves[i], collapsed[i],
                                     leaf_benchmarks[i].as_py())
            out.append(row_fn(m, n_train[i].as_py(), json.loads(params[i].as_py())))
        return pa.array(out, type=arrow_type)
    return udf


BASIS_RESULT = "STRUCT(target VARCHAR, col INTEGER, multiplicity INTEGER, leverage DOUBLE[])[]"


def fold_basis_rows(m: Matrices, n_train: int, params: dict) -> list[dict]:
    """Per target, the training basis the default method's Pace part builds on the fold (models/basis.py):
    its representative columns, their multiplicity and leverages for nc = 1 .. min(rank, 8). The training
    rows are the fold's training rows with a score on the target (``fold_selection_scores``, sql/039)."""
    from models.basis import MIN_OBS, TrainingBasis

    actual = m.target_means()
    out = []
    for t, target in enumerate(m.targets):
        rows = np.asarray([i for i in range(n_train) if np.isfinite(actual[i, t])], dtype=np.int64)
        if rows.size < 2:
            continue
        bs = TrainingBasis(m.X, rows, np.zeros(0, np.int64), MIN_OBS)
        lev = bs.lev[:8]
        out += [{"target": target, "col": int(c), "multiplicity": int(k), "leverage": lev[:, j].tolist()}
                for j, (c, k) in enumerate(zip(bs.rep_cols, bs.mult))]
    return out


UDFS = {"pace_abs_eval": (abs_eval_row, ABS_RESULT), "pace_pair_eval": (pair_eval_row, PAIR_RESULT),
        "pace_fold_basis": (fold_basis_rows, BASIS_RESULT)}


def register(con: duckdb.DuckDBPyConnection) -> None:
    for name, (row_fn, result_sql) in UDFS.items():
        # Connections to one file in one process share a catalog: a second connect() finds it registered.
        if con.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = ?", [name]).fetchall()[0][0]:
            continue
        con.create_function(name, _arrow_udf(row_fn, result_sql), [*_FOLD_TYPES, "VARCHAR"], result_sql,
                            type="arrow", side_effects=True)


REGISTRARS.append(register)
