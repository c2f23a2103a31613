"""What ad-hoc SQL (`pace sql`, `pace shell`) may run without ``--write``.

Read-only is enforced twice: the warehouse is opened read-only (DuckDB itself refuses INSERT,
DELETE, DROP, ... on it), and statements that could change anything else are refused before they
run: ATTACH (a read-write attach of another file), COPY / EXPORT (write files), INSTALL / LOAD
(fetch and load extensions), CREATE (even a temporary object), and every data-changing statement.
"""
from __future__ import annotations

import duckdb

from ingest.collapsed import mark_stale, refresh_stale
from ingest.lake import lake_drift, sync_lake
from warehouse.errors import UserError

#: statement types that only read (SET / RESET / USE change session settings, nothing stored;
#: MULTI is what PIVOT parses to; TRANSACTION is BEGIN / COMMIT)
READ_ONLY = {"SELECT", "EXPLAIN", "PRAGMA", "CALL", "SET", "MULTI", "TRANSACTION"}


def statement_types(con: duckdb.DuckDBPyConnection, query: str) -> list[str]:
    return [str(s.type).rsplit(".", 1)[-1] for s in con.extract_statements(query)]


def writes(con: duckdb.DuckDBPyConnection, query: str) -> bool:
    """Whether ``query`` holds a statement that may change the warehouse."""
    return any(kind not in READ_ONLY for kind in statement_types(con, query))


def before_write(con: duckdb.DuckDBPyConnection, query: str) -> None:
    """Before ad-hoc SQL that may write: mark the stored collapsed cells stale (committed), so that a
    process killed before :func:`after_write` leaves them to be recomputed by the next open."""
    if writes(con, query):
        mark_stale(con)


def check_statements(con: duckdb.DuckDBPyConnection, query: str, *, write: bool) -> None:
    """Raise :class:`UserError` if ``query`` holds a statement that needs ``--write``."""
    if write:
        return
    for kind in statement_types(con, query):
        if kind not in READ_ONLY:
            kind = "INSTALL / LOAD" if kind == "LOAD" else kind     # DuckDB parses INSTALL as a LOAD statement
            raise UserError(f"{kind} statements change the warehouse or write files, and this is read-only: "
                            "add --write to run it")


def after_write(con: duckdb.DuckDBPyConnection) -> None:
    """After ad-hoc writes, bring the lake back in step with ``scores`` (only what differs) and
    recompute the stored collapsed cells if :func:`before_write` marked them (ad-hoc SQL can change any
    benchmark's rows or role, or the table itself: all of it is recomputed)."""
    try:            # a transaction the SQL left open is never committed (closing rolls it back): end it
        con.execute("ROLLBACK")         # now, so the lake and the stored cells follow what is committed
    except duckdb.TransactionException:
        pass                            # none was open

    gone = con.execute("""SELECT count(*) = 0 FROM duckdb_tables()
                          WHERE database_name = current_database() AND schema_name = 'main'
                            AND table_name = 'scores'""").fetchone()[0]
    if gone:
        raise UserError("the scores table is gone, so the lake was left as it was: `pace ingest` of each "
                        "results tree restores it (and `pace doctor` then says what is still missing)")
    drift = lake_drift(con)
    if drift:
        sync_lake(con, list(drift))
    try:
        refresh_stale(con)
    except duckdb.Error as exc:
        raise UserError(f"the stored collapsed cells could not be recomputed ({str(exc).splitlines()[0]}): "
                        "`pace doctor` restores the schema and recomputes them") from exc
