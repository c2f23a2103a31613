"""Held-out evaluation as SQL over the kernel UDFs, materialised into the loocv_* tables.

Folds are rows (``eval_folds``, sql/034). The default method runs per (fold, target) row: a regressor UDF
per row, an ability UDF per fold and SQL combining them (``warehouse.regressors``); the other methods (``compat``, which needs
the published transductive basis, ``instance``, the baselines) are called once, on the fold 'all', with the
split's held-out sets as a parameter. Every UDF reads its fold from the matrices the evaluation read once
(``warehouse.fold_data``), never from a row holding them. The rest is SQL that unnests the results into rows keyed by
model, target and instance (benchmark, subdir, instance_id).
"""
from __future__ import annotations

import csv
import json
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb

from warehouse.udfs import arrow_type


@dataclass
class EvalRequest:
    method: str = "default"
    count: int = 100
    B: int = 300
    seed: int = 42
    auto_tune: bool = False
    strict_budget: bool = True
    fit_all: bool = False
    q: float | None = None
    m: float | None = None
    nc_h: int | None = None
    nc_d: int | None = None
    nc_max: int = 10
    m_grid: list[float] | None = None
    sources: list[str] | None = None
    targets: list[str] | None = None
    missing: str = "mask"          # instance method: mask | zero | auto (chosen inside each fold)
    split: str = "loo"             # loo | family | low-K | high-K (split_folds, sql/033)

    def params(self) -> dict:
        mode = "fit" if self.fit_all else ("loocv-autotune" if self.auto_tune else "loocv")
        return {"method": self.method, "mode": mode, "count": self.count, "B": self.B, "seed": self.seed,
                "auto_tune": self.auto_tune, "strict_budget": self.strict_budget, "q": self.q, "m": self.m,
                "nc_h": self.nc_h, "nc_d": self.nc_d, "nc_max": self.nc_max, "m_grid": self.m_grid,
                "missing": self.missing, "split": self.split}


SPLIT_PATTERN = r"^(loo|family|(low|high|kfold)-[1-9][0-9]*)$"


def split_folds(con: duckdb.DuckDBPyConnection, split: str) -> list[tuple[str, str]]:
    """(fold, model) rows of ``split`` (sql/033_split_folds.sql), in fold then model order."""
    import re

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


_PREDICTIONS_SQL = {
    "abs": """
        SELECT ? AS run_id, e.models[mi], e.targets[ti], e.r.pred[mi][ti], e.r.actual[mi][ti],
               abs(e.r.pred[mi][ti] - e.r.actual[mi][ti])
        FROM _eval AS e,
             range(1, len(e.models) + 1) AS m(mi),
             range(1, len(e.targets) + 1) AS t(ti)""",
    "pair": """
        SELECT ? AS run_id, e.models[ki], e.models[ji], e.targets[ti],
               e.r.actual[ki][ti] - e.r.actual[ji][ti],
               e.r.margin[ki][ji][ti], e.r.prob[ki][ji][ti], e.r.neutral[ki][ji][ti]
        FROM _eval AS e,
             range(1, len(e.models) + 1) AS k(ki),
             range(1, len(e.models) + 1) AS j(ji),
             range(1, len(e.targets) + 1) AS t(ti)
        WHERE ki <> ji""",
}
_PREDICTION_TABLE = {"abs": "loocv_predictions", "pair": "loocv_pair_predictions"}


@dataclass
class EvalResult:
    """A computed evaluation, as the rows of each loocv_* table (Arrow), not yet stored."""
    run_id: str
    task: str
    tables: dict          # table name -> pyarrow.Table, in insertion order

    def n_predictions(self) -> int:
        """Predictions that are actual numbers (an empty or failed evaluation has none)."""
        import pyarrow.compute as pc

        table = self.tables[_PREDICTION_TABLE[self.task]]
        column = table.column(3 if self.task == "abs" else 5)
        return int(pc.sum(pc.is_finite(column)).as_py() or 0) if table.num_rows else 0


def run_abs(con: duckdb.DuckDBPyConnection, req: EvalRequest) -> str:
    """Evaluate Goal A; returns the run_id of the rows written."""
    return run_eval(con, req, "abs")


def run_pair(con: duckdb.DuckDBPyConnection, req: EvalRequest) -> str:
    """Evaluate Goal B (pairwise); returns the run_id of the rows written."""
    return run_eval(con, req, "pair")


def run_eval(con: duckdb.DuckDBPyConnection, req: EvalRequest, task: str) -> str:
    """Compute and store on one connection; returns the run_id."""
    return store_eval(con, compute_eval(con, req, task))


def compute_eval(con: duckdb.DuckDBPyConnection, req: EvalRequest, task: str) -> EvalResult:
    """The method's UDF calls over the split's folds, then SQL that unnests them into the rows of the
    loocv_* tables (returned, not stored).

    Works on a read-only connection (a temporary table and the UDFs are all it needs), so a long
    evaluation does not hold the warehouse's write lock."""
    params = req.params()
    folds = split_folds(con, req.split)
    grouped: dict[str, list[str]] = {}
    for fold, model in folds:
        grouped.setdefault(fold, []).append(model)
    if req.split != "loo":
        params["folds"] = list(grouped.values())
    run_id = f"{task}-{req.method}-{datetime.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
    started = time.perf_counter()
    extra: dict = {}
    if task == "abs" and req.method == "default":
        extra = _eval_default(con, params, req, run_id)
    elif task == "pair" and req.method == "default":
        extra = _eval_default_pair(con, params, req, run_id)
    else:
        from warehouse.fold_data import one_udf_call_at_a_time, registered
        from warehouse.matrices import build_matrices

        m = build_matrices(con, sources=req.sources, targets=req.targets)
        with registered(m) as data, one_udf_call_at_a_time(con):
            con.execute(f"""
                CREATE OR REPLACE TEMP TABLE _eval AS
                SELECT ?::VARCHAR[] AS models, ?::VARCHAR[] AS targets,
                       pace_{task}_eval(?, []::VARCHAR[], ?) AS r""", [m.models, m.targets, data, json.dumps(params)])
    seconds = time.perf_counter() - started
    try:
        tables = {
            "loocv_runs": con.sql("""
                SELECT ?, ?, ?, ?, ?::JSON, ?::VARCHAR[], targets, models, ?, current_localtimestamp(), ?
                FROM _eval""",
                params=[run_id, task, params["mode"], req.method,
                        json.dumps(params), req.sources,
                        seconds, req.split]).to_arrow_table(),
            _PREDICTION_TABLE[task]: _held_out_rows(con.sql(_PREDICTIONS_SQL[task], params=[run_id]).to_arrow_table(),
                                                    req.split, {m for _, m in folds}),
            "loocv_folds": _folds_table(run_id, folds),
            "loocv_configs": extra["loocv_configs"] if "loocv_configs" in extra else con.sql("""
                SELECT ?, c.target, CASE WHEN c.fold < 0 THEN 'ALL' ELSE e.models[c.fold + 1] END,
                       c.m, c.nc_h, c.nc_d, c.q, c.objective, c.cal_a, c.cal_b
                FROM _eval AS e, unnest(e.r.configs) AS u(c)""", params=[run_id]).to_arrow_table(),
            "loocv_selections": extra["loocv_selections"] if "loocv_selections" in extra else con.sql("""
                WITH sel AS (SELECT e.models, unnest(e.r.sel) AS s FROM _eval AS e)
                SELECT ?, CASE WHEN s.fold < 0 THEN 'ALL' ELSE models[s.fold + 1] END, s.target, s.side,
                       c.benchmark, c.subdir, c.instance_id, s.rank, s.weight, s.nc
                FROM sel JOIN source_columns(?) AS c ON c.col = s.col""", params=[run_id, req.sources]).to_arrow_table(),
        }
    finally:
        con.execute("DROP TABLE IF EXISTS _eval")
    return EvalResult(run_id, task, tables)


def _eval_default(con: duckdb.DuckDBPyConnection, params: dict, req: EvalRequest, run_id: str) -> dict:
    """The default method over the split's ``eval_folds`` rows (``warehouse.regressors``: a Pace-part UDF per
    (fold, target), an ability UDF per fold, SQL combining them). Leaves ``_eval`` (one row: models, targets,
    r) as the other methods' UDF call does, and returns the loocv_configs and loocv_selections rows: one per
    held-out model of each fold, from the fold's stored weights."""
    import numpy as np
    import pyarrow as pa

    from warehouse import kernels, regressors
    from warehouse.matrices import build_matrices

    m = build_matrices(con, sources=req.sources, targets=req.targets)
    with regressors.registered(m) as token:
        folds = regressors.run_folds(
            con, token, "SELECT fold, held_out, target FROM eval_folds(?, ?) WHERE list_contains(?, target)",
            [req.split, req.targets, m.targets], {"count": params["count"], "seed": params["seed"]})
    held = {name for row in folds.pace.column("held_out").to_pylist() for name in row}
    actual = m.target_means()
    actual[[i for i, name in enumerate(m.models) if name not in held]] = np.nan
    pred = folds.predicted(m.models, m.targets)
    pred[~np.isfinite(actual).any(axis=1)] = np.nan     # a held-out model without any target score
    result = kernels.FoldResult(pred, actual)
    r_type = arrow_type(kernels.ABS_RESULT)
    table = pa.table({"models": pa.array([m.models], pa.list_(pa.string())),
                      "targets": pa.array([m.targets], pa.list_(pa.string())),
                      "r": pa.array([kernels.abs_result_row(result, m.targets)], type=r_type)})
    con.register("_eval_arrow", table)
    con.register("_fold_pace", folds.pace)
    try:
        con.execute("CREATE OR REPLACE TEMP TABLE _eval AS SELECT * FROM _eval_arrow")
        configs = con.sql("""
            SELECT ? AS run_id, p.target, h.model AS fold, p.r.m AS m, p.r.nc_h AS nc_h, p.r.nc_d AS nc_d, p.r.q AS q,
                   NULL::DOUBLE AS objective, NULL::DOUBLE AS cal_a, NULL::DOUBLE AS cal_b
            FROM _fold_pace AS p, unnest(p.held_out) AS h(model)""", params=[run_id]).to_arrow_table()
        selections = con.sql("""
            WITH weights AS (
                SELECT p.target, p.held_out, unnest(p.r.cols) AS col, unnest(p.r.side) AS side,
                       unnest(p.r.weight) AS weight
                FROM _fold_pace AS p
            )
            SELECT ? AS run_id, h.model AS fold, w.target, w.side, c.benchmark, c.subdir, c.instance_id,
                   NULL::INTEGER AS rank, w.weight, NULL::INTEGER AS nc
            FROM weights AS w, unnest(w.held_out) AS h(model)
            JOIN source_columns(?) AS c ON c.col = w.col""", params=[run_id, req.sources]).to_arrow_table()
    finally:
        con.unregister("_eval_arrow")
        con.unregister("_fold_pace")
    return {"loocv_configs": configs, "loocv_selections": selections}


def _eval_default_pair(con: duckdb.DuckDBPyConnection, params: dict, req: EvalRequest, run_id: str) -> dict:
    """The default method's pairwise evaluation over the split's ``eval_folds`` rows
    (``warehouse.pair_regressors``: a directed-prediction UDF per (fold, target), SQL averaging the two
    directions of each pair). Leaves ``_eval`` as the other methods do and returns the loocv_configs and
    loocv_selections rows of the held-out models."""
    import numpy as np
    import pyarrow as pa

    from warehouse import kernels, pair_regressors
    from warehouse.matrices import build_matrices

    m = build_matrices(con, sources=req.sources, targets=req.targets)
    symmetric, rows = pair_regressors.run_pair_folds(con, m, req.split, req.targets,
                                                     {"count": params["count"], "B": params["B"],
                                                      "seed": params["seed"]})
    n, T = len(m.models), len(m.targets)
    row, col = {name: i for i, name in enumerate(m.models)}, {t: k for k, t in enumerate(m.targets)}
    margins, prob = np.full((n, n, T), np.nan), np.full((n, n, T), np.nan)
    d = symmetric.to_pydict()
    for target, model, opponent, margin, p in zip(d["target"], d["model"], d["opponent"], d["margin"], d["prob"]):
        k, j, t = row[model], row[opponent], col[target]
        margins[k, j, t] = np.nan if margin is None else margin
        prob[k, j, t] = np.nan if p is None else p
    # an exactly zero margin is an abstention (degenerate fit): p = 1/2, half a correct answer
    neutral = np.isfinite(margins) & (margins == 0)
    result = kernels.PairFoldResult(margins, prob, m.target_means())
    r_type = arrow_type(kernels.PAIR_RESULT)
    table = pa.table({"models": pa.array([m.models], pa.list_(pa.string())),
                      "targets": pa.array([m.targets], pa.list_(pa.string())),
                      "r": pa.array([kernels.pair_result_row(result, neutral)], type=r_type)})
    con.register("_eval_arrow", table)
    con.register("_fold_pair", rows)
    try:
        con.execute("CREATE OR REPLACE TEMP TABLE _eval AS SELECT * FROM _eval_arrow")
        configs = con.sql("""
            SELECT ? AS run_id, p.target, c.model AS fold, c.m, c.nc AS nc_h, c.nc AS nc_d, c.q,
                   NULL::DOUBLE AS objective, c.cal_a, c.cal_b
            FROM _fold_pair AS p, unnest(p.r.configs) AS u(c)""", params=[run_id]).to_arrow_table()
        selections = con.sql("""
            WITH sel AS (SELECT p.target, unnest(p.r.sel) AS s FROM _fold_pair AS p)
            SELECT ? AS run_id, s.model AS fold, sel.target, s.side, c.benchmark, c.subdir, c.instance_id,
                   s.rank, s.weight, s.nc
            FROM sel JOIN source_columns(?) AS c ON c.col = s.col""", params=[run_id, req.sources]).to_arrow_table()
    finally:
        con.unregister("_eval_arrow")
        con.unregister("_fold_pair")
    return {"loocv_configs": configs, "loocv_selections": selections}


def _held_out_rows(table, split: str, held: set[str]):
    """A split other than loo reports only the models it held out (the others were trained on)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if split == "loo":
        return table
    return table.filter(pc.is_in(table.column(1), value_set=pa.array(sorted(held), pa.string())))


def _folds_table(run_id: str, folds: list[tuple[str, str]]):
    import pyarrow as pa

    return pa.table({"run_id": pa.array([run_id] * len(folds), pa.string()),
                     "fold": pa.array([f for f, _ in folds], pa.string()),
                     "model": pa.array([m for _, m in folds], pa.string())})


def store_eval(con: duckdb.DuckDBPyConnection, result: EvalResult) -> str:
    """Insert a computed evaluation's rows in one transaction; returns its run_id."""
    con.execute("BEGIN TRANSACTION")
    try:
        for table, rows in result.tables.items():
            con.register("_eval_rows", rows)
            try:
                con.execute(f"INSERT INTO {table} SELECT * FROM _eval_rows")
            finally:
                con.unregister("_eval_rows")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return result.run_id


def metrics_rows(con, run_id: str) -> list[tuple]:
    return con.execute("""
        SELECT target, mae * 100, spearman, pearson, r2 FROM loocv_metrics
        WHERE run_id = ? ORDER BY is_average, target""", [run_id]).fetchall()


def pair_metrics_rows(con, run_id: str) -> list[tuple]:
    return con.execute("""
        SELECT target, accuracy * 100, n_pairs FROM loocv_pair_metrics
        WHERE run_id = ? ORDER BY is_average, target""", [run_id]).fetchall()


def write_pair_predictions_csv(con, run_id: str, path: Path) -> Path:
    """pair_predictions.csv with the published columns: every ordered pair, held-out-major, then target."""
    rows = con.execute("""
        SELECT p.model, p.opponent, p.target, p.true_margin,
               CASE WHEN p.true_margin IS NULL THEN NULL WHEN abs(p.true_margin) < 1e-9 THEN 'tie'
                    WHEN p.true_margin > 0 THEN p.model ELSE p.opponent END,
               p.pred_margin, p.p_win,
               CASE WHEN p.neutral THEN 'neutral' WHEN p.pred_margin > 0 THEN p.model ELSE p.opponent END
        FROM loocv_pair_predictions p JOIN loocv_runs r USING (run_id)
        WHERE run_id = ?
        ORDER BY list_position(r.models, p.model), list_position(r.models, p.opponent), p.target""",
                       [run_id]).fetchall()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["held_out", "other", "target", "true_margin", "true_winner", "pred_margin",
                         "pred_prob_heldout_wins", "pred_winner"])
        writer.writerows(rows)
    return path


def plot_pair_margins(con, run_id: str, path: Path, title: str) -> Path:
    """True margin (pp) against predicted margin, one panel per target, green correct / red wrong."""
    from warehouse.plotting import pyplot

    plt = pyplot()

    data = con.execute("""
        SELECT target, list(true_margin * 100), list(pred_margin),
               list(neutral OR (pred_margin > 0) = (true_margin > 0))
        FROM loocv_pair_predictions
        WHERE run_id = ? AND abs(true_margin) >= 1e-9 AND pred_margin IS NOT NULL
        GROUP BY target ORDER BY target""", [run_id]).fetchall()
    accuracy = {t: acc for t, acc, _ in pair_metrics_rows(con, run_id)}
    cols = 2
    rows_n = max(1, (len(data) + 1) // 2)
    fig, axes = plt.subplots(rows_n, cols, figsize=(10, 4.5 * rows_n), squeeze=False)
    for ax, (target, true_m, pred_m, ok) in zip(axes.flat, data):
        colors = ["tab:green" if c else "tab:red" for c in ok]
        ax.scatter(true_m, pred_m, s=10, c=colors, alpha=0.7)
        ax.axhline(0, color="grey", lw=0.6)
        ax.axvline(0, color="grey", lw=0.6)
        ax.set_title(f"{target}  accuracy {accuracy.get(target, float('nan')):.1f}%", fontsize=9)
        ax.set_xlabel("true margin (pp)")
        ax.set_ylabel("predicted margin (logit)")
    for ax in list(axes.flat)[len(data):]:
        ax.axis("off")
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_predictions_csv(con, run_id: str, path: Path) -> Path:
    """abs_predictions.csv with the published columns, model-major then target."""
    rows = con.execute("""
        SELECT p.model, p.target, p.predicted, p.actual, p.abs_error
        FROM loocv_predictions p JOIN loocv_runs r USING (run_id)
        WHERE run_id = ? ORDER BY list_position(r.models, p.model), p.target""", [run_id]).fetchall()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["model", "target", "predicted", "actual", "abs_error"])
        writer.writerows(rows)
    return path


def plot_predictions(con, run_id: str, out_dir: Path, title: str) -> list[Path]:
    """One predicted-vs-actual PNG per target plus a grid of all targets (abs_loocv_fit.png)."""
    from warehouse.plotting import pyplot

    plt = pyplot()

    data = con.execute("""
        SELECT target, list(model ORDER BY model), list(predicted ORDER BY model), list(actual ORDER BY model)
        FROM loocv_predictions
        WHERE run_id = ? AND predicted IS NOT NULL AND actual IS NOT NULL   -- masked truths are not drawn
        GROUP BY target ORDER BY target""", [run_id]).fetchall()
    metrics = {t: (mae, sp) for t, mae, sp, _, _ in metrics_rows(con, run_id)}
    out_dir.mkdir(parents=True, exist_ok=True)

    def draw(ax, target, models, pred, actual):
        pred_pp = [100 * v for v in pred]
        act_pp = [100 * v for v in actual]
        ax.scatter(act_pp, pred_pp, s=28)
        for name, a, p in zip(models, act_pp, pred_pp):
            ax.annotate(name, (a, p), fontsize=6, alpha=0.7, xytext=(3, 2), textcoords="offset points")
        lo, hi = min(act_pp + pred_pp) - 3, max(act_pp + pred_pp) + 3
        ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, ls="--")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        mae, sp = metrics.get(target, (float("nan"), float("nan")))
        ax.set_title(f"{target}  MAE {mae:.2f} pp  Spearman {sp:.3f}", fontsize=9)
        ax.set_xlabel("actual (%)")
        ax.set_ylabel("predicted (%)")

    paths = []
    for target, models, pred, actual in data:
        fig, ax = plt.subplots(figsize=(5, 5))
        draw(ax, target, models, pred, actual)
        fig.suptitle(title, fontsize=9)
        fig.tight_layout()
        path = out_dir / f"abs_loocv_{target}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    if data:
        cols = 2
        rows_n = (len(data) + 1) // 2
        fig, axes = plt.subplots(rows_n, cols, figsize=(10, 5 * rows_n), squeeze=False)
        for ax, item in zip(axes.flat, data):
            draw(ax, *item)
        for ax in list(axes.flat)[len(data):]:
            ax.axis("off")
        fig.suptitle(title)
        fig.tight_layout()
        path = out_dir / "abs_loocv_fit.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths
