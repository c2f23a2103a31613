"""The proxy kernels as DuckDB UDFs, and the dispatch from (method, params) to a ``models`` function.

``pace_abs_eval(x, p, targets, models, params)`` takes one ``loocv_inputs`` row (sql/044) and
returns predictions, configurations and selections as nested lists, which the evaluation SQL
unnests into ``loocv_predictions``, ``loocv_configs`` and ``loocv_selections``. Selection columns
come back as indices into ``source_columns(src)``; the SQL turns them into instance keys.
"""
from __future__ import annotations

import json
from typing import Any, Callable

import duckdb
import numpy as np
import pyarrow as pa

from warehouse.matrices import inputs_to_arrays, published_arrays
from warehouse.udfs import REGISTRARS

ABS_RESULT = ("STRUCT(pred DOUBLE[][], actual DOUBLE[][], "
              "configs STRUCT(target VARCHAR, fold INTEGER, m DOUBLE, nc_h INTEGER, nc_d INTEGER, "
              "q DOUBLE, objective DOUBLE)[], "
              "sel STRUCT(fold INTEGER, target VARCHAR, side VARCHAR, col INTEGER, rank INTEGER, "
              "weight DOUBLE, nc INTEGER)[], "
              "warnings VARCHAR[])")

METHODS: dict[str, Callable[..., Any]] = {}


def method(name: str):
    def register(fn):
        METHODS[name] = fn
        return fn
    return register


@method("compat")
def compat_abs(X: np.ndarray, P: list[np.ndarray], targets: list[str], models: list[str], params: dict):
    """The published pipeline on the published loader's arrays (zeros for missing, float32)."""
    from models import compat

    Xv, kept, P32, Y = published_arrays(X, P)
    common = dict(models=models, count=params["count"], B=params["B"], seed=params["seed"])
    if params.get("mode") == "fit":
        configs, _ = compat.frozen_abs_configs(params["count"], targets, q=params.get("q"), m=params.get("m"),
                                               nc_h=params.get("nc_h"), nc_d=params.get("nc_d"))
        result = compat.fit_abs(Xv, Y, P32, targets, configs=configs, **common)
    elif params.get("auto_tune"):
        q = params.get("q")
        m_grid = params.get("m_grid") or compat.M_GRID
        result = compat.loocv_abs_autotune(Xv, Y, P32, targets, q_grid=None if q is None else [q],
                                           nc_max=params.get("nc_max", 10), m_grid=m_grid, **common)
    else:
        configs, warn = compat.frozen_abs_configs(params["count"], targets, q=params.get("q"), m=params.get("m"),
                                                  nc_h=params.get("nc_h"), nc_d=params.get("nc_d"))
        result = compat.loocv_abs_frozen(Xv, Y, P32, targets, configs=configs, **common)
        if warn:
            result.warnings.append(warn)
    return result, kept


@method("default")
def default_abs(X: np.ndarray, P: list[np.ndarray], targets: list[str], models: list[str], params: dict):
    """The fixed method: masked missing data, inductive basis, nested tuning (models/default.py)."""
    from models import default

    common = dict(models=models, count=params["count"], B=params["B"], seed=params["seed"], n_jobs=2)
    if params.get("mode") == "fit":
        result = default.fit_abs_default(X, P, targets, **common)
    else:
        result = default.loocv_abs_default(X, P, targets, nested=True, **common)
    return result, np.arange(X.shape[1])


def _config_row(target: str, fold: int, c, objective) -> dict:
    return {"target": target, "fold": int(fold), "m": float(c.m), "nc_h": int(c.nc_h), "nc_d": int(c.nc_d),
            "q": None if c.q is None else float(c.q), "objective": objective}


def _to_row(result, kept: np.ndarray, targets: list[str]) -> dict:
    fold_configs = getattr(result, "fold_configs", None) or {}
    if fold_configs:   # nested tuning: one configuration per (held-out model, target)
        configs = [_config_row(t, f, c, None) for (f, t), c in sorted(fold_configs.items(), key=lambda kv: kv[0])]
    else:
        configs = [_config_row(t, -1, c, getattr(result, "sweep", {}).get(t)) for t, c in result.configs.items()]
    table = result.selection_table()
    cols = np.asarray(table["col_idx"], dtype=int)
    sel = [{"fold": int(f), "target": str(t), "side": str(s), "col": int(kept[c]), "rank": int(r),
            "weight": float(w), "nc": int(nc)}
           for f, t, s, c, r, w, nc in zip(table["fold"], table["target"], table["side"], cols,
                                           table["rank"], table["weight"], table["nc"])]
    return {"pred": _nullable(result.pred), "actual": _nullable(result.actual),
            "configs": configs, "sel": sel, "warnings": list(result.warnings)}


def _nullable(matrix) -> list[list[float | None]]:
    """NaN (no target value: masked by ``default``) -> NULL, so SQL aggregates skip it."""
    return [[float(v) if np.isfinite(v) else None for v in row] for row in np.asarray(matrix, float)]


def abs_eval_row(x: pa.ListScalar, p: pa.ListScalar, targets: list[str], models: list[str], params: dict) -> dict:
    X, P = inputs_to_arrays(x, p)
    name = params.get("method", "default")
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r} (choose from {', '.join(sorted(METHODS))})")
    result, kept = METHODS[name](X, P, targets, models, params)
    return _to_row(result, kept, targets)


def _pace_abs_eval(x, p, targets, models, params):
    """Arrow UDF: one output per input row (normally one row)."""
    out = []
    for i in range(len(x)):
        out.append(abs_eval_row(x[i], p[i], targets[i].as_py(), models[i].as_py(), json.loads(params[i].as_py())))
    return pa.array(out, type=_ABS_ARROW_TYPE)


_ABS_ARROW_TYPE = None


def register(con: duckdb.DuckDBPyConnection) -> None:
    global _ABS_ARROW_TYPE
    if _ABS_ARROW_TYPE is None:
        _ABS_ARROW_TYPE = duckdb.sql(f"SELECT NULL::{ABS_RESULT} AS r").to_arrow_table().schema.field("r").type
    # Connections to one file in one process share a catalog: a second connect() finds it registered.
    if con.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = 'pace_abs_eval'").fetchall()[0][0]:
        return
    con.create_function("pace_abs_eval", _pace_abs_eval,
                        ["DOUBLE[][]", "DOUBLE[][][]", "VARCHAR[]", "VARCHAR[]", "VARCHAR"], ABS_RESULT,
                        type="arrow", side_effects=True)


REGISTRARS.append(register)
