"""Where things live: the database file, the Parquet lake and the default results tree.

Precedence everywhere: an explicit argument (a CLI flag) > an environment variable > a default
relative to the current directory.
"""
from __future__ import annotations

import math
import os
from contextvars import ContextVar
from pathlib import Path

from models.common.folds import KFOLD_ABOVE
from warehouse.errors import UserError
from warehouse.outputs import require_folder

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
    if not chosen:
        return None
    path = user_path(chosen)
    try:
        require_folder(path)
    except UserError as exc:
        raise UserError(f"--lake / PACE_LAKE: {exc}; name a folder for the lake (new, or this warehouse's)") from None
    return path


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
        raise UserError(f"{JOBS_ENV}={value!r} is not a positive integer (worker threads, e.g. {JOBS_ENV}=2)")
    return n


KFOLD_ABOVE_ENV = "PACE_KFOLD_ABOVE"


def kfold_above() -> int:
    """Above this many training models tuning and interval residuals use K-fold, not leave-one-out:
    ``$PACE_KFOLD_ABOVE``, else ``models.common.folds.KFOLD_ABOVE``."""
    value = os.environ.get(KFOLD_ABOVE_ENV)
    if not value:
        return KFOLD_ABOVE
    try:
        parsed = int(value)
    except ValueError:
        parsed = -1
    if parsed < 2:
        raise ValueError(f"{KFOLD_ABOVE_ENV} must be an integer >= 2, not {value!r}")
    return parsed


def results_path(explicit: str | os.PathLike | None = None) -> Path | None:
    """The results tree: ``explicit`` > ``$PACE_RESULTS_DIR`` > ``results/standardized_results`` when
    it exists. ``None`` when nothing is found (the caller explains how to get data)."""
    chosen = explicit or os.environ.get("PACE_RESULTS_DIR")
    if chosen:
        return user_path(chosen)
    return DEFAULT_RESULTS if DEFAULT_RESULTS.is_dir() else None

WAIT_ENV = "PACE_WAIT"
#: seconds every open waits for a lock another process holds, when neither ``--wait`` nor
#: ``$PACE_WAIT`` says: a running ``pace run`` holds the file for a moment per batch of answers
DEFAULT_LOCK_WAIT = 5.0
#: seconds a bare ``--wait`` (no number) waits
WAIT_FLAG_DEFAULT = 600.0
#: the ``--wait`` of the command line being run (set by ``warehouse.cli.main``; wins over the variable)
wait_flag: ContextVar[float | None] = ContextVar("pace_wait_flag", default=None)


def seconds(value: str, what: str) -> float:
    """A number of seconds >= 0 as typed (``what`` names the flag or variable in the error)."""
    try:
        n = float(value.strip())
    except ValueError:
        n = -1.0
    if not math.isfinite(n) or n < 0:
        from warehouse.errors import UserError

        raise UserError(f"{what}={value!r} is not a number of seconds >= 0 (e.g. {what}=30)")
    return n


def lock_wait() -> float:
    """How long opening the warehouse waits for another process's lock: ``--wait`` >
    ``$PACE_WAIT`` > :data:`DEFAULT_LOCK_WAIT` seconds."""
    flag = wait_flag.get()
    if flag is not None:
        return flag
    value = os.environ.get(WAIT_ENV, "").strip()
    return seconds(value, WAIT_ENV) if value else DEFAULT_LOCK_WAIT
