"""Arrow tables visible to a DuckDB connection under a name for the duration of a block."""
from __future__ import annotations

from contextlib import contextmanager

import duckdb
import pyarrow as pa


@contextmanager
def registered(con: duckdb.DuckDBPyConnection, **tables: pa.Table):
    """Register each Arrow table of ``tables`` under its keyword name, and unregister them when the block ends.

    When the block raised, an error from unregistering is dropped so the block's own error is the one seen:
    after an error inside a transaction (e.g. out of memory in an INSERT), DuckDB refuses every statement
    until ROLLBACK, unregistering included ("Current transaction is aborted"), which hid the cause."""
    for name, table in tables.items():
        con.register(name, table)
    failed = False
    try:
        yield con
    except BaseException:
        failed = True
        raise
    finally:
        for name in tables:
            try:
                con.unregister(name)
            except duckdb.Error:
                if not failed:
                    raise
