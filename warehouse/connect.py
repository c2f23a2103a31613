"""Open the warehouse: apply every object in ``sql/`` (in file order) and register the UDFs.

``sql/`` is the only place the schema lives. Each file holds one object and is idempotent
(``CREATE TABLE IF NOT EXISTS`` / ``CREATE OR REPLACE VIEW``), so applying all of them on every
open migrates an older file forward and costs a few milliseconds.
"""
from __future__ import annotations

import os
from pathlib import Path

import duckdb

from warehouse.settings import SQL_DIR, db_path


def sql_files() -> list[Path]:
    """The schema files in the order they are applied (numbered names sort correctly)."""
    return sorted(SQL_DIR.glob("*.sql"))


def apply_schema(con: duckdb.DuckDBPyConnection) -> None:
    for path in sql_files():
        try:
            con.execute(path.read_text(encoding="utf-8"))
        except duckdb.Error as exc:  # a broken schema file is a bug: say which one
            raise RuntimeError(f"{path.name}: {exc}") from exc


def connect(db: str | os.PathLike | None = None, *, read_only: bool = False,
            udfs: bool = True) -> duckdb.DuckDBPyConnection:
    """Open (creating if needed) the warehouse at ``db`` (see :func:`settings.db_path`).

    ``read_only`` opens an existing file without applying the schema. ``udfs`` registers the
    Python kernels used by the evaluation macros (only this connection can call them).
    """
    path = db_path(db)
    if read_only:
        if not path.exists():
            raise FileNotFoundError(f"no warehouse at {path}: run `pace ingest` (or `make ingest`) first")
        con = duckdb.connect(str(path), read_only=True)
    else:
        if path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect(str(path))
        apply_schema(con)
    if udfs:
        from warehouse.udfs import register_all
        register_all(con)
    return con
