"""The stored collapsed cells: the table ``collapsed_cells`` holds the rows of the rule
``collapsed_cells_live`` (sql/020_collapsed_cells_live.sql), so that ``predictions``, the ability and ingest's anomaly report read a
few thousand rows instead of two scans of every source row per query (10 s per `predictions` call at
10^8 rows).

Every write keeps the table equal to the rule, through :mod:`ingest.derived` (the one mechanism that
keeps every store derived from ``scores`` in step: when each writer recomputes, and the marks).

The per-leaf instance counts ``source_leaves`` (rule ``source_leaves_live``: one scan of the source rows,
read by ``model_sources`` so that a prediction for one model does not count every model's rows) are
stored the same way, by the same calls: every writer that changes rows or roles already comes here.

The mark is the stamp ``pace_meta`` 'collapsed_cells': the fingerprint of the rules the tables were computed
by, absent while a writer may have left the table behind, different after the rule changed. A refresh
recomputes the whole table: the rule reads every source row even when asked for one benchmark (DuckDB
does not push such a filter past the rule's shared aggregates), so a partial one would cost the same.
:func:`drift` compares the table with the rule for ``pace doctor``.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache

import duckdb

from ingest.tolerance import same_number

TABLE = "collapsed_cells"
RULE = "collapsed_cells_live"
#: every stored table kept equal to its rule here: table -> rule
STORED = {TABLE: RULE, "source_leaves": "source_leaves_live"}
STAMP_KEY = "collapsed_cells"
_KEY = ("model", "benchmark", "subdir", "facet")
#: mean and others_median are sums over many rows, added in an order that varies with DuckDB's threads
_TOLERANCE = 1e-9


@lru_cache(maxsize=1)
def rule_fingerprint() -> str:
    """sha256 of the rules' schema files: a changed rule makes every stored row suspect."""
    from warehouse.settings import SQL_DIR

    digest = hashlib.sha256()
    for rule in STORED.values():
        (path,) = SQL_DIR.glob(f"[0-9][0-9][0-9]_{rule}.sql")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def is_stale(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the mark says the table may differ from the rule (cheap: reads the stamp only)."""
    row = con.execute("SELECT any_value(value) FROM pace_meta WHERE key = ?", [STAMP_KEY]).fetchall()[0]
    return not (row and row[0] == rule_fingerprint())


def refresh(con: duckdb.DuckDBPyConnection) -> None:
    """Recompute the tables from their rules and stamp them. Runs inside the caller's transaction (call it
    after the writes, before COMMIT)."""
    for table, rule in STORED.items():
        con.execute(f"DELETE FROM {table}")
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {rule}")
    con.execute("INSERT OR REPLACE INTO pace_meta VALUES (?, ?)", [STAMP_KEY, rule_fingerprint()])


def mark_stale(con: duckdb.DuckDBPyConnection) -> None:
    """Record that the table is about to fall behind. Call it before writing, outside the writes'
    transactions, so that a kill before :func:`refresh_stale` leaves the mark."""
    con.execute("DELETE FROM pace_meta WHERE key = ?", [STAMP_KEY])


def refresh_stale(con: duckdb.DuckDBPyConnection) -> bool:
    """Recompute the table if it is marked, in a transaction of its own. Returns whether it did."""
    if not is_stale(con):
        return False
    con.execute("BEGIN TRANSACTION")
    try:
        refresh(con)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return True


def drift(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Benchmarks whose stored rows differ from the rules': name -> number of cells (or source leaves) that
    differ (missing, extra, or another value). Costs what the rules cost: three scans of the source rows."""
    key = " AND ".join(f"s.{k} = r.{k}" for k in _KEY)
    rows = con.execute(f"""
        SELECT coalesce(s.benchmark, r.benchmark) AS benchmark, count(*) AS n
        FROM {TABLE} AS s FULL OUTER JOIN {RULE} AS r ON {key}
        WHERE s.model IS NULL OR r.model IS NULL
           OR s.n_rows <> r.n_rows OR s.n_instances <> r.n_instances OR s.reason <> r.reason
           OR NOT {same_number("s.mean", "r.mean", _TOLERANCE)}
           OR NOT {same_number("s.others_median", "r.others_median", _TOLERANCE)}
        GROUP BY 1 ORDER BY 1""").fetchall()
    leaves = con.execute("""
        SELECT coalesce(s.benchmark, r.benchmark) AS benchmark, count(*) AS n
        FROM source_leaves AS s FULL OUTER JOIN source_leaves_live AS r USING (benchmark, subdir)
        WHERE s.n_instances IS DISTINCT FROM r.n_instances
        GROUP BY 1 ORDER BY 1""").fetchall()
    out = dict(rows)
    for benchmark, n in leaves:
        out[benchmark] = out.get(benchmark, 0) + n
    return dict(sorted(out.items()))
