"""The default method as SQL over per-(fold, target) regressor UDFs: evaluation and `pace fit` alike.

A fold is a row of ``eval_folds`` (sql/034: split, fold, held-out models, target); ``pace fit`` is the
split 'all' (one fold holding nothing out). Three steps, each a query:

1. ``pace_default_pace(data, held_out, target, params)`` per (fold, target) row: the Pace part fitted on
   the fold's training models (selection, nested tuning, weights; ``models.shrinkage.fit_pace_parts``).
   It returns the proxy as rows of instance weights (``cols``, ``weight``, ``centre``, ``side``, the
   intercept and clamp) and its logit for every model of the fold.
2. ``pace_default_ability(data, held_out, selected, params)`` per fold, ``selected`` being SQL's union
   of the fold's selected columns: the source-ability scale fitted without them and, per target, the
   monotone link from ability to target logit (``ability_without``, ``fit_ability_link``).
3. Plain SQL combines them (``COMBINE_SQL``): the even average of the Pace logit and the link's, gated
   to the link outside the training models' ability range, through expit: the prediction of every
   model of every fold, the held-out ones being the evaluation's and fold 'all' the fit's own.

``data`` names the matrices of every known model (``warehouse.fold_data``: read once in long form from
``fold_cells``, so no row ever holds the warehouse); a fold is a row subset of them, training models
first, exactly as the fold's ``fold_matrix`` row would give it. Within one vector of rows the UDF fits the targets of a
fold together (they share training bases); each row's result depends only on that row.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import duckdb
import numpy as np
import pyarrow as pa

from warehouse.fold_data import one_udf_call_at_a_time, registered, resolve
from warehouse.matrices import Matrices
from warehouse.udfs import REGISTRARS, arrow_type, register_arrow_udfs

__all__ = ["registered", "pace_parts", "fold_ability", "run_folds", "DefaultFolds", "COMBINE_SQL", "kernel_error"]

PACE_RESULT = ("STRUCT(cols INTEGER[], side VARCHAR[], weight DOUBLE[], centre DOUBLE[], intercept DOUBLE, "
               "lo DOUBLE, hi DOUBLE, m DOUBLE, nc_h INTEGER, nc_d INTEGER, q DOUBLE, trained_on VARCHAR[], "
               "z STRUCT(model VARCHAR, z DOUBLE)[], warnings VARCHAR[])")
ABILITY_RESULT = ("STRUCT(theta STRUCT(model VARCHAR, theta DOUBLE)[], "
                  "leaves STRUCT(leaf INTEGER, centre DOUBLE, scale DOUBLE, loading DOUBLE)[], "
                  "centres STRUCT(col INTEGER, centre DOUBLE)[], "
                  "links STRUCT(target VARCHAR, intercept DOUBLE, slope DOUBLE, floor_intercept DOUBLE, "
                  "floor_slope DOUBLE, theta_lo DOUBLE, theta_hi DOUBLE, theta_sd DOUBLE, trained_on VARCHAR[])[])")

def _labelled(m: Matrices, n_train: int) -> np.ndarray:
    actual = m.target_means()
    train = np.arange(n_train)
    return train[np.isfinite(actual[train]).any(axis=1)]


def _configs(params: dict, targets: list[str]):
    """params["configs"] (target -> {m, nc_h, nc_d, q}) as AbsConfigs: the Pace part is not re-tuned."""
    from models.configs import AbsConfig

    fixed = params.get("configs")
    return None if not fixed else {t: AbsConfig(**fixed[t]) for t in targets}


def pace_parts(token: str, held_out: list[str], targets: list[str], params: dict) -> list[dict]:
    """Step 1 for the given targets of one fold: one ``PACE_RESULT`` dict per target."""
    from models.shrinkage import fit_pace_parts
    from warehouse.kernels import jobs, kfold_above

    m, n_train = resolve(token, held_out)
    index = {t: k for k, t in enumerate(m.targets)}
    unknown = [t for t in targets if t not in index]
    if unknown:
        raise ValueError(f"targets without any rows: {', '.join(unknown)}")
    Y = m.target_means()[:, [index[t] for t in targets]]
    paces, warnings = fit_pace_parts(m.X, Y, targets, train=_labelled(m, n_train), models=m.models,
                                     count=params["count"], seed=params["seed"], n_jobs=jobs(),
                                     kfold_above=kfold_above(), configs=_configs(params, targets))
    out = []
    for target in targets:
        p = paces[target]
        z = p.predict(m.X)
        cfg = p.config
        out.append({"cols": np.asarray(p.cols, np.int64).tolist(), "side": [str(s) for s in p.side],
                    "weight": np.asarray(p.weight, float).tolist(), "centre": np.asarray(p.centre, float).tolist(),
                    "intercept": float(p.intercept), "lo": float(p.lo), "hi": float(p.hi), "m": float(cfg.m),
                    "nc_h": int(cfg.nc_h), "nc_d": int(cfg.nc_d), "q": None if cfg.q is None else float(cfg.q),
                    "trained_on": list(p.trained_on),
                    "z": [{"model": name, "z": float(v)} for name, v in zip(m.models, z)],
                    "warnings": [w for w in warnings if w.startswith(f"{target}: ")]})
    return out


def fold_ability(token: str, held_out: list[str], selected: list[int], params: dict) -> dict:
    """Step 2 for one fold: the ``ABILITY_RESULT`` dict (``centres`` only with params["centres"])."""
    from models.shrinkage import ability_without, chance_ability, fit_ability_link, training_rows

    m, n_train = resolve(token, held_out)
    Y = m.target_means()
    scale, theta, centres = ability_without(m.X, m.leaves, m.n_leaves, np.asarray(selected or [], np.int64),
                                            scale_rows=np.arange(n_train), collapsed=m.collapsed_mask(),
                                            call_group=m.call_groups())
    floor_ability = chance_ability(scale, m.n_leaves)
    n_instances = m.target_counts()
    links = []
    for t, (target, rows) in enumerate(training_rows(Y, m.targets, _labelled(m, n_train)).items()):
        fitted = fit_ability_link(theta[rows], Y[rows, t], n_instances[rows, t].astype(float), floor_ability)
        links.append({"target": target, "intercept": fitted.link.intercept, "slope": fitted.link.slope,
                      "floor_intercept": fitted.floor.intercept, "floor_slope": fitted.floor.slope,
                      "theta_lo": fitted.theta_lo, "theta_hi": fitted.theta_hi, "theta_sd": fitted.theta_sd,
                      "trained_on": [m.models[i] for i in rows]})
    kept = np.flatnonzero(np.isfinite(centres)) if params.get("centres") else np.zeros(0, np.int64)
    return {"theta": [{"model": name, "theta": None if not np.isfinite(v) else float(v)}
                      for name, v in zip(m.models, theta)],
            "leaves": [{"leaf": int(leaf), "centre": float(c), "scale": float(s), "loading": float(w)}
                       for leaf, c, s, w in zip(scale.leaves, scale.centre, scale.scale, scale.loading)],
            "centres": [{"col": int(c), "centre": float(centres[c])} for c in kept],
            "links": links}


def _pace_udf(token, held_out, target, params):
    """Vectorised: the rows of one vector that share (matrices, fold, params) are fitted together."""
    n = len(token)
    keys = [(token[i].as_py(), tuple(held_out[i].as_py() or []), params[i].as_py()) for i in range(n)]
    groups: dict[tuple, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    out: list[dict | None] = [None] * n

    def fit_group(group):
        (tok, held, raw), rows = group
        targets = [target[i].as_py() for i in rows]
        distinct = list(dict.fromkeys(targets))
        return rows, targets, dict(zip(distinct, pace_parts(tok, list(held), distinct, json.loads(raw))))

    # A fold whose configurations are fixed (`pace fit`'s K-fold residuals) does no tuning, so it has no
    # threads of its own: such folds share the worker threads instead; tuned folds run one at a time,
    # their tuning on the threads.
    items = list(groups.items())
    tuned = any(not json.loads(raw).get("configs") for (_, _, raw), _ in items)
    for rows, targets, results in _map_folds(fit_group, items, parallel=not tuned):
        for i, t in zip(rows, targets):
            out[i] = results[t]
    return pa.array(out, type=arrow_type(PACE_RESULT))


def _ability_udf(token, held_out, selected, params):
    # Each fold's ability runs single-threaded BLAS (its soft impute is ~80x slower on two threads): the
    # folds of one vector share the worker threads.
    out = _map_folds(lambda i: fold_ability(token[i].as_py(), held_out[i].as_py() or [],
                                            selected[i].as_py() or [], json.loads(params[i].as_py())),
                     range(len(token)), parallel=True)
    return pa.array(out, type=arrow_type(ABILITY_RESULT))


def _map_folds(fn, items, parallel: bool) -> list:
    """``[fn(x) for x in items]``, on the worker threads (``PACE_JOBS``) under one single-threaded BLAS
    scope when ``parallel``. Each fold holds its own copy of the matrices' rows, so at most ``jobs()``
    copies exist at once."""
    from models.parallel import blas_limit, map_jobs
    from warehouse.kernels import jobs

    items = list(items)
    if not parallel or len(items) < 2 or jobs() < 2:
        return [fn(x) for x in items]
    with blas_limit():
        return map_jobs(fn, items, jobs())


def register(con: duckdb.DuckDBPyConnection) -> None:
    register_arrow_udfs(con, [
        ("pace_default_pace", _pace_udf, ["VARCHAR", "VARCHAR[]", "VARCHAR", "VARCHAR"], PACE_RESULT),
        ("pace_default_ability", _ability_udf, ["VARCHAR", "VARCHAR[]", "INTEGER[]", "VARCHAR"], ABILITY_RESULT)])


REGISTRARS.append(register)


#: Step 3: every (fold, model, target) prediction from the two steps' rows (_pace: fold, held_out,
#: target, r PACE_RESULT; _ability: fold, a ABILITY_RESULT). The gate is models.shrinkage's
#: W_BASE + (1 - W_BASE) * min(distance / GATE, 1), passed as parameters.
COMBINE_SQL = """
WITH pace AS (
    SELECT p.fold, p.held_out, p.target, z.model, z.z AS z_pace
    FROM _pace AS p, unnest(p.r.z) AS u(z)
),
theta AS (
    SELECT a.fold, t.model, t.theta FROM _ability AS a, unnest(a.a.theta) AS u(t)
),
links AS (
    SELECT a.fold, l.* FROM _ability AS a, unnest(a.a.links) AS u(l)
),
placed AS (
    SELECT p.fold, p.model, p.target, list_contains(p.held_out, p.model) AS held, p.z_pace, t.theta,
           l.intercept + l.slope * t.theta AS z_struct,
           CASE WHEN t.theta IS NULL THEN 0
                ELSE greatest(l.theta_lo - t.theta, t.theta - l.theta_hi, 0) / greatest(l.theta_sd, 1e-12)
                END AS distance
    FROM pace AS p
    JOIN theta AS t USING (fold, model)
    JOIN links AS l USING (fold, target)
),
gated AS (
    SELECT *, $w_base + (1 - $w_base) * least(greatest(distance / $gate, 0), 1) AS w FROM placed
)
SELECT fold, model, target, held, theta, distance,
       1 / (1 + exp(-((1 - w) * z_pace + w * coalesce(z_struct, z_pace)))) AS predicted
FROM gated
"""


@dataclass
class DefaultFolds:
    """The three steps' rows for a set of folds (Arrow tables) and the combined predictions."""
    pace: pa.Table          # fold, held_out, target, r (PACE_RESULT)
    ability: pa.Table       # fold, held_out, a (ABILITY_RESULT)
    predictions: pa.Table   # fold, model, target, held, theta, distance, predicted

    def predicted(self, models: list[str], targets: list[str], held_only: bool = True) -> np.ndarray:
        """(n, T) predictions in ``models`` x ``targets`` order; NaN where no fold predicts the cell (or,
        with ``held_only``, where the model was trained on rather than held out)."""
        out = np.full((len(models), len(targets)), np.nan)
        row, col = {m: i for i, m in enumerate(models)}, {t: k for k, t in enumerate(targets)}
        d = self.predictions.to_pydict()
        for model, target, held, value in zip(d["model"], d["target"], d["held"], d["predicted"]):
            if (held or not held_only) and model in row and target in col and value is not None:
                out[row[model], col[target]] = value
        return out


def run_folds(con: duckdb.DuckDBPyConnection, token: str, folds_sql: str, folds_params: list, params: dict,
              also_selected: list[int] | None = None) -> DefaultFolds:
    """Steps 1-3 over the fold rows of ``folds_sql`` (columns fold, held_out, target; e.g.
    ``SELECT fold, held_out, target FROM eval_folds(?, ?)``). ``also_selected``: columns left out of every
    fold's ability besides the fold's own selections (the pairwise fit's, for `pace fit`)."""
    from models.shrinkage import GATE, W_BASE

    text = json.dumps(params)
    try:
        with one_udf_call_at_a_time(con):
            con.execute(f"""
                CREATE OR REPLACE TEMP TABLE _pace AS
                SELECT f.fold, f.held_out, f.target, pace_default_pace(?, f.held_out, f.target, ?) AS r
                FROM ({folds_sql}) AS f""", [token, text, *folds_params])
            con.execute("""
                CREATE OR REPLACE TEMP TABLE _ability AS
                WITH selected AS (
                    SELECT fold, any_value(held_out) AS held_out,
                           list_distinct(list_concat(flatten(list(r.cols)), ?::INTEGER[])) AS cols
                    FROM _pace GROUP BY fold
                )
                SELECT fold, held_out, pace_default_ability(?, held_out, cols, ?) AS a FROM selected""",
                        [list(also_selected or []), token, text])
        predictions = con.sql(COMBINE_SQL, params={"w_base": W_BASE, "gate": GATE}).to_arrow_table()
        return DefaultFolds(con.sql("SELECT * FROM _pace").to_arrow_table(),
                            con.sql("SELECT * FROM _ability").to_arrow_table(), predictions)
    except duckdb.Error as exc:
        raise kernel_error(exc) from exc
    finally:
        con.execute("DROP TABLE IF EXISTS _pace")
        con.execute("DROP TABLE IF EXISTS _ability")


def kernel_error(exc: duckdb.Error) -> Exception:
    """A kernel's ValueError raised inside a UDF as itself (its message is the user's answer)."""
    text = str(exc)
    marker = "ValueError: "
    return ValueError(text[text.index(marker) + len(marker):].strip()) if marker in text else exc
