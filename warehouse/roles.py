"""Benchmark roles (target, source, excluded): changing one changes which cells can be collapsed."""
from __future__ import annotations

import duckdb

from ingest import collapsed


def set_role(con: duckdb.DuckDBPyConnection, benchmark: str, role: str) -> None:
    """Give ``benchmark`` the role ``role``, and recompute the stored collapsed cells (only source cells
    can be collapsed) in the same transaction."""
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("INSERT OR REPLACE INTO benchmarks VALUES (?, ?)", [benchmark, role])
        collapsed.refresh(con)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
