"""Ad-hoc SQL (`pace sql`, `pace shell`, ``Warehouse.sql``): what a refusal means, in one line, and
keeping the lake and the stored collapsed cells in step after ``--write``.

What the SQL may do is enforced by DuckDB, not here: the connection
(``warehouse.connect.connect(..., sandbox=True)``) opens the file read-only unless ``--write``, has
file, URL and extension access off (with ``--write``: except the lake folders pace writes) and its
configuration locked. DuckDB then refuses whatever would write the warehouse, reach a file, or change
a setting that could, however the statement is spelled; so no list of statements is checked here.
What stays is what DuckDB cannot know: whether a statement may change ``scores`` (so the stored
collapsed cells are marked stale before it runs), how to explain a refusal, and that a write of the
view ``scores`` is one of its two tables' (:func:`run`, :mod:`ingest.score_store`).
"""
from __future__ import annotations

import duckdb

from ingest import score_store
from ingest.derived import mark_stale, refresh_stale
from ingest.lake import lake_drift, sync_lake
from warehouse.errors import UserError

#: statement types that change nothing stored (SET / RESET / USE change session settings; MULTI is
#: what PIVOT parses to; TRANSACTION is BEGIN / COMMIT): they do not mark the collapsed cells stale
READ_ONLY = {"SELECT", "EXPLAIN", "PRAGMA", "CALL", "SET", "MULTI", "TRANSACTION"}


def statement_types(con: duckdb.DuckDBPyConnection, query: str) -> list[str]:
    return [str(s.type).rsplit(".", 1)[-1] for s in con.extract_statements(query)]


def writes(con: duckdb.DuckDBPyConnection, query: str) -> bool:
    """Whether ``query`` holds a statement that may change the warehouse."""
    return any(kind not in READ_ONLY for kind in statement_types(con, query))


def run(con: duckdb.DuckDBPyConnection, query: str, params=None):
    """Run ad-hoc SQL: INSERT / DELETE / UPDATE of ``scores`` are carried out on the tables behind the view
    (score_rows, score_sources: :mod:`ingest.score_store`), so a read-only open refuses them as DuckDB
    refuses any write, and a write open does them."""
    return score_store.execute_script(con, query, params)


def before_write(con: duckdb.DuckDBPyConnection, query: str) -> None:
    """Before ad-hoc SQL that may write: mark the stored collapsed cells stale (committed), so that a
    process killed before :func:`after_write` leaves them to be recomputed by the next open."""
    if writes(con, query):
        mark_stale(con)


def explain(exc: BaseException, *, write: bool) -> str:
    """One line for a statement DuckDB refused or could not run, saying what would help."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    if "read-only mode" in line and not write:
        return f"{line}; the warehouse is open read-only: add --write to run it"
    if "disabled by configuration" in line or "disabled through configuration" in line:
        return (f"{line} (ad-hoc SQL reaches no file, URL or extension outside the warehouse; "
                "`pace export` writes Parquet for other tools)")
    if "configuration has been locked" in line:
        return f"{line} (settings that could reach outside the warehouse are locked for ad-hoc SQL)"
    return line


def after_write(con: duckdb.DuckDBPyConnection) -> None:
    """After ad-hoc writes, bring the lake back in step with ``scores`` (only what differs) and
    recompute the stored collapsed cells if :func:`before_write` marked them (ad-hoc SQL can change any
    benchmark's rows or role, or the table itself: all of it is recomputed)."""
    try:            # a transaction the SQL left open is never committed (closing rolls it back): end it
        con.execute("ROLLBACK")         # now, so the lake and the stored cells follow what is committed
    except duckdb.TransactionException:
        pass                            # none was open

    gone = con.execute("""SELECT count(*) < 3 FROM (
                              SELECT table_name FROM duckdb_tables()
                              WHERE database_name = current_database() AND schema_name = 'main'
                                AND table_name IN ('score_rows', 'score_sources')
                              UNION ALL SELECT view_name FROM duckdb_views()
                              WHERE database_name = current_database() AND schema_name = 'main'
                                AND view_name = 'scores')""").fetchone()[0]
    if gone:
        raise UserError("the scores table is gone (the view scores or its tables score_rows, score_sources), so the lake was left as it was: `pace ingest` of each "
                        "results tree restores it (and `pace doctor` then says what is still missing)")
    failed = None
    try:                # first, so that the lake partitions written below are recorded with the new counts
        refresh_stale(con)
    except duckdb.Error as exc:
        failed = exc
    drift = lake_drift(con)
    if drift:
        sync_lake(con, list(drift))
    if failed is not None:
        raise UserError(f"the stored collapsed cells and summaries could not be recomputed "
                        f"({str(failed).splitlines()[0]}): `pace doctor` restores the schema and recomputes them"
                        ) from failed
