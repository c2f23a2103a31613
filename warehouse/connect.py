"""Open the warehouse: apply every object in ``sql/`` (in file order).

``sql/`` is the only place the schema lives. Each file holds one object and is idempotent
(``CREATE TABLE IF NOT EXISTS`` / ``CREATE OR REPLACE VIEW`` / ``ADD COLUMN IF NOT EXISTS``), so
applying all of them on every *write* open migrates an older file forward and costs milliseconds.

A *read-only* open cannot apply anything. It checks the fingerprint of ``sql/`` stamped in
``pace_meta`` by the last write open (and that every object exists); an older file is migrated by a
brief write open first when that is possible, else the user is told to run a write command.

Every way opening can fail that a user can fix (no such file, a folder that does not exist, not a
DuckDB file, a damaged file, a lock held by another process) becomes a one-line :class:`UserError`. A lock
held by another process is waited for first (:func:`settings.lock_wait`: ``--wait`` / ``PACE_WAIT``, else a
few seconds, the time a running ``pace run`` holds the file to store a batch of answers).

A *sandboxed* open (``sandbox=True``: the connection that runs ad-hoc SQL, ``pace sql`` / ``pace
shell`` / ``Warehouse.sql``) is held by DuckDB itself: extensions are never installed or loaded,
file and network access is off except, for a write open, the lake folders ``pace`` itself writes
there, and the configuration is locked before the first user statement (see :func:`lock_down`).
"""
from __future__ import annotations

import hashlib
import os
import random
import re
import sys
import time
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import duckdb

from ingest.derived import is_stale, refresh_stale, stale
from ingest.lake import sync_lake, writable_folders
from ingest.score_store import append as append_scores
from warehouse.errors import UserError, WarehouseBusy
from warehouse.settings import DEFAULT_LOCK_WAIT, SQL_DIR, db_path, lock_wait
from warehouse.storing import fill_fit_constants

#: DuckDB's memory ceiling for the warehouse (beyond it, large aggregates and joins spill to disk).
#: DuckDB's own default, 80% of the machine, let one `instance_stats` scan of 27 M rows hold 6.4 GB
#: (1.1 GB under a 1 GB limit, in the same time); ``PACE_MEMORY_LIMIT`` (e.g. ``8GB``) overrides.
MEMORY_LIMIT_ENV = "PACE_MEMORY_LIMIT"
DEFAULT_MEMORY_LIMIT_MIB = 4096
#: DuckDB's limit while an ingest runs, unless ``PACE_MEMORY_LIMIT`` is set: its reader and lake writer hold
#: batches of rows in Python beside DuckDB, so the process's peak is theirs plus DuckDB's. 1,000 synthetic
#: models (92 M rows): peak RSS 8.1 GiB under the 4 GiB default, 7.2 under 3 GiB, 6.3 under 2 GiB, the ingest
#: 61.1 / 58.7 / 58.8 s
INGEST_MEMORY_LIMIT_MIB = 2048

_OBJECT = re.compile(r"^CREATE\s+(?:OR\s+REPLACE\s+)?(TABLE|VIEW|MACRO)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)",
                     re.IGNORECASE | re.MULTILINE)
#: Connect-time settings of a sandboxed connection. Extensions are off from the instance's start (a
#: query never makes DuckDB fetch or load one); and because they differ from a plain open's, DuckDB
#: never shares this instance, whose configuration is locked, with another connection of the process.
SANDBOX_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
#: Settings ad-hoc SQL may still change under the lock: none reaches anything outside the session.
SANDBOX_SETTINGS = ["threads", "memory_limit", "TimeZone", "Calendar", "enable_progress_bar",
                    "preserve_insertion_order", "default_order", "default_null_order", "errors_as_json"]

_LOCK = re.compile(r"Conflicting lock is held in (?P<exe>.*?) \(PID (?P<pid>\d+)\)")


def sql_files() -> list[Path]:
    """The schema files in the order they are applied (numbered names sort correctly).

    None found is a broken installation (an install that left the package data out), never an empty
    warehouse: raise instead of opening a file without a schema."""
    files = sorted(SQL_DIR.glob("*.sql"))
    if not files:
        raise RuntimeError(f"no schema files (*.sql) in {SQL_DIR}: this installation of pace-warehouse is "
                           "incomplete; reinstall it (pip install pace-warehouse, or pip install -e . in a checkout)")
    return files


@lru_cache(maxsize=1)
def schema_fingerprint() -> str:
    """sha256 over the names and texts of the schema files: changes whenever the schema does."""
    h = hashlib.sha256()
    for path in sql_files():
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


@lru_cache(maxsize=1)
def schema_objects() -> tuple[tuple[str, str], ...]:
    """(kind, name) of every table, view and macro the schema files create."""
    found = []
    for path in sql_files():
        found += [(kind.upper(), name) for kind, name in _OBJECT.findall(path.read_text(encoding="utf-8"))]
    return tuple(found)


def apply_schema(con: duckdb.DuckDBPyConnection) -> None:
    # A view that became a table (collapsed_cells) must go first: CREATE TABLE IF NOT EXISTS would
    # quietly keep the view of the same name.
    views = {v for (v,) in con.execute("SELECT view_name FROM duckdb_views() "
                                      "WHERE database_name = current_database() AND NOT internal").fetchall()}
    for kind, name in schema_objects():
        if kind == "TABLE" and name in views:
            con.execute(f"DROP VIEW {name}")
    # One transaction: a kill in between leaves the schema as it was (`scores`, a table of nine columns
    # before score_rows / score_sources, with it), and a new warehouse's ~100 statements commit once
    # (0.68 -> 0.22 s: each autocommitted statement wrote the log on its own)
    old_scores = _has_table(con, "scores")
    con.execute("BEGIN TRANSACTION")
    if old_scores:
        con.execute("ALTER TABLE scores RENAME TO scores_before_sources")
    try:
        for path in sql_files():
            try:
                con.execute(path.read_text(encoding="utf-8"))
            except duckdb.Error as exc:  # a broken schema file is a bug: say which one
                raise RuntimeError(f"{path.name}: {exc}") from exc
        if old_scores:
            append_scores(con, "SELECT * FROM scores_before_sources")
            con.execute("DROP TABLE scores_before_sources")
        fill_fit_constants(con)        # fits stored before a per-fit constant existed
        con.execute("INSERT OR REPLACE INTO pace_meta VALUES ('schema', ?)", [schema_fingerprint()])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def schema_problem(con: duckdb.DuckDBPyConnection) -> str | None:
    """Why this connection's schema is not the current one (None when it is). A write open applies
    the schema only then, so opening a current warehouse read-write does not change the file."""
    present = {(k, n) for k, n in con.execute("""
        SELECT 'TABLE', table_name FROM duckdb_tables() WHERE database_name = current_database()
        UNION ALL SELECT 'VIEW', view_name FROM duckdb_views() WHERE database_name = current_database()
        UNION ALL SELECT 'MACRO', function_name FROM duckdb_functions()
                  WHERE database_name = current_database() AND function_type IN ('macro', 'table_macro')
        """).fetchall()}
    missing = [name for kind, name in schema_objects() if (kind, name) not in present]
    if missing:
        return f"missing {', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}"
    stamp, identity = con.execute("SELECT any_value(value) FILTER (key = 'schema'), "
                                  "any_value(value) FILTER (key = 'warehouse') FROM pace_meta").fetchone()
    if stamp != schema_fingerprint():
        return "made by another version of pace"
    if not identity:
        return "no warehouse id (pace_meta)"
    return None


def _has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
                            "AND table_name = ?", [name]).fetchall()[0][0])


def _has_meta(con: duckdb.DuckDBPyConnection) -> bool:
    return _has_table(con, "pace_meta")


def _refuse_foreign(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """A DuckDB file that never was a warehouse is not turned into one by a read or repair command."""
    if not _has_table(con, "scores") and not _has_table(con, "score_rows") and not _has_meta(con):
        con.close()
        raise UserError(f"{path} is a DuckDB file but not a pace warehouse (no scores table)")


def memory_limit(default_mib: int = DEFAULT_MEMORY_LIMIT_MIB) -> str:
    """The DuckDB memory limit for warehouse connections: ``$PACE_MEMORY_LIMIT``, else ``default_mib`` (at
    most 80% of the machine's memory)."""
    chosen = os.environ.get(MEMORY_LIMIT_ENV, "").strip()
    if chosen:
        return chosen
    try:
        machine = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    except (ValueError, OSError, AttributeError):
        machine = 0
    return f"{min(default_mib, int(0.8 * machine)) if machine else default_mib}MiB"


@contextmanager
def ingest_memory(con: duckdb.DuckDBPyConnection):
    """DuckDB's limit lowered to :data:`INGEST_MEMORY_LIMIT_MIB` while the block runs (an ingest), then the
    connection's usual one again."""
    con.execute(_checked_limit(memory_limit(INGEST_MEMORY_LIMIT_MIB)))
    try:
        yield con
    finally:
        con.execute(_checked_limit(memory_limit()))


@lru_cache(maxsize=4)
def _checked_limit(limit: str) -> str:
    """``limit`` as a SET statement, checked on a throwaway in-memory database (so a bad value is
    refused before any warehouse file is opened or created)."""
    statement = f"SET memory_limit = '{limit.replace(chr(39), '')}'"
    try:
        if limit.strip().startswith("-"):      # DuckDB reads a negative size as no limit at all
            raise duckdb.InvalidInputException("a memory limit must not be negative")
        duckdb.connect().execute(statement)
    except duckdb.Error as exc:
        raise UserError(f"{MEMORY_LIMIT_ENV}={limit!r} is not a memory size DuckDB reads (e.g. 4GB, 512MB): "
                        f"{str(exc).splitlines()[0]}") from None
    return statement


def _open(path: Path, read_only: bool, sandbox: bool = False,
          wait: float | None = None) -> duckdb.DuckDBPyConnection:
    statement = _checked_limit(memory_limit())
    con = _open_waiting(path, read_only, lock_wait() if wait is None else wait, sandbox)
    con.execute(statement)
    return con


def _open_waiting(path: Path, read_only: bool, wait: float,
                  sandbox: bool = False) -> duckdb.DuckDBPyConnection:
    """:func:`_open_file`, retried with backoff while another process holds the lock, for at most
    ``wait`` seconds; when asked to wait longer than the default, one line on stderr says it waits (the
    final error says how long it waited)."""
    start = time.monotonic()
    delay, said = 0.02, False
    while True:
        try:
            return _open_file(path, read_only, sandbox)
        except WarehouseBusy as exc:
            waited = time.monotonic() - start
            if waited >= wait:
                if waited < 0.5:
                    raise
                raise WarehouseBusy(f"{exc} (waited {waited:.0f} s; --wait SECONDS or PACE_WAIT waits longer)",
                                    exc.pid) from exc.__cause__
            if not said and waited >= 1.0 and wait > DEFAULT_LOCK_WAIT:
                print(f"{path} is in use by another process (PID {exc.pid}); waiting up to {wait:g} s for it ...",
                      file=sys.stderr, flush=True)
                said = True
            time.sleep(min(delay * random.uniform(0.5, 1.0), max(0.0, wait - waited)))
            delay = min(delay * 2, 0.5)


#: names of data files: a new warehouse is never given one (DuckDB opens an existing .csv as data, in memory)
DATA_SUFFIXES = (".csv", ".tsv", ".txt", ".parquet", ".json", ".jsonl", ".ndjson", ".xlsx", ".arrow", ".feather")


def _open_file(path: Path, read_only: bool, sandbox: bool = False) -> duckdb.DuckDBPyConnection:
    return _backed_by_file(_connect_file(path, read_only, sandbox), path)


def _backed_by_file(con: duckdb.DuckDBPyConnection, path: Path) -> duckdb.DuckDBPyConnection:
    """``con`` if its database is the file at ``path``. DuckDB opens a path it reads as data (an existing
    ``.csv``) as an in-memory database holding that file as a table: every write would be lost on close."""
    where = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    if where and where[0][0]:
        return con
    con.close()
    raise _not_a_database(path)


def _not_a_database(path: Path) -> UserError:
    return UserError(f"{path} is not a DuckDB database file (DuckDB reads it as data and would keep nothing "
                     "written to it): name the warehouse with --db / PACE_DB, e.g. pace.duckdb")


def _connect_file(path: Path, read_only: bool, sandbox: bool = False) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(path), read_only=read_only, config=SANDBOX_CONFIG if sandbox else {})
    except duckdb.ConnectionException as exc:
        if "different configuration" in str(exc) and sandbox:
            raise UserError(f"{path} is open in this process by another connection (e.g. Warehouse.connect()): "
                            "close it first; ad-hoc SQL runs on a DuckDB instance of its own, with file access "
                            "off and its settings locked") from exc
        # This process already holds the file read-write (a library user, a test): DuckDB allows one
        # configuration per file and process, so share that one (pace's readers only read).
        if read_only and "different configuration" in str(exc):
            return duckdb.connect(str(path))
        raise _open_error(path, exc) from exc
    except duckdb.Error as exc:
        if "in-memory database" in str(exc):        # read-only: DuckDB's refusal of the same (see _backed_by_file)
            raise _not_a_database(path) from exc
        raise _open_error(path, exc) from exc


def _open_error(path: Path, exc: BaseException) -> UserError:
    lock = _LOCK.search(str(exc))
    message = describe_open_error(path, exc)
    return WarehouseBusy(message, int(lock["pid"])) if lock else UserError(message)


def lock_down(con: duckdb.DuckDBPyConnection, writable: list[Path]) -> None:
    """Before ad-hoc SQL runs on ``con``: DuckDB reaches no file, URL or extension, except the
    ``writable`` folders (and the database's own files), and its configuration is locked, so no
    SET / PRAGMA can undo that or point a log or profile file anywhere (:data:`SANDBOX_SETTINGS`
    stay changeable). Settings are per instance: call it only on a sandboxed connection."""
    if con.execute("SELECT current_setting('lock_configuration')").fetchone()[0]:
        return          # another sandboxed connection of this process to the same file locked it already
    quoted = ", ".join(_quoted(str(folder).rstrip(os.sep) + os.sep) for folder in writable)
    con.execute(f"SET allowed_directories = [{quoted}]")
    con.execute(f"SET allowed_configs = [{', '.join(_quoted(name) for name in SANDBOX_SETTINGS)}]")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


#: DuckDB's words for a file it cannot read as a database: damaged, truncated, or not one at all
_DAMAGED = ("Corrupt database file", "Could not read enough bytes", "does not match stored checksum", "replaying WAL")


def is_damage(message: str) -> bool:
    """Whether a DuckDB error says the database file is damaged."""
    return any(word in message for word in _DAMAGED)


def describe_open_error(path: Path, exc: BaseException) -> str:
    """A one-line explanation of why DuckDB could not open ``path``."""
    text = str(exc)
    lock = _LOCK.search(text)
    if lock:
        exe = Path(lock["exe"]).name
        return (f"{path} is in use by another process (PID {lock['pid']}, {exe}): wait for it or close it "
                "(e.g. an open `pace shell`, a running ingest, loocv or run) and retry")
    if "not a valid DuckDB database file" in text:
        return f"{path} is not a DuckDB database file" + _rebuild_hint(path)
    if is_damage(text):
        return f"{path} is damaged ({text.splitlines()[0]}){_rebuild_hint(path)}"
    if "Read-only file system" in text:
        return f"{path}: cannot open it for writing (read-only file system); read-only commands still work"
    if "Permission denied" in text:
        return f"{path}: cannot open it for writing (permission denied); read-only commands still work"
    if "different configuration" in text:
        return f"{path} is already open in this process in another mode (read-only vs read-write)"
    return f"{path}: {text.splitlines()[0]}"


def _rebuild_hint(path: Path) -> str:
    """How to get a damaged warehouse back: from its lake, when there is one (see warehouse.doctor)."""
    from ingest.lake import has_partitions
    from warehouse.settings import lake_path

    lake = lake_path(path)
    if has_partitions(lake):
        return f": `pace doctor --from-lake --db {path}` rebuilds it from its lake {lake}"
    return (f"; `pace doctor --from-lake --db {path} --lake DIR` rebuilds it from its lake (none found at "
            f"{lake})")


def _require_file(path: Path) -> None:
    if path.is_dir():
        raise UserError(f"{path} is a folder, not a warehouse file (pass --db FOLDER/pace.duckdb)")
    if not path.exists():
        hint = "" if path.parent.is_dir() else f" (folder {path.parent} does not exist either: a typo?)"
        raise UserError(f"no warehouse at {path}{hint}: run `pace ingest PATH` first, or check --db / PACE_DB")


def connect(db: str | os.PathLike | None = None, *, read_only: bool = False,
            create: bool = True, refresh_collapsed: bool = True, sandbox: bool = False,
            wait: float | None = None) -> duckdb.DuckDBPyConnection:
    """Open the warehouse at ``db`` (see :func:`settings.db_path`).

    ``read_only`` opens an existing file without writing to it (other readers may open it at the
    same time). Otherwise it is opened read-write and the schema applied; ``create=False`` refuses a
    missing file instead of creating it, and a missing parent folder is always refused (a typo in
    ``--db`` must not make an empty warehouse somewhere). Every object is plain SQL, so any DuckDB
    client reads the file the same way.

    Stored collapsed cells that a writer stopped before recomputing (marked, see
    :mod:`ingest.collapsed`) are recomputed first, read-only opens included (by a brief write open, as
    a migration is); ``refresh_collapsed=False`` leaves them as they are (`pace doctor` reports them).

    ``sandbox`` opens the connection for ad-hoc SQL: see :func:`lock_down` (a write open may still
    write its lake's partitions, so that the lake follows what the SQL changed).

    ``wait``: seconds to wait for a lock another process holds (default :func:`settings.lock_wait`).
    """
    path = db_path(db)
    try:
        return _connect(path, read_only, create, refresh_collapsed, sandbox, wait)
    except duckdb.Error as exc:
        if is_damage(str(exc)):                 # the catalog or a block is unreadable
            raise UserError(describe_open_error(path, exc)) from exc
        raise


def _connect(path: Path, read_only: bool, create: bool, refresh_collapsed: bool,
             sandbox: bool, wait: float | None) -> duckdb.DuckDBPyConnection:
    if read_only:
        _require_file(path)
        con = _open(path, read_only=True, sandbox=sandbox, wait=wait)
        problem = schema_problem(con)
        if not problem and refresh_collapsed and is_stale(con):
            problem = (f"stored {' and '.join(stale(con))} out of date (a writer stopped before recomputing "
                       "them)")
        if problem:
            _refuse_foreign(con, path)
            con.close()
            migrate(path, problem, refresh_collapsed=refresh_collapsed)
            con = _open(path, read_only=True, sandbox=sandbox, wait=wait)
    else:
        if not path.exists() or path.is_dir():
            if not create or path.is_dir():
                _require_file(path)
            if not path.parent.is_dir():
                raise UserError(f"folder {path.parent} does not exist: create it first, or check --db / PACE_DB")
            if path.suffix.lower() in DATA_SUFFIXES:
                raise UserError(f"{path} is named like a {path.suffix} data file, not a warehouse (DuckDB opens such "
                                "a file as data, in memory, keeping nothing; other tools would too): name the "
                                f"warehouse e.g. {path.with_suffix('.duckdb')}")
        existed = path.exists()
        con = _open(path, read_only=False, sandbox=sandbox, wait=wait)
        try:
            if schema_problem(con) if _has_meta(con) else True:
                if existed and not create:
                    _refuse_foreign(con, path)
                apply_schema(con)
                if existed:
                    _stamp_lake(con)
            _repair_lake_if_pending(con)
            if refresh_collapsed:
                _refresh_collapsed_if_stale(con)
        except BaseException:
            con.close()
            if not existed:         # a file this call created and could not finish (e.g. out of memory)
                remove_database_files(path)
            raise
    if sandbox:
        try:
            lock_down(con, [] if read_only else writable_folders(con))
        except BaseException:
            con.close()
            raise
    return con


def remove_database_files(path: Path) -> None:
    """Remove the database file at ``path`` and its write-ahead log (only ever one this process created)."""
    for leftover in (path, path.with_name(path.name + ".wal")):
        leftover.unlink(missing_ok=True)


def migrate(path: Path, problem: str, *, refresh_collapsed: bool = True) -> None:
    """Bring an older warehouse file to the current schema, and its stored collapsed cells up to date,
    with a brief write open."""
    try:
        con = _open(path, read_only=False)
    except UserError as exc:
        what = (f"{problem}; recomputing them needs a brief write open" if problem.startswith("stored")
                else f"schema {problem}; it needs a migration, which opening read-write would do")
        raise UserError(f"{path}: {what}, but: {exc}. Run any write command (e.g. `pace doctor`) when it is "
                        "free") from exc
    try:
        if schema_problem(con):
            apply_schema(con)
            _stamp_lake(con)
        if refresh_collapsed:
            _refresh_collapsed_if_stale(con)
    finally:
        con.close()


def _stamp_lake(con: duckdb.DuckDBPyConnection) -> None:
    """After a migration: a lake from before owner stamps gets this warehouse's when it provably is its."""
    from ingest.lake import stamp_if_provably_ours

    stamp_if_provably_ours(con)


def _repair_lake_if_pending(con: duckdb.DuckDBPyConnection) -> None:
    """A write that committed but was killed before its lake partitions were swapped in left a
    marker (``lake_pending``); finish that work now, so the lake never stays stale."""
    if con.execute("SELECT count(*) FROM lake_pending").fetchall()[0][0]:
        sync_lake(con)


def _refresh_collapsed_if_stale(con: duckdb.DuckDBPyConnection) -> None:
    """Recompute the stored collapsed cells that a mark says may be out of date: a new table or rule
    (after a migration), or a writer killed before it recomputed them (see :mod:`ingest.collapsed`)."""
    if is_stale(con):
        refresh_stale(con)
