"""The Python kernels the warehouse calls from SQL, registered per connection.

A view or macro that calls one of these works only on a connection opened by
:func:`warehouse.connect.connect`; every view meant for users is plain SQL instead.
Modules add themselves to ``REGISTRARS``; each takes a connection and registers its functions.
"""
from __future__ import annotations

from typing import Callable

import duckdb

REGISTRARS: list[Callable[[duckdb.DuckDBPyConnection], None]] = []


def register_all(con: duckdb.DuckDBPyConnection) -> None:
    import warehouse.kernels  # noqa: F401  (registers itself)
    import warehouse.regressors  # noqa: F401  (registers itself)
    import warehouse.pair_regressors  # noqa: F401  (registers itself)

    for register in REGISTRARS:
        register(con)


_ARROW_TYPES: dict[str, object] = {}


def arrow_type(sql_type: str):
    """The Arrow type of a DuckDB type, worked out once per process on a scratch connection (a UDF must
    not run queries on the connection that is calling it)."""
    if sql_type not in _ARROW_TYPES:
        with duckdb.connect() as scratch:
            _ARROW_TYPES[sql_type] = scratch.sql(f"SELECT NULL::{sql_type} AS r").to_arrow_table().schema.field("r").type
    return _ARROW_TYPES[sql_type]


def register_arrow_udfs(con: duckdb.DuckDBPyConnection, specs) -> None:
    """Register Arrow UDFs ``(name, function, argument types, result type)`` unless the connection's
    catalog has them already (connections to one file in one process share it)."""
    for name, fn, args, result in specs:
        arrow_type(result)
        if con.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = ?", [name]).fetchall()[0][0]:
            continue
        con.create_function(name, fn, args, result, type="arrow", side_effects=True)
