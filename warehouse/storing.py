"""Writing computed rows: one transaction around a group of inserts, and Arrow tables inserted as rows.

Every writer of derived rows (evaluations, fits, imported selections, anchor fits) stores all of its
rows or none, so a reader never sees half a fit; these two helpers are that rule written once.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb
import pyarrow as pa


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN on entry, COMMIT when the block ends, ROLLBACK (and re-raise) when it raises, even on ^C."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def insert_arrow(con: duckdb.DuckDBPyConnection, table: str, rows: pa.Table, *, by_name: bool = False) -> None:
    """Insert ``rows`` into ``table`` (``table``'s column order, or matched by name with ``by_name``).

    ``table`` is one of the warehouse's own table names (never user input)."""
    con.register("_rows_to_store", rows)
    try:
        con.execute(f"INSERT INTO {table} {'BY NAME ' if by_name else ''}SELECT * FROM _rows_to_store")
    finally:
        con.unregister("_rows_to_store")


__all__ = ["insert_arrow", "transaction"]
