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

    # DuckDB 2 refuses create_function while the last execute()'s result is unread (a fetchone() leaves
    # it so): a finished statement replaces it.
    con.execute("SELECT 1").fetchall()
    for register in REGISTRARS:
        register(con)


_ARROW_TYPES: dict[str, object] = {}


def arrow_type(sql_type: str):
    """The Arrow type of a DuckDB type, worked out once per process on a scratch connection (a UDF must
    not run queries on the connection that is calling it)."""
    if sql_type not in _ARROW_TYPES:
        _work_out_arrow_types([sql_type])
    return _ARROW_TYPES[sql_type]


def _work_out_arrow_types(sql_types) -> None:
    """Fill the cache for all of ``sql_types`` with one scratch connection and one query (a scratch
    connection costs ~10 ms: once per type it was a tenth of a second of every command)."""
    todo = list(dict.fromkeys(t for t in sql_types if t not in _ARROW_TYPES))
    if not todo:
        return
    with duckdb.connect() as scratch:
        schema = scratch.sql("SELECT " + ", ".join(f"NULL::{t} AS c{i}" for i, t in enumerate(todo))
                             ).to_arrow_table().schema
    _ARROW_TYPES.update({t: schema.field(f"c{i}").type for i, t in enumerate(todo)})


def register_arrow_udfs(con: duckdb.DuckDBPyConnection, specs) -> None:
    """Register Arrow UDFs ``(name, function, argument types, result type)`` unless the connection's
    catalog has them already (connections to one file in one process share it)."""
    _work_out_arrow_types(result for *_, result in specs)
    for name, fn, args, result in specs:
        try:
            con.create_function(name, fn, args, result, type="arrow", side_effects=True)
        except (duckdb.NotImplementedException, duckdb.CatalogException) as exc:
            # DuckDB's words for "a function of that name exists" (this connection registered it: "already
            # created"; another connection to the file: "already exists"). Asking duckdb_functions() first
            # cost ~15 ms per function and connection, a third of opening the warehouse.
            if "already created" not in str(exc) and "already exists" not in str(exc):
                raise
