"""Benchmark roles (target, source, excluded): changing one changes which cells can be collapsed."""
from __future__ import annotations

import duckdb

from ingest import derived
from warehouse.errors import UserError


#: instance_stats correlates each source instance with at most this many targets (sql/095)
MAX_TARGETS = 8


def set_role(con: duckdb.DuckDBPyConnection, benchmark: str, role: str) -> None:
    """Give ``benchmark`` the role ``role``, and recompute the stored collapsed cells (only source cells
    can be collapsed) and summaries in the same transaction. A target past :data:`MAX_TARGETS` is refused."""
    if role == "target":
        others = con.execute("SELECT count(*) FROM benchmarks WHERE role = 'target' AND benchmark <> ?",
                             [benchmark]).fetchall()[0][0]
        if others >= MAX_TARGETS:
            raise UserError(f"{benchmark}: the warehouse has {others} targets already, the most instance_stats "
                            f"correlates with ({MAX_TARGETS}); make one of them a source or excluded first")

    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("INSERT OR REPLACE INTO benchmarks VALUES (?, ?)", [benchmark, role])
        derived.refresh(con)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
