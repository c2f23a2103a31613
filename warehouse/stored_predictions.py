"""Every model's rows of ``predictions``, stored with the fingerprint of their inputs, so that one model's
lookup (``pace predict``, :meth:`Warehouse.predict`) reads a few stored rows instead of planning and running
the chain of views behind ``predictions`` (DuckDB spends ~70 ms binding and optimizing it, ~30 ms running it,
at any size).

The stored rows are never trusted blindly: a lookup serves a model's rows only while the fingerprint they
were computed at (``prediction_inputs``: the model's own score rows and facts, every fit's row, the roles
and source leaves) equals the current one, all of them are there and ``pace_meta`` holds this rule's stamp;
otherwise it serves none and the caller computes the rows from ``predictions``. So a score, hold, role or
date written by another DuckDB client, or one nobody refreshed after, costs speed, not correctness. Writers
keep the rows current (:func:`refresh`, in their own transaction: only the models whose fingerprint changed
are recomputed); ``pace sql --write`` removes the stamp first (:func:`mark_stale`), and the next ``pace fit``
or ``pace doctor`` recomputes every model. What no fingerprint reads: a fit's own rows other than its
``proxy_fits`` / ``anchor_fits`` row (weights, leaves, centres, items, grid, curve, factors: written once by
pace, with that row) and the views and macros themselves (the stamp is the schema files'). Reading them
on every lookup would cost more than the lookup; another client editing them is found by ``pace doctor``
(:func:`drift`: the stored rows against the view), which then recomputes every model.
"""
from __future__ import annotations

import duckdb

from ingest.tolerance import same_number
from warehouse.registered import registered
from warehouse.storing import transaction

STAMP_KEY = "stored_predictions"
#: the columns of ``predictions`` (and of ``stored_predictions``), in order
COLUMNS = ("model", "target", "predicted", "low", "high", "coverage", "n_scored", "n_instances", "interval_level",
           "method", "fit_id", "ability", "ability_distance", "out_of_range", "range_side", "range_reason",
           "sources", "restricted", "anchors", "prior")
#: those columns as a select list over a relation aliased ``p``
_SELECTED = ", ".join(f"p.{c}" for c in COLUMNS)
#: stored and recomputed rows are equal when their numbers agree to this (sums run in DuckDB's thread order)
_TOLERANCE = 1e-9
#: up to this many changed models, one query per model (~0.15 s each: `model = ?` reaches every scan of the
#: chain, where an IN list of a few models read every model's rows: 6 models took 33 s at 1,000 models);
#: more, one read of every model's rows joined to the list (9.75 s at 1,000 models, 1.3 s at 100)
_ONE_BY_ONE = 50


def rule_stamp() -> str:
    """The version of the rule the stored rows follow: the schema's (any view of the chain may change)."""
    from warehouse.connect import schema_fingerprint

    return schema_fingerprint()


def is_current(con: duckdb.DuckDBPyConnection) -> bool:
    """The stamp says the stored rows follow this rule (each model's rows still need their fingerprint)."""
    row = con.execute("SELECT any_value(value) FROM pace_meta WHERE key = ?", [STAMP_KEY]).fetchall()[0]
    return row[0] == rule_stamp()


def is_stale(con: duckdb.DuckDBPyConnection) -> bool:
    """There are fits but no stored row may be served until a full :func:`refresh` (stamp absent or another
    rule's): lookups are slower, never wrong."""
    return _has_fits(con) and not is_current(con)


def mark_stale(con: duckdb.DuckDBPyConnection) -> None:
    """No stored row is served until the next full :func:`refresh` (before SQL that may write anything)."""
    con.execute("DELETE FROM pace_meta WHERE key = ?", [STAMP_KEY])


def _has_fits(con: duckdb.DuckDBPyConnection) -> bool:
    return con.execute("SELECT EXISTS (SELECT 1 FROM proxy_fits) OR EXISTS (SELECT 1 FROM anchor_fits)").fetchall()[0][0]


def refresh(con: duckdb.DuckDBPyConnection, *, full: bool = False) -> int:
    """Recompute the stored rows of every model whose fingerprint changed (every model when ``full``, or when
    the stamp is absent or names another rule), drop those of models that are gone, and stamp. Runs inside
    the caller's transaction. Returns the models recomputed.

    Cost: one scan of every score row for the fingerprints (none without a fit), then one read of
    ``predictions`` for the models recomputed."""
    fits = _has_fits(con)
    if full or not fits or not is_current(con):     # only this module's two tables: every row is recomputed
        con.execute("DELETE FROM stored_predictions")
        con.execute("DELETE FROM stored_prediction_models")
    if not fits:                                      # nothing to predict with: nothing stored
        _stamp(con)
        return 0
    inputs = con.sql("SELECT model, fingerprint FROM prediction_inputs").to_arrow_table()
    with registered(con, _prediction_inputs_now=inputs):
        changed = [m for (m,) in con.execute("""
            SELECT coalesce(i.model, s.model) FROM _prediction_inputs_now AS i
            FULL OUTER JOIN stored_prediction_models AS s ON s.model = i.model
            WHERE i.fingerprint IS DISTINCT FROM s.fingerprint ORDER BY 1""").fetchall()]
        if changed:
            con.execute("DELETE FROM stored_predictions WHERE list_contains(?, model)", [changed])
            con.execute("DELETE FROM stored_prediction_models WHERE list_contains(?, model)", [changed])
            if len(changed) > _ONE_BY_ONE:
                con.execute(f"""INSERT INTO stored_predictions SELECT {_SELECTED} FROM predictions AS p
                                SEMI JOIN (SELECT unnest(?) AS model) AS c ON c.model = p.model""", [changed])
            else:
                for model in changed:
                    con.execute(f"INSERT INTO stored_predictions SELECT {_SELECTED} FROM predictions AS p "
                                "WHERE p.model = ?", [model])
            con.execute("""INSERT INTO stored_prediction_models
                           SELECT i.model, i.fingerprint, count(p.model) FROM _prediction_inputs_now AS i
                           LEFT JOIN stored_predictions AS p ON p.model = i.model
                           WHERE list_contains(?, i.model) GROUP BY ALL""", [changed])
    _stamp(con)
    return len(changed)


def refresh_committed(con: duckdb.DuckDBPyConnection, *, full: bool = False) -> int:
    """:func:`refresh` in a transaction of its own, for writers whose rows are committed already (a fit, a
    restricted fit, ingest after its commit, the end of a run, `pace metadata`, `pace doctor`)."""
    with transaction(con):
        return refresh(con, full=full)


def _stamp(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("INSERT OR REPLACE INTO pace_meta VALUES (?, ?)", [STAMP_KEY, rule_stamp()])


def lookup_relation() -> str:
    """SQL of a relation with ``predictions``' columns holding the stored rows of the model given as two
    parameters (``[model, model]``, then the stamp), when they may be served; else no row."""
    return f"""(SELECT {_SELECTED} FROM (
                    SELECT p.*, k.n_rows, count(*) OVER () AS n_found
                    FROM stored_prediction_models AS k JOIN stored_predictions AS p ON p.model = k.model
                    WHERE k.model = ? AND k.fingerprint = (SELECT fingerprint FROM prediction_inputs WHERE model = ?)
                      AND (SELECT any_value(value) FROM pace_meta WHERE key = '{STAMP_KEY}') = ?) AS p
                WHERE p.n_found = p.n_rows)"""


def every_model_query(con: duckdb.DuckDBPyConnection) -> str:
    """SQL (no parameter) of every model's rows of ``predictions``, for readers of all of them (``pace export``):
    the stored rows when every model's may be served (the stamp holds, and each model of ``prediction_inputs``
    has its stored fingerprint and all its rows, none stored for a model that is gone): one fingerprint pass
    (1.2 s at 1,000 models) and a read of a few thousand rows. Otherwise the view, read through a semi join on
    the models with inputs (every model ``predictions`` has: the `models` view's come from scores and
    metadata): 8.7 s at 1,000 models where a plain read takes 26 s, as DuckDB's common_subplan optimizer
    materialises the scores join that two parts of the chain share."""
    if is_current(con) and _all_served(con):
        return f"SELECT {_SELECTED} FROM stored_predictions AS p"
    return f"SELECT {_SELECTED} FROM predictions AS p SEMI JOIN prediction_inputs AS i ON i.model = p.model"


def _all_served(con: duckdb.DuckDBPyConnection) -> bool:
    return con.execute("""
        WITH found AS (SELECT model, count(*) AS n FROM stored_predictions GROUP BY model)
        SELECT count(*) = 0 FROM prediction_inputs AS i
        FULL OUTER JOIN stored_prediction_models AS k ON k.model = i.model
        LEFT JOIN found AS f ON f.model = coalesce(i.model, k.model)
        WHERE i.model IS NULL OR k.model IS NULL OR i.fingerprint <> k.fingerprint
           OR coalesce(f.n, 0) <> k.n_rows""").fetchall()[0][0]


def drift(con: duckdb.DuckDBPyConnection) -> int:
    """Models whose stored rows would be served (fingerprint and stamp hold) but differ from ``predictions``:
    0 unless a fit's rows were edited behind pace's back. Costs a read of every model's predictions."""
    if not is_current(con):
        return 0
    numbers = ("predicted", "low", "high", "coverage", "interval_level", "ability", "ability_distance")
    others = [c for c in COLUMNS if c not in numbers and c != "model"]
    same = " AND ".join([same_number(f"s.{c}", f"r.{c}", _TOLERANCE) for c in numbers]
                        + [f"s.{c} IS NOT DISTINCT FROM r.{c}" for c in others])
    return con.execute(f"""
        WITH served AS (
            SELECT p.* FROM stored_predictions AS p
            JOIN stored_prediction_models AS k ON k.model = p.model
            JOIN prediction_inputs AS i ON i.model = k.model AND i.fingerprint = k.fingerprint),
        rule AS (
            SELECT r.* FROM predictions AS r WHERE r.model IN (SELECT DISTINCT model FROM served))
        SELECT count(DISTINCT coalesce(s.model, r.model)) FROM served AS s
        FULL OUTER JOIN rule AS r ON r.model = s.model AND r.target = s.target
        WHERE s.model IS NULL OR r.model IS NULL OR NOT ({same})""").fetchall()[0][0]
