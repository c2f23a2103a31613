"""Held-out evaluation: the folds and inputs come from SQL, the method's estimators run in Python, the
result rows go back as Arrow tables into the loocv_* tables.

One path for every method and for ``pace fit`` (:mod:`warehouse.fit`):

1. ``eval_folds(split, targets)`` (sql/038_eval_folds.sql) gives the folds: fold -> held-out models (split 'all' is the
   one fold holding nothing out: the fit);
2. the cells of every known model are read once (``fold_cells`` / ``fold_target_cells`` of the fold 'all',
   :func:`warehouse.matrices.build_matrices`); a fold's inputs are their rows in its ``fold_models`` order
   (:class:`warehouse.methods.data.Folds`), and whatever else the method declared (``Method.inputs``);
3. ``Method.evaluate`` returns long rows (predictions keyed by model and target, configurations,
   selections by column), or a query over its part tables using the serving formulas' SQL macros;
4. SQL turns them into the rows of ``loocv_predictions`` / ``loocv_pair_predictions``, ``loocv_configs``,
   ``loocv_selections`` (keyed by benchmark, subdir, instance_id), ``loocv_folds`` and ``loocv_runs``;
   ``loocv_metrics`` and the other metric views are plain SQL over them.

Why an orchestrator and not a DuckDB UDF per (fold, target) row: a UDF receives only SQL values, so a
fold's matrices had to travel either as nested lists (a dense -> nested -> unnest round trip) or as a token
into process state; DuckDB chooses how to cut the rows into calls and threads, so the kernels' own threads
had to be switched off by forcing DuckDB to one thread; parameters travelled as JSON and kernel errors as
DuckDB's text. Here Python holds the fold inputs as arrays, runs the estimators on its own threads, and
only rows cross into SQL.
"""
from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from warehouse import methods
from warehouse.matrices import Matrices, build_matrices
from warehouse.methods.base import Method
from warehouse.methods.data import Folds, InputContext
from warehouse.methods.options import Options
from warehouse.methods.results import Evaluation, Query
from warehouse.registered import registered
from warehouse.storing import insert_arrow, transaction

SPLIT_PATTERN = r"^(loo|family|(low|high|kfold)-[1-9][0-9]*)$"


class EvalRequest:
    """What to evaluate: a method, a split, the source and target benchmarks (None: every one of that
    role) and the method's options (``count=40``, ...; an option the method does not read is ignored here:
    the API refuses it before a request is made)."""

    def __init__(self, method: str = "default", split: str = "loo", sources: list[str] | None = None,
                 targets: list[str] | None = None, **options: Any):
        self.method, self.split, self.sources, self.targets = method, split, sources, targets
        self.options = options

    def __repr__(self) -> str:
        return (f"EvalRequest(method={self.method!r}, split={self.split!r}, sources={self.sources!r}, "
                f"targets={self.targets!r}, {', '.join(f'{k}={v!r}' for k, v in self.options.items())})")


def split_folds(con: duckdb.DuckDBPyConnection, split: str) -> list[tuple[str, str]]:
    """(fold, model) rows of ``split`` (sql/037_split_folds.sql), in fold then model order."""
    if not re.match(SPLIT_PATTERN, split or ""):
        raise ValueError(f"--split {split!r} is not one of: loo, family, low-K, high-K, kfold-K "
                         "(K a positive integer)")
    rows = con.execute("SELECT fold, model FROM split_folds(?) ORDER BY fold, model", [split]).fetchall()
    labelled = con.execute("SELECT count(DISTINCT model) FROM target_means WHERE n_scored > 0").fetchall()[0][0]
    sizes: dict[str, int] = {}
    for fold, _ in rows:
        sizes[fold] = sizes.get(fold, 0) + 1
    largest = max(sizes.values(), default=0)
    if labelled - largest < 3:
        raise ValueError(f"--split {split}: a fold holds out {largest} of the {labelled} models with target scores; "
                         "at least 3 must stay to train on")
    return rows


def grouped(rows: list[tuple[str, str]]) -> dict[str, list[str]]:
    """(fold, model) rows -> fold -> its models, in row order."""
    out: dict[str, list[str]] = {}
    for fold, model in rows:
        out.setdefault(fold, []).append(model)
    return out


def read_inputs(con: duckdb.DuckDBPyConnection, method: Method, folds: Folds, opts: Options,
                sources: list[str] | None, targets: list[str] | None) -> Folds:
    """``folds`` with the inputs ``method`` declared read into it (each once)."""
    def predict(name: str, task: str, on: Folds) -> pa.Table:
        other = methods.get(name, task)
        given = {k: opts[k] for k in other.read(task, {}) if k in opts}
        return resolve(con, other.evaluate(task, on, other.options(given)).predictions)

    context = InputContext(con, sources, targets, predict)
    for declared in method.inputs:
        folds.inputs[declared.name] = declared.read(context, folds)
    return folds


def resolve(con: duckdb.DuckDBPyConnection, rows: pa.Table | Query) -> pa.Table:
    """A method's rows: a table as it is, a query run over its part tables."""
    if isinstance(rows, pa.Table):
        return rows
    with registered(con, **rows.tables):
        return con.sql(rows.sql, params=dict(rows.params or {})).to_arrow_table()


@dataclass
class EvalResult:
    """A computed evaluation, as the rows of each loocv_* table (Arrow), not yet stored."""
    run_id: str
    task: str
    tables: dict          # table name -> pyarrow.Table, in insertion order
    warnings: list[str] = field(default_factory=list)

    def n_predictions(self) -> int:
        """Predictions that are actual numbers (an empty or failed evaluation has none)."""
        table = self.tables[PREDICTION_TABLE[self.task]]
        column = table.column("predicted" if self.task == "abs" else "pred_margin")
        return int(pc.sum(pc.is_finite(column)).as_py() or 0) if table.num_rows else 0


PREDICTION_TABLE = {"abs": "loocv_predictions", "pair": "loocv_pair_predictions"}

#: the stored prediction rows of a run: every model (and opponent) of the matrices and target, the
#: method's prediction where it made one; a split other than loo keeps the models it held out
_ROWS_SQL = {
    "abs": """
        SELECT $run_id AS run_id, a.model, a.target, p.predicted, a.actual, abs(p.predicted - a.actual) AS abs_error,
               p.low, p.high
        FROM _actual AS a
        LEFT JOIN _predicted AS p USING (model, target)
        WHERE $every OR a.model IN (SELECT model FROM _held)
        ORDER BY a.row, a.t""",
    "pair": """
        SELECT $run_id AS run_id, a.model, b.model AS opponent, a.target, a.actual - b.actual AS true_margin,
               p.margin AS pred_margin, p.prob AS p_win, coalesce(p.neutral, false) AS neutral
        FROM _actual AS a
        JOIN _actual AS b ON b.target = a.target AND b.model <> a.model
        LEFT JOIN _predicted AS p ON p.model = a.model AND p.opponent = b.model AND p.target = a.target
        WHERE $every OR a.model IN (SELECT model FROM _held)
        ORDER BY a.row, b.row, a.t""",
}


def actual_rows(m: Matrices, actual: np.ndarray) -> pa.Table:
    """(n, T) truths as rows (row, t, model, target, actual); NaN -> NULL."""
    n, T = actual.shape
    row, t = np.repeat(np.arange(n), T), np.tile(np.arange(T), n)
    values = np.asarray(actual, np.float64).reshape(-1)
    return pa.table({"row": row, "t": t, "model": pa.array(np.asarray(m.models, object)[row], pa.string()),
                     "target": pa.array(np.asarray(m.targets, object)[t], pa.string()),
                     "actual": pa.array(values, pa.float64(), mask=~np.isfinite(values))})


def prediction_rows(con: duckdb.DuckDBPyConnection, task: str, folds: Folds, evaluation: Evaluation,
                    run_id: str) -> pa.Table:
    """The loocv_predictions / loocv_pair_predictions rows of an evaluation."""
    m = folds.matrices
    actual = m.target_means() if evaluation.actual is None else evaluation.actual
    predicted = resolve(con, evaluation.predictions)
    if task == "abs":                   # a method whose LOOCV makes no interval stores NULL bounds
        for bound in ("low", "high"):
            if bound not in predicted.column_names:
                predicted = predicted.append_column(bound, pa.nulls(predicted.num_rows, pa.float64()))
    tables = {"_actual": actual_rows(m, actual), "_predicted": predicted,
              "_held": pa.table({"model": pa.array(sorted(folds.held_models()), pa.string())})}
    return resolve(con, Query(_ROWS_SQL[task], tables, {"run_id": run_id, "every": folds.split == "loo"}))


def evaluate_split(con: duckdb.DuckDBPyConnection, method: Method, task: str, folds: Folds, opts: Options,
                   sources: list[str] | None = None, targets: list[str] | None = None,
                   fitted=None) -> Evaluation:
    """``method``'s held-out predictions on ``folds`` (its declared inputs read first)."""
    read_inputs(con, method, folds, opts, sources, targets)
    return method.evaluate(task, folds, opts, fitted)


def read_folds(con: duckdb.DuckDBPyConnection, split: str, m: Matrices, targets: list[str] | None) -> Folds:
    """The folds of ``split`` (``eval_folds``) over the matrices ``m``; models ``m`` lacks leave their folds."""
    rows = con.execute("SELECT fold, any_value(held_out) FROM eval_folds(?, ?) GROUP BY fold ORDER BY fold",
                       [split, targets]).fetchall()
    kept = set(m.models)
    held = {fold: [name for name in held_out if name in kept] for fold, held_out in rows}
    return Folds(split, m, {f: h for f, h in held.items() if h or split == "all"})


def compute_eval(con: duckdb.DuckDBPyConnection, req: EvalRequest, task: str) -> EvalResult:
    """The method's held-out predictions over the split's folds, as the rows of the loocv_* tables
    (returned, not stored).

    Works on a read-only connection (Arrow tables registered for its queries are all it needs), so a
    long evaluation does not hold the warehouse's write lock."""
    method = methods.get(req.method, task)
    opts = method.options({k: v for k, v in req.options.items()})
    split_rows = split_folds(con, req.split)
    m = build_matrices(con, sources=req.sources, targets=req.targets)
    folds = read_folds(con, req.split, m, req.targets)
    run_id = f"{task}-{req.method}-{datetime.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
    started = time.perf_counter()
    evaluation = evaluate_split(con, method, task, folds, opts, req.sources, req.targets)
    predictions = prediction_rows(con, task, folds, evaluation, run_id)
    seconds = time.perf_counter() - started
    params = {"method": req.method, "mode": method.mode(opts), **dict(opts), "split": req.split}
    if req.split != "loo":
        params["folds"] = list(grouped(split_rows).values())
    tables = {
        "loocv_runs": con.sql("SELECT ?, ?, ?, ?, ?::JSON, ?::VARCHAR[], ?::VARCHAR[], ?::VARCHAR[], ?, "
                              "current_localtimestamp(), ?",
                              params=[run_id, task, params["mode"], req.method, json.dumps(params), req.sources,
                                      m.targets, m.models, seconds, req.split]).to_arrow_table(),
        PREDICTION_TABLE[task]: predictions,
        "loocv_folds": pa.table({"run_id": pa.array([run_id] * len(split_rows), pa.string()),
                                 "fold": pa.array([f for f, _ in split_rows], pa.string()),
                                 "model": pa.array([name for _, name in split_rows], pa.string())}),
        "loocv_configs": _with_run_id(run_id, evaluation.configs, "loocv_configs", con),
        "loocv_selections": selection_rows(con, run_id, evaluation.selections, req.sources),
    }
    return EvalResult(run_id, task, tables, list(evaluation.warnings))


def _with_run_id(run_id: str, table: pa.Table | None, name: str, con: duckdb.DuckDBPyConnection) -> pa.Table:
    """``table`` with run_id in front; an empty table of ``name``'s columns when None."""
    if table is None:
        return con.sql(f"SELECT * FROM {name} LIMIT 0").to_arrow_table()
    return table.add_column(0, "run_id", pa.array([run_id] * table.num_rows, pa.string()))


def selection_rows(con: duckdb.DuckDBPyConnection, run_id: str, selections: pa.Table | None,
                   sources: list[str] | None) -> pa.Table:
    """Selection rows keyed by instance (benchmark, subdir, instance_id) instead of column position."""
    if selections is None:
        return con.sql("SELECT * FROM loocv_selections LIMIT 0").to_arrow_table()
    return resolve(con, Query("""
        SELECT $run_id AS run_id, s.fold, s.target, s.side, c.benchmark, c.subdir, c.instance_id, s.rank, s.weight,
               s.nc
        FROM _selected AS s JOIN source_columns($sources) AS c ON c.col = s.col""",
                              {"_selected": selections}, {"run_id": run_id, "sources": sources}))


def run_abs(con: duckdb.DuckDBPyConnection, req: EvalRequest) -> str:
    """Evaluate Goal A; returns the run_id of the rows written."""
    return run_eval(con, req, "abs")


def run_pair(con: duckdb.DuckDBPyConnection, req: EvalRequest) -> str:
    """Evaluate Goal B (pairwise); returns the run_id of the rows written."""
    return run_eval(con, req, "pair")


def run_eval(con: duckdb.DuckDBPyConnection, req: EvalRequest, task: str) -> str:
    """Compute and store on one connection; returns the run_id."""
    return store_eval(con, compute_eval(con, req, task))


def store_eval(con: duckdb.DuckDBPyConnection, result: EvalResult) -> str:
    """Insert a computed evaluation's rows in one transaction; returns its run_id."""
    with transaction(con):
        for table, rows in result.tables.items():
            insert_arrow(con, table, rows)
    return result.run_id


def metrics_rows(con, run_id: str) -> list[tuple]:
    return con.execute("""
        SELECT target, mae * 100, spearman, pearson, r2 FROM loocv_metrics
        WHERE run_id = ? ORDER BY is_average, target""", [run_id]).fetchall()


def pair_metrics_rows(con, run_id: str) -> list[tuple]:
    return con.execute("""
        SELECT target, accuracy * 100, n_pairs FROM loocv_pair_metrics
        WHERE run_id = ? ORDER BY is_average, target""", [run_id]).fetchall()
