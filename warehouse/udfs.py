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
