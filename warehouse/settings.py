"""Where things live: the database file, the Parquet lake and the default results tree.

Precedence everywhere: an explicit argument (a CLI flag) > an environment variable > a default
relative to the current directory.
"""
from __future__ import annotations

import os
from pathlib import Path

DEFAULT_DB = "pace.duckdb"
DEFAULT_RESULTS = Path("results") / "standardized_results"

#: The schema files. In a checkout ``warehouse/sql`` is a link to the top-level ``sql/`` folder; an
#: installed wheel holds the files themselves (package data, see pyproject.toml).
SQL_DIR = Path(__file__).resolve().parent / "sql"


def user_path(value: str | os.PathLike) -> Path:
    """A path as a user typed it: ``~`` expands to the home folder (also when it came from an
    environment variable, which no shell expands inside quotes)."""
    return Path(os.path.expanduser(os.fspath(value)))


def db_path(explicit: str | os.PathLike | None = None) -> Path:
    """The warehouse file: ``explicit`` > ``$PACE_DB`` > ``./pace.duckdb``."""
    return user_path(explicit or os.environ.get("PACE_DB") or DEFAULT_DB)


def lake_path(db: str | os.PathLike, explicit: str | os.PathLike | None = None) -> Path:
    """The Parquet lake: ``explicit`` > ``$PACE_LAKE`` > a folder beside the database named after it:
    ``lake/`` for ``pace.duckdb``, ``NAME.lake/`` for ``NAME.duckdb`` (so two warehouses in one folder
    never share a lake).

    (Commands that open the warehouse prefer the lake recorded in it: see ``ingest.lake.lake_of``.)"""
    chosen = explicit or os.environ.get("PACE_LAKE")
    if chosen:
        return user_path(chosen)
    db = user_path(db).resolve()
    if db.name == DEFAULT_DB:
        return db.parent / "lake"
    return db.with_suffix(".lake") if db.suffix == ".duckdb" else db.with_name(db.name + ".lake")


def explicit_lake(explicit: str | os.PathLike | None = None) -> Path | None:
    """The lake the user asked for (``--lake`` > ``$PACE_LAKE``), or None."""
    chosen = explicit or os.environ.get("PACE_LAKE")
    return user_path(chosen) if chosen else None


JOBS_ENV = "PACE_JOBS"


def jobs() -> int:
    """Worker threads for the kernels' fold loops: ``$PACE_JOBS``, else the cores this process may
    use. A value that is not a positive integer is a :class:`~warehouse.errors.UserError` naming it."""
    value = os.environ.get(JOBS_ENV, "").strip()
    if not value:
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:          # not on Linux
            return max(1, os.cpu_count() or 1)
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        from warehouse.errors import UserError

        raise UserError(f"{JOBS_ENV}={value!r} is not a positive integer (worker threads, e.g. {JOBS_ENV}=2)")
    return n


def results_path(explicit: str | os.PathLike | None = None) -> Path | None:
    """The default results tree: ``explicit`` > ``results/standardized_results`` if it exists >
    ``$PACE_RESULTS_DIR``. ``None`` when nothing is found (the caller explains how to get data)."""
    if explicit:
        return user_path(explicit)
    if DEFAULT_RESULTS.is_dir():
        return DEFAULT_RESULTS
    env = os.environ.get("PACE_RESULTS_DIR")
    return user_path(env) if env else None
