"""The default method's pairwise evaluation (Goal B) as SQL over a per-(fold, target) regressor UDF.

``pace_default_pair(data, split, held_out, target, params)`` per ``eval_folds`` row returns *directed*
predictions: for a row model k and an opponent j, the margin and win probability of k over j from a
proxy that never saw k's target (``models.pair_default``: selection, nested tuning, cross-fitted Platt).
The clean pair protocol then averages the two directions of each pair in SQL (``SYMMETRIC_SQL``):

    margin(k, j) = (d(k, j) - d(j, k)) / 2,    p(k, j) = (p_d(k, j) + 1 - p_d(j, k)) / 2.

* split ``loo``: fold k's row holds k's directed predictions (trained on every other model with the
  target); the direction (j, k) comes from fold j.
* other splits: the fold's targets are hidden and every model's directed predictions are made
  leave-one-out on what remains; both directions of a pair come from the fold itself, and only its
  held-out models are reported.

`pace fit`'s Goal B is ``pace_default_pair_fit(data, target, params)`` over the fold 'all' rows: the
proxy's weights, calibration and configuration per target (``fit_pair_rows``).

The UDF computes the rows of one vector together (all loo folds of a target share their inner
leave-one-out fits; a masked fold's targets share their training bases); each row's result depends
only on that row.
"""
from __future__ import annotations

import json

import duckdb
import numpy as np
import pyarrow as pa

from warehouse.fold_data import one_udf_call_at_a_time, registered, resolve, shared
from warehouse.udfs import REGISTRARS, arrow_type, register_arrow_udfs

__all__ = ["PAIR_RESULT", "PAIR_FIT_RESULT", "SYMMETRIC_SQL", "run_pair_folds", "fit_pair_rows"]

PAIR_RESULT = ("STRUCT(directed STRUCT(model VARCHAR, opponent VARCHAR, margin DOUBLE, prob DOUBLE)[], "
               "configs STRUCT(model VARCHAR, m DOUBLE, nc INTEGER, q DOUBLE, cal_a DOUBLE, cal_b DOUBLE)[], "
               "sel STRUCT(model VARCHAR, side VARCHAR, col INTEGER, rank INTEGER, weight DOUBLE, nc INTEGER)[], "
               "warnings VARCHAR[])")


PAIR_FIT_RESULT = ("STRUCT(cols INTEGER[], weight DOUBLE[], centre DOUBLE[], cal_a DOUBLE, cal_b DOUBLE, "
                   "m DOUBLE, nc INTEGER, q DOUBLE, trained_on VARCHAR[], warnings VARCHAR[])")


def _finite(v: float) -> float | None:
    return float(v) if np.isfinite(v) else None


def _loocv(m, targets: list[str], params: dict, hidden: list[str]):
    """``loocv_pair_default`` on the matrices with the ``hidden`` models' targets masked."""
    from models.pair_default import loocv_pair_default
    from warehouse.kernels import jobs

    index = {t: k for k, t in enumerate(m.targets)}
    P = [m.P[index[t]].copy() for t in targets]
    rows = [i for i, name in enumerate(m.models) if name in set(hidden)]
    for p in P:
        p[rows] = np.nan
    return loocv_pair_default(m.X, P, targets, models=m.models, count=params["count"], B=params["B"],
                              seed=params["seed"], n_jobs=jobs())


def _rows(result, m, t: int, target: str, models: list[int]) -> dict:
    """The PAIR_RESULT of ``target`` (index t in ``result``) for the directed rows of ``models``."""
    directed = [{"model": m.models[k], "opponent": m.models[j], "margin": _finite(result.directed_margins[k, j, t]),
                 "prob": _finite(result.directed_prob[k, j, t])}
                for k in models for j in range(len(m.models)) if j != k]
    configs, sel = [], []
    for k in models:
        cfg = result.fold_configs.get((k, target))
        if cfg is not None:
            a, b = result.fold_platt.get((k, target), (None, None))
            configs.append({"model": m.models[k], "m": float(cfg.m), "nc": int(cfg.nc),
                            "q": None if cfg.q is None else float(cfg.q), "cal_a": a, "cal_b": b})
    for fs in result.selections:
        if fs.target == target and fs.fold in models:
            for side_name, side in (("H", fs.H), ("D", fs.D)):
                for c, r, w in zip(np.asarray(side.cols, int), np.asarray(side.rank), np.asarray(side.weight, float)):
                    sel.append({"model": m.models[fs.fold], "side": side_name, "col": int(c), "rank": int(r),
                                "weight": float(w), "nc": int(side.nc)})
    return {"directed": directed, "configs": configs, "sel": sel,
            "warnings": [w for w in result.warnings if w.startswith(f"{target}: ")]}


def pair_rows(token: str, split: str, folds: list[list[str]], targets: list[str], params: dict) -> list[dict]:
    """PAIR_RESULT dicts for the (held-out set, target) pairs ``zip(folds, targets)`` of one split."""
    m, _ = resolve(token)
    out: list[dict | None] = [None] * len(folds)
    # every target of the matrices, in their order, whatever the rows ask: a target's bootstrap seed is
    # seed + 31 * (its index), so a row's result must not depend on which rows share its vector
    wanted = list(m.targets)
    if split == "loo":     # one leave-one-out pass gives every fold's directed row
        result = shared(token, ("pair-loo", json.dumps(params, sort_keys=True)),
                        lambda: _loocv(m, wanted, params, []))
        for k, (held, target) in enumerate(zip(folds, targets)):
            out[k] = _rows(result, m, wanted.index(target), target, [m.models.index(h) for h in held])
        return out
    for held in dict.fromkeys(tuple(f) for f in folds):
        result = shared(token, ("pair-masked", held, json.dumps(params, sort_keys=True)),
                        lambda: _loocv(m, wanted, params, list(held)))  # noqa: B023 (called at once)
        for k, (fold, target) in enumerate(zip(folds, targets)):
            if tuple(fold) == held:
                row = _rows(result, m, wanted.index(target), target, list(range(len(m.models))))
                keep = {name for name in held}
                row["configs"] = [c for c in row["configs"] if c["model"] in keep]
                row["sel"] = [s for s in row["sel"] if s["model"] in keep]
                out[k] = row
    return out


def pair_fit_row(token: str, target: str, params: dict) -> dict:
    """The fold 'all' of Goal B: ``fit_pair_default`` on every model with the target (config by their
    leave-one-out, Platt on those out-of-fold margins, weights on all of them), as a PAIR_FIT_RESULT."""
    from models.pair_default import fit_pair_default
    from warehouse.kernels import jobs, kfold_above

    m, _ = resolve(token)
    # every target at once, in the matrices' order: a target's bootstrap seed is seed + 31 * (its index)
    fit = shared(token, ("pair-fit", json.dumps(params, sort_keys=True)),
                 lambda: fit_pair_default(m.X, m.P, m.targets, models=m.models, count=params["count"],
                                          B=params["B"], seed=params["seed"], n_jobs=jobs(),
                                          kfold_above=kfold_above()))
    if target not in fit.proxies:
        raise ValueError(f"targets without any rows: {target}")
    p = fit.proxies[target]
    cfg = p.config
    return {"cols": np.asarray(p.cols, np.int64).tolist(), "weight": np.asarray(p.weight, float).tolist(),
            "centre": np.asarray(p.centre, float).tolist(), "cal_a": float(p.a), "cal_b": float(p.b),
            "m": float(cfg.m), "nc": int(cfg.nc), "q": None if cfg.q is None else float(cfg.q),
            "trained_on": list(p.trained_on), "warnings": [w for w in fit.warnings if w.startswith(f"{target}: ")]}


def _pair_fit_udf(data, target, params):
    out = [pair_fit_row(data[i].as_py(), target[i].as_py(), json.loads(params[i].as_py())) for i in range(len(data))]
    return pa.array(out, type=arrow_type(PAIR_FIT_RESULT))


def _pair_udf(data, split, held_out, target, params):
    n = len(data)
    groups: dict[tuple, list[int]] = {}
    for i in range(n):
        groups.setdefault((data[i].as_py(), split[i].as_py(), params[i].as_py()), []).append(i)
    out: list[dict | None] = [None] * n
    for (token, split_name, raw), rows in groups.items():
        results = pair_rows(token, split_name, [held_out[i].as_py() or [] for i in rows],
                            [target[i].as_py() for i in rows], json.loads(raw))
        for i, r in zip(rows, results):
            out[i] = r
    return pa.array(out, type=arrow_type(PAIR_RESULT))


def register(con: duckdb.DuckDBPyConnection) -> None:
    register_arrow_udfs(con, [
        ("pace_default_pair", _pair_udf, ["VARCHAR", "VARCHAR", "VARCHAR[]", "VARCHAR", "VARCHAR"], PAIR_RESULT),
        ("pace_default_pair_fit", _pair_fit_udf, ["VARCHAR", "VARCHAR", "VARCHAR"], PAIR_FIT_RESULT)])


REGISTRARS.append(register)


#: The clean pair protocol over the directed rows in ``_pair`` (fold, held_out, target, r PAIR_RESULT): each
#: held-out model's pairs, the two directions averaged (from the opponent's own fold under loo).
SYMMETRIC_SQL = """
WITH directed AS (
    SELECT p.fold, p.held_out, p.target, d.model, d.opponent, d.margin, d.prob
    FROM _pair AS p, unnest(p.r.directed) AS u(d)
)
SELECT a.fold, a.target, a.model, a.opponent,
       0.5 * (a.margin - b.margin) AS margin,
       0.5 * (a.prob + 1 - b.prob) AS prob
FROM directed AS a
LEFT JOIN directed AS b
  ON b.target = a.target AND b.model = a.opponent AND b.opponent = a.model
 AND (b.fold = a.fold OR $split = 'loo')
WHERE list_contains(a.held_out, a.model)
"""


def run_pair_folds(con: duckdb.DuckDBPyConnection, m, split: str, targets_sql: list[str], params: dict):
    """(symmetric rows, the UDF rows) of the default method's pairwise evaluation of ``split`` over
    ``eval_folds(split, targets)`` (Arrow tables)."""
    from warehouse.regressors import kernel_error

    with registered(m) as token:
        try:
            with one_udf_call_at_a_time(con):
                con.execute("""
                    CREATE OR REPLACE TEMP TABLE _pair AS
                    SELECT f.fold, f.held_out, f.target, pace_default_pair(?, ?, f.held_out, f.target, ?) AS r
                    FROM eval_folds(?, ?) AS f WHERE list_contains(?, f.target)""",
                            [token, split, json.dumps(params), split, targets_sql, m.targets])
            symmetric = con.sql(SYMMETRIC_SQL, params={"split": split}).to_arrow_table()
            return symmetric, con.sql("SELECT * FROM _pair").to_arrow_table()
        except duckdb.Error as exc:
            raise kernel_error(exc) from exc
        finally:
            con.execute("DROP TABLE IF EXISTS _pair")


def fit_pair_rows(con: duckdb.DuckDBPyConnection, m, params: dict) -> pa.Table:
    """`pace fit`'s Goal B: ``pace_default_pair_fit`` over the fold 'all' rows of ``eval_folds`` (target, r)."""
    from warehouse.regressors import kernel_error

    with registered(m) as token:
        try:
            with one_udf_call_at_a_time(con):
                return con.sql("""
                    SELECT f.target, pace_default_pair_fit(?, f.target, ?) AS r
                    FROM eval_folds('all', ?) AS f ORDER BY f.target""",
                               params=[token, json.dumps(params), m.targets]).to_arrow_table()
        except duckdb.Error as exc:
            raise kernel_error(exc) from exc
