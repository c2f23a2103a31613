"""The Parquet lake: hive partitions ``<lake>/scores/benchmark=<name>/*.parquet``, always derived
from the ``scores`` table, so every write path (ingest, prune, alias, runner, ``pace sql --write``)
can bring it back in step with one call: :func:`sync_lake`. It is the warehouse's durable copy of
its scores: ``pace doctor --from-lake`` rebuilds a lost or damaged database file from it.

One lake belongs to one warehouse. The warehouse has an id (``pace_meta.warehouse``) and the lake
a stamp file naming it (``<lake>/.pace-lake.json``); every writer calls :func:`claim_lake` first,
which refuses a lake stamped by another warehouse, and stamps a lake without a stamp only when it
is new or provably this warehouse's (every partition equal to ``scores`` or marked pending by it).

Crash safety: a writer records the benchmarks it touches in ``lake_pending`` inside its own
transaction; :func:`sync_lake` rewrites those partitions into a staging folder inside the lake
(``<lake>/.staging/<id>``), swaps them in and clears the marker. A kill between the commit and the
swap leaves the marker, and the next write open (``warehouse.connect``) finishes the work.
:func:`lake_drift` compares row counts and a content fingerprint per benchmark, for ``pace doctor``
and ``pace status``; a partition with a file DuckDB cannot read is reported as damaged, not raised.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import uuid
from pathlib import Path

import duckdb

from warehouse.errors import UserError

LAKE_TABLE = "scores"
#: Parquet compression of every lake file: zstd costs what snappy costs to write here and makes the
#: files about 5x smaller (dictionary indices compress far better)
COMPRESSION = "zstd"
COPIED = "copied"        # staging sub-folder of partitions copied from DuckDB (ingest writes the others)
STAMP = ".pace-lake.json"    # the lake's owner: {"warehouse": id, "database": path}
STAGING = ".staging"         # writers' staging folders, inside the lake (so they are provably its own)
ID_KEY = "warehouse"         # pace_meta key of the warehouse's id (set by sql/000_pace_meta.sql)
# A content fingerprint that does not depend on row order: the sum of per-row hashes (additive, so
# ingest.summaries keeps it per file and a benchmark's is the sum of its files').
ROW_HASH = "hash(model, subdir, instance_id, score, metric_name, origin, source_ref, recorded_at)"
_FINGERPRINT = f"count(*) AS n, sum({ROW_HASH}::HUGEINT) AS fp"


def _sql_path(path: Path) -> str:
    return str(path).replace("'", "''")


def db_file(con: duckdb.DuckDBPyConnection) -> Path | None:
    """The file behind this connection's database (None in memory)."""
    row = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    return Path(row[0]) if row and row[0] else None


def lake_of(con: duckdb.DuckDBPyConnection, explicit: str | os.PathLike | None = None) -> Path:
    """The lake of this warehouse: ``explicit`` > ``$PACE_LAKE`` > the one recorded in ``pace_meta``
    by the last lake write > the default beside the database file (``settings.lake_path``)."""
    from warehouse.settings import explicit_lake, lake_path

    chosen = explicit_lake(explicit)
    if chosen is not None:
        return chosen
    path = db_file(con)
    base = path.resolve().parent if path else Path.cwd()
    row = con.execute("SELECT any_value(value) FROM pace_meta WHERE key = 'lake'").fetchone()
    if row and row[0]:
        return base / row[0]                    # relative to the database's folder, or absolute
    return lake_path(path) if path else base / "lake"


def _recorded_lake(con: duckdb.DuckDBPyConnection) -> str | None:
    from warehouse.settings import explicit_lake

    if explicit_lake() is not None:
        return str(explicit_lake())
    return con.execute("SELECT any_value(value) FROM pace_meta WHERE key = 'lake'").fetchone()[0]


def writable_folders(con: duckdb.DuckDBPyConnection) -> list[Path]:
    """The folders of this warehouse's lake that pace writes into (partitions and staging, not the
    stamp), for ad-hoc SQL with ``--write``. A lake that is not its own is refused here, with one line,
    before any statement runs: a statement that changed ``scores`` could not be followed in the lake."""
    lake = lake_of(con)
    claim_lake(con, lake, stamp=False)
    return [lake / LAKE_TABLE, lake / STAGING]


# ------------------------------------------------------------------------------------ ownership
def warehouse_id(con: duckdb.DuckDBPyConnection) -> str | None:
    return con.execute("SELECT any_value(value) FROM pace_meta WHERE key = ?", [ID_KEY]).fetchone()[0]


def read_stamp(lake: Path) -> dict | None:
    """The lake's stamp (None: no stamp); an unreadable stamp names no warehouse."""
    path = Path(lake) / STAMP
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    return data if isinstance(data, dict) else {"warehouse": None, "database": f"unreadable {STAMP}"}


def write_stamp(con: duckdb.DuckDBPyConnection, lake: Path) -> None:
    """Stamp ``lake`` as this warehouse's (written whole, then moved into place)."""
    lake = Path(lake)
    lake.mkdir(parents=True, exist_ok=True)
    path = db_file(con)
    tmp = lake / f"{STAMP}.{uuid.uuid4().hex[:8]}.tmp"
    tmp.write_text(json.dumps({"warehouse": warehouse_id(con), "database": str(path.resolve()) if path else None},
                              indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, lake / STAMP)


def owner_problem(con: duckdb.DuckDBPyConnection, lake: Path, *, content: bool = True) -> str | None:
    """Why this warehouse must not write or clean ``lake`` (None: it is its own, or new). An unstamped
    lake with partitions is compared with ``scores`` (``content=False``: row counts only)."""
    lake = Path(lake)
    stamp = read_stamp(lake)
    ours = warehouse_id(con)
    if stamp is not None:
        if ours and stamp.get("warehouse") == ours:
            original = _original_beside(con, lake, stamp)
            if original is None:
                return None
            copy = db_file(con)
            return (f"{lake} is the lake of {original}, and {copy} is a copy of that warehouse (the same id), so "
                    f"writing there would put the copy's rows into the original's lake (e.g. "
                    f"PACE_LAKE={shlex.quote(str(copy.with_name(copy.stem + '.lake')))})")
        return f"{lake} belongs to another warehouse ({stamp.get('database') or 'unnamed'})"
    if not has_partitions(lake):
        return None
    # Evidence: the partitions that can be read. Each must equal scores (or be marked pending by this
    # warehouse); a damaged one proves nothing either way (`pace doctor` rewrites it from scores), but
    # a lake with nothing readable proves nothing at all.
    marked = set(pending(con))
    drift = lake_drift(con, lake, content=content)
    broken = damaged(drift)
    foreign = sorted(b for b, (_, stored) in drift.items()
                     if b not in marked and b not in broken and stored != (0, None))
    if not foreign and len(broken) < len(lake_benchmarks(lake)):
        return None
    foreign = foreign or sorted(broken)
    more = f" and {len(foreign) - 4} more" if len(foreign) > 4 else ""
    return (f"{lake} has no owner stamp and its partitions of {', '.join(foreign[:4])}{more} differ from this "
            "warehouse's scores (or cannot be read), so it may be another warehouse's")


def _original_beside(con: duckdb.DuckDBPyConnection, lake: Path, stamp: dict) -> Path | None:
    """The database file a lake stamped with this warehouse's id belongs to, when that is another
    file beside the lake (None: it is this one, or it is gone). A byte copy of the database file
    (`cp pace.duckdb copy.duckdb`) carries the id and the recorded lake; only the file named in the
    stamp tells the two apart. The stamp's folder is not compared: a copy of the whole folder (its
    stamp still names the original's folder) keeps writing its own copy of the lake, and a renamed
    file whose old name is gone takes its lake with it."""
    ours = db_file(con)
    named = stamp.get("database")
    if ours is None or not named:
        return None
    original = Path(lake).resolve().parent / Path(named).name
    try:
        return None if not original.is_file() or original.samefile(ours) else original
    except OSError:
        return None


#: what to do about a lake this warehouse does not own (the end of its one-line refusal)
NOT_OURS = ("it is never written or cleaned from here: set PACE_LAKE=DIR (every command; ingest, import and doctor "
            "also take --lake DIR) for a lake of this warehouse's own, or move that folder away (`pace doctor` then "
            "writes a new lake from scores)")


def stamp_if_provably_ours(con: duckdb.DuckDBPyConnection) -> None:
    """On a write open after a migration: stamp a lake from before stamps that provably is this
    warehouse's (so that readers need not compare it with scores again). A lake pace cannot write
    to, or may not claim, is left for the next writer to explain."""
    lake = lake_of(con)
    if lake.is_dir() and read_stamp(lake) is None and owner_problem(con, lake) is None:
        try:
            write_stamp(con, lake)
        except OSError:
            pass


def claim_lake(con: duckdb.DuckDBPyConnection, lake: Path, *, stamp: bool = True) -> None:
    """Before writing into ``lake``: refuse (one line) a lake this warehouse does not own, and stamp
    a lake without a stamp that is new or provably its own (``stamp=False``: not yet, the caller
    stamps it with :func:`stamp_lake` once it writes there)."""
    problem = owner_problem(con, lake)
    if problem:
        raise UserError(f"{problem}: {NOT_OURS}")
    if stamp:
        stamp_lake(con, lake)


def claim_before_writing(con: duckdb.DuckDBPyConnection) -> None:
    """For a writer that commits score rows first and brings the lake in step after (``pace alias add``,
    ``pace run``): refuse a lake this warehouse does not own before anything is committed (or called),
    choosing the lake as :func:`sync_lake` will."""
    if db_file(con) is None and not _recorded_lake(con):
        return                                     # an in-memory warehouse has no lake unless given one
    claim_lake(con, lake_of(con), stamp=False)


def stamp_lake(con: duckdb.DuckDBPyConnection, lake: Path) -> None:
    """Stamp a lake that :func:`claim_lake` let this warehouse write, unless it is stamped already."""
    if read_stamp(lake) is None:
        write_stamp(con, lake)


def remember_lake(con: duckdb.DuckDBPyConnection, lake: Path) -> None:
    """Record the lake, relative to the database's folder when it lies inside it (so a copied
    warehouse folder keeps using its own copy of the lake, never the original's)."""
    lake = Path(lake).resolve()
    path = db_file(con)
    base = path.resolve().parent if path else None
    value = str(lake.relative_to(base)) if base is not None and lake.is_relative_to(base) else str(lake)
    con.execute("INSERT OR REPLACE INTO pace_meta VALUES ('lake', ?)", [value])


def mark_pending(con: duckdb.DuckDBPyConnection, benchmarks) -> None:
    """Record that these benchmarks' partitions must be rewritten (call inside the writer's transaction)."""
    names = sorted(set(benchmarks))
    if names:
        con.execute("""INSERT OR REPLACE INTO lake_pending
                       SELECT unnest(?::VARCHAR[]), current_localtimestamp()""", [names])


def pending(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [b for (b,) in con.execute("SELECT benchmark FROM lake_pending ORDER BY 1").fetchall()]


def staging_folder(lake: Path) -> Path:
    return Path(lake) / STAGING / uuid.uuid4().hex[:8]


def write_lake(con: duckdb.DuckDBPyConnection, staging: Path, benchmarks: list[str]) -> None:
    """Copy the given benchmarks' rows from ``scores`` into hive partitions under ``staging``."""
    if not benchmarks:
        return
    con.execute("CREATE OR REPLACE TEMP TABLE lake_benchmarks AS SELECT unnest(?::VARCHAR[]) AS benchmark",
                [sorted(benchmarks)])
    present = con.execute("SELECT count(*) FROM scores WHERE benchmark IN (SELECT benchmark FROM lake_benchmarks)"
                          ).fetchall()[0][0]
    if present:
        (staging / COPIED).mkdir(parents=True, exist_ok=True)
        target = _sql_path(staging / COPIED / LAKE_TABLE)
        con.execute(f"""
            COPY (SELECT * FROM scores WHERE benchmark IN (SELECT benchmark FROM lake_benchmarks))
            TO '{target}' (FORMAT parquet, COMPRESSION {COMPRESSION}, PARTITION_BY (benchmark), OVERWRITE_OR_IGNORE)""")


def swap_lake(lake: Path, staging: Path | None, benchmarks: list[str], appended=()) -> None:
    """Move staged partitions into ``lake/scores``; drop partitions of benchmarks now empty.

    ``appended``: benchmarks (among ``benchmarks``) whose staged files hold only rows added to a
    partition that was in step: they are moved in beside its files (under new names) instead of
    replacing it, so adding a model to a large warehouse does not rewrite its whole lake."""
    if staging is None:
        return
    table_dir = lake / LAKE_TABLE
    table_dir.mkdir(parents=True, exist_ok=True)
    for benchmark in set(appended) & set(benchmarks):
        final = table_dir / f"benchmark={benchmark}"
        for new in sorted((staging / LAKE_TABLE / f"benchmark={benchmark}").glob("*.parquet")):
            os.replace(new, final / f"data_{uuid.uuid4().hex[:12]}.parquet")
    for benchmark in sorted(set(benchmarks) - set(appended)):
        final = table_dir / f"benchmark={benchmark}"
        new = staging / LAKE_TABLE / f"benchmark={benchmark}"
        if not new.exists():
            new = staging / COPIED / LAKE_TABLE / f"benchmark={benchmark}"
        trash = table_dir / f".trash-{benchmark}-{uuid.uuid4().hex[:8]}"
        if final.exists():
            os.replace(final, trash)
        if new.exists():
            os.replace(new, final)
        shutil.rmtree(trash, ignore_errors=True)
    shutil.rmtree(staging, ignore_errors=True)


def lake_benchmarks(lake: Path) -> set[str]:
    table_dir = Path(lake) / LAKE_TABLE
    if not table_dir.is_dir():
        return set()
    return {p.name.split("=", 1)[1] for p in table_dir.iterdir() if p.name.startswith("benchmark=")}


def has_partitions(lake: Path) -> bool:
    return bool(lake_benchmarks(lake))


def sync_lake(con: duckdb.DuckDBPyConnection, benchmarks=None, lake: str | os.PathLike | None = None) -> list[str]:
    """Rewrite the lake partitions of ``benchmarks`` (default: those marked pending) from ``scores``.

    Call it after committing rows (the runner does after a run). Returns the benchmarks rewritten.
    """
    names = sorted(set(pending(con) if benchmarks is None else benchmarks))
    if not names:
        return []
    if lake is None and db_file(con) is None and not _recorded_lake(con):
        return []                                  # an in-memory warehouse has no lake unless given one
    lake = Path(lake) if lake is not None else lake_of(con)
    claim_lake(con, lake)
    staging = staging_folder(lake)
    try:
        write_lake(con, staging, names)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    swap_lake(lake, staging, names)
    con.execute("DELETE FROM lake_pending WHERE benchmark IN (SELECT unnest(?::VARCHAR[]))", [names])
    record_partitions(con, lake, names)
    remember_lake(con, lake)
    return names


def _partition_files(lake: Path, benchmark: str) -> str:
    """The files of a partition as :func:`record_partitions` records them: JSON [[name, size, mtime_ns], ...]."""
    folder = Path(lake) / LAKE_TABLE / f"benchmark={benchmark}"
    found = sorted((p.name, st.st_size, st.st_mtime_ns) for p in folder.glob("*.parquet") for st in [p.stat()])
    return json.dumps(found)


def record_partitions(con: duckdb.DuckDBPyConnection, lake: Path, benchmarks) -> None:
    """After partitions were moved into place (the writer committed): record their files and the rows
    and fingerprint of ``scores`` they were written from (``score_counts``, recomputed by the writer), so
    that :func:`lake_drift` with ``stored=True`` need not read them. Nothing is recorded while the counts
    are marked stale (the partitions are then read)."""
    from ingest.summaries import is_stale

    names = sorted(set(benchmarks))
    if not names:
        return
    con.execute("DELETE FROM lake_partitions WHERE benchmark IN (SELECT unnest(?::VARCHAR[]))", [names])
    if is_stale(con):
        return
    counts = {b: (n, fp) for b, n, fp in con.execute("""
        SELECT benchmark, sum(n_rows), sum(fingerprint) FROM score_counts
        WHERE benchmark IN (SELECT unnest(?::VARCHAR[])) GROUP BY 1""", [names]).fetchall()}
    on_disk = lake_benchmarks(lake)
    rows = [(b, _partition_files(lake, b), *counts[b]) for b in names if b in on_disk and b in counts]
    if rows:
        con.executemany("INSERT OR REPLACE INTO lake_partitions VALUES (?, ?, ?, ?)", [list(r) for r in rows])


def _partition_glob(lake: Path, benchmark: str = "*") -> str:
    return _sql_path(lake / LAKE_TABLE / f"benchmark={benchmark}" / "*.parquet")


def lake_drift(con: duckdb.DuckDBPyConnection, lake: str | os.PathLike | None = None, *,
               content: bool = True, stored: bool = False) -> dict[str, tuple]:
    """Benchmarks whose lake partition differs from ``scores``: name -> ((rows, fp) table, (rows, fp) lake).

    ``content=False`` compares row counts only (read from Parquet footers: cheap). A partition with
    a file DuckDB cannot read (truncated, not Parquet) has ``(None, 'file: why')`` on the lake side.
    ``stored=True`` reads neither ``scores`` nor the partitions whose files are those pace recorded
    when it wrote them (:func:`record_partitions`): the counts and fingerprints kept at write time
    (``score_counts``, ``lake_partitions``) stand for them; writes made outside pace are then not
    seen (``pace doctor`` compares everything)."""
    lake = Path(lake) if lake is not None else lake_of(con)
    agg = _FINGERPRINT if content else "count(*) AS n, NULL AS fp"
    from ingest.summaries import is_stale

    if stored and not is_stale(con):
        return _stored_drift(con, lake, content, agg)
    table = {b: (n, fp) for b, n, fp in con.execute(f"SELECT benchmark, {agg} FROM scores GROUP BY 1").fetchall()}
    lake_side: dict[str, tuple] = {}
    names = lake_benchmarks(lake)
    if names:
        try:
            lake_side = {b: (n, fp) for b, n, fp in con.execute(f"""
                SELECT benchmark, {agg}
                FROM read_parquet('{_partition_glob(lake)}', hive_partitioning = true, hive_types_autocast = false)
                GROUP BY 1""").fetchall()}
        except duckdb.Error:            # a damaged file: read partition by partition to name it
            lake_side = {name: _read_partition(con, lake, name, agg) for name in sorted(names)}
        for name in names - set(lake_side):
            lake_side[name] = (0, None)        # an empty partition folder
    empty = (0, None)
    return {b: (table.get(b, empty), lake_side.get(b, empty))
            for b in sorted(set(table) | set(lake_side)) if table.get(b, empty) != lake_side.get(b, empty)}


def _stored_drift(con: duckdb.DuckDBPyConnection, lake: Path, content: bool, agg: str) -> dict[str, tuple]:
    """:func:`lake_drift` from the counts kept at write time; partitions without a matching record are read."""
    keep = (lambda fp: fp) if content else (lambda fp: None)
    table = {b: (n, keep(fp)) for b, n, fp in con.execute(
        "SELECT benchmark, sum(n_rows), sum(fingerprint) FROM score_counts GROUP BY 1").fetchall()}
    records = {b: (files, n, fp) for b, files, n, fp in con.execute(
        "SELECT benchmark, files, n_rows, fingerprint FROM lake_partitions").fetchall()}
    lake_side: dict[str, tuple] = {}
    for name in sorted(lake_benchmarks(lake)):
        record = records.get(name)
        files = _partition_files(lake, name)
        if record and record[0] == files:
            lake_side[name] = (record[1], keep(record[2]))
        elif files != "[]":
            lake_side[name] = _read_partition(con, lake, name, agg)
    empty = (0, None)
    return {b: (table.get(b, empty), lake_side.get(b, empty))
            for b in sorted(set(table) | set(lake_side)) if table.get(b, empty) != lake_side.get(b, empty)}


def _read_partition(con: duckdb.DuckDBPyConnection, lake: Path, benchmark: str, agg: str) -> tuple:
    """(rows, fp) of one partition, or (None, 'file: why') naming its first file DuckDB cannot read."""
    try:
        return con.execute(f"SELECT {agg} FROM read_parquet('{_partition_glob(lake, benchmark)}')").fetchone()
    except duckdb.Error as exc:
        why = str(exc).splitlines()[0]
    for path in sorted((lake / LAKE_TABLE / f"benchmark={benchmark}").glob("*.parquet")):
        try:
            con.execute(f"SELECT count(*) FROM read_parquet('{_sql_path(path)}')").fetchone()
        except duckdb.Error as exc:
            return None, f"{path.name}: {str(exc).splitlines()[0]}"
    return None, why


def damaged(drift: dict[str, tuple]) -> dict[str, str]:
    """benchmark -> why, for the partitions of a :func:`lake_drift` result that DuckDB cannot read."""
    return {b: stored[1] for b, (_, stored) in drift.items() if stored[0] is None}


def leftovers(lake: Path) -> list[Path]:
    """Staging folders and trash a killed writer left in this lake (its own: inside it, by name)."""
    lake = Path(lake)
    found = sorted((lake / STAGING).iterdir()) if (lake / STAGING).is_dir() else []
    if (lake / LAKE_TABLE).is_dir():
        found += sorted((lake / LAKE_TABLE).glob(".trash-*"))
    return found


def remove_leftovers(lake: Path) -> int:
    """Remove :func:`leftovers` of killed writers; returns how many. Only for a writer holding the warehouse's
    write lock on its own lake (claimed): no other writer of this lake can be running then."""
    found = leftovers(lake)
    for path in found:
        shutil.rmtree(path, ignore_errors=True)
    return len(found)


def older_leftovers(lake: Path) -> list[Path]:
    """Staging folders that versions before the lake stamp kept beside the lake (``.lake.staging-*``).
    Two warehouses could share that folder, so they are reported, never removed."""
    lake = Path(lake)
    return sorted(lake.parent.glob(f".{lake.name}.staging-*")) if lake.parent.is_dir() else []


def discard_if_unused(lake: Path) -> None:
    """Remove a lake folder that holds nothing but its stamp and empty staging (a first write that failed)."""
    lake = Path(lake)
    staging = lake / STAGING
    if staging.is_dir() and not any(staging.iterdir()):
        staging.rmdir()
    if lake.is_dir() and {p.name for p in lake.iterdir()} <= {STAMP}:
        (lake / STAMP).unlink(missing_ok=True)
        lake.rmdir()
