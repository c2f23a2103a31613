"""Writing computed rows: one transaction around a group of inserts, and Arrow tables inserted as rows.

Every writer of derived rows (evaluations, fits, imported selections, anchor fits) stores all of its
rows or none, so a reader never sees half a fit; these two helpers are that rule written once.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb
import pyarrow as pa

from warehouse.registered import registered


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
    with registered(con, _rows_to_store=rows):
        con.execute(f"INSERT INTO {table} {'BY NAME ' if by_name else ''}SELECT * FROM _rows_to_store")


#: Per-fit constants a one-model lookup would otherwise re-derive from a fit's rows on every call, stored with
#: the fit: each statement fills the rows still without theirs from the rule (a ``*_live`` view in ``sql/``).
FIT_CONSTANTS = (
    """UPDATE proxy_leaves AS l SET level = v.level
       FROM proxy_leaf_levels_live AS v
       WHERE l.level IS NULL AND v.fit_id = l.fit_id AND v.benchmark = l.benchmark AND v.subdir = l.subdir""",
    # a curve's points all at once: a point's running maximum and next point depend on its neighbours
    """UPDATE anchor_curve AS c SET rising_mean = v.rising_mean, next_theta = v.next_theta, next_mean = v.next_mean
       FROM anchor_curve_segments_live AS v
       WHERE v.fit_id = c.fit_id AND v.target = c.target AND v.theta = c.theta
         AND (c.fit_id, c.target) IN (SELECT fit_id, target FROM anchor_curve WHERE rising_mean IS NULL)""",
)


def fill_fit_constants(con: duckdb.DuckDBPyConnection) -> None:
    """Fill the stored per-fit constants of rows written without them (see :data:`FIT_CONSTANTS`): every writer
    of a fit calls it after its inserts, in its transaction; a migration calls it for fits stored before."""
    for statement in FIT_CONSTANTS:
        con.execute(statement)


__all__ = ["fill_fit_constants", "insert_arrow", "transaction"]
