"""Score tree -> DuckDB tables + hive-partitioned Parquet lake, all or nothing.

Order of work, so that bad input leaves the database and the lake exactly as they were:
1. discover and hash every file (unchanged sha256 -> no-op for that file);
2. parse the new and changed files (any error stops here, before anything is written);
3. one transaction: replace exactly those files' rows, record provenance, find anomalies
   (``--strict`` rolls back on any), write the affected lake partitions to a staging folder;
4. commit, then move the staged partitions into place.
"""
from __future__ import annotations

import os
import shutil
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ingest.anomalies import find_anomalies
from ingest.csvfile import ParsedFile, parse_bytes, sha256_of
from ingest.errors import IngestError
from ingest.report import Anomaly, IngestReport
from ingest.tree import ScoreFile, discover

LAKE_TABLE = "scores"
COPIED = "copied"        # staging sub-folder of the partitions copied from DuckDB (the others: from rows)


def _read(sf: ScoreFile) -> tuple[ScoreFile, bytes, str]:
    data = sf.path.read_bytes()
    return sf, data, sha256_of(data)


def _resolve_models(files: list[ScoreFile], aliases: dict[str, str]) -> dict[str, str]:
    """rel path -> model; two files of one leaf resolving to one model is an error."""
    owner: dict[tuple[str, str, str], str] = {}
    model_of: dict[str, str] = {}
    for sf in files:
        model = aliases.get(sf.file_model, sf.file_model)
        key = (sf.benchmark, sf.subdir, model)
        if key in owner:
            raise IngestError(str(sf.path), f"model {model!r} already comes from {owner[key]} in this leaf "
                              "(check model_aliases)")
        owner[key] = sf.rel
        model_of[sf.rel] = model
    return model_of


def _staged_table(parsed: list[tuple[ScoreFile, ParsedFile]]) -> pa.Table:
    """All parsed rows plus the index of their file (per-file columns are joined in SQL)."""
    parts = [pf.table.append_column("file_idx", pa.array(np.full(pf.table.num_rows, i, np.int32)))
             for i, (_, pf) in enumerate(parsed)]
    return pa.concat_tables(parts) if parts else pa.table({})


def write_lake(con: duckdb.DuckDBPyConnection, staging: Path, benchmarks: list[str]) -> None:
    """Copy the given benchmarks' rows from ``scores`` into hive partitions under ``staging``."""
    if not benchmarks:
        return
    con.execute("CREATE OR REPLACE TEMP TABLE lake_benchmarks AS SELECT unnest(?::VARCHAR[]) AS benchmark",
                [benchmarks])
    present = con.execute("SELECT count(*) FROM scores WHERE benchmark IN (SELECT benchmark FROM lake_benchmarks)"
                          ).fetchall()[0][0]
    if present:
        (staging / COPIED).mkdir(parents=True, exist_ok=True)
        target = str(staging / COPIED / LAKE_TABLE).replace("'", "''")
        con.execute(f"""
            COPY (SELECT * FROM scores WHERE benchmark IN (SELECT benchmark FROM lake_benchmarks))
            TO '{target}' (FORMAT parquet, PARTITION_BY (benchmark), OVERWRITE_OR_IGNORE)""")


def write_lake_from_rows(staging: Path, staged: pa.Table, parsed, model_of: dict[str, str],
                         benchmarks: set[str], recorded_at: datetime) -> None:
    """Write partitions of benchmarks whose rows all come from this ingest straight from the parsed
    Arrow rows, so it can run beside the DuckDB insert. Same columns and values as ``write_lake``."""
    if not benchmarks:
        return
    file_idx = staged.column("file_idx").combine_chunks()
    per_file = lambda values: pa.DictionaryArray.from_arrays(file_idx, pa.array(values, pa.string()))  # noqa: E731
    n = staged.num_rows
    rows = pa.table({
        "model": per_file([model_of[sf.rel] for sf, _ in parsed]),
        "subdir": per_file([sf.subdir for sf, _ in parsed]),
        "instance_id": staged.column("instance_id"),
        "score": staged.column("score"),
        "metric_name": staged.column("metric_name"),
        "origin": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array(["ingest"])),
        "source_ref": per_file([sf.rel for sf, _ in parsed]),
        "recorded_at": pa.array(np.full(n, np.datetime64(recorded_at, "us")), pa.timestamp("us")),
    })
    bench_of_file = np.array([sf.benchmark for sf, _ in parsed], dtype=object)
    for benchmark in sorted(benchmarks):
        ids = pa.array(np.flatnonzero(bench_of_file == benchmark).astype(np.int32))
        part_dir = staging / LAKE_TABLE / f"benchmark={benchmark}"
        part_dir.mkdir(parents=True, exist_ok=True)
        pq.write_table(rows.filter(pc.is_in(file_idx, value_set=ids)), part_dir / "data_0.parquet",
                       store_schema=False)


def swap_lake(lake: Path, staging: Path | None, benchmarks: list[str]) -> None:
    """Move staged partitions into ``lake/scores``; drop partitions of benchmarks now empty."""
    if staging is None:
        return
    table_dir = lake / LAKE_TABLE
    table_dir.mkdir(parents=True, exist_ok=True)
    for benchmark in benchmarks:
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
    table_dir = lake / LAKE_TABLE
    if not table_dir.is_dir():
        return set()
    return {p.name.split("=", 1)[1] for p in table_dir.iterdir() if p.name.startswith("benchmark=")}


def ingest_tree(con: duckdb.DuckDBPyConnection, root: str | os.PathLike, lake: str | os.PathLike, *,
                prune: bool = False, strict: bool = False, progress=None) -> IngestReport:
    """Ingest the results tree at ``root``. ``progress`` is a callable(advance:int) or None."""
    started = time.perf_counter()
    root, lake = Path(root), Path(lake)
    files = discover(root)
    if not files:
        raise IngestError(str(root), "no score files (<benchmark>/[<subdir>/]<Model>.csv) in this directory")
    report = IngestReport(root=str(root), files=len(files))

    aliases = dict(con.execute("SELECT alias, model FROM model_aliases").fetchall())
    model_of = _resolve_models(files, aliases)
    stored = dict(con.execute("SELECT path, sha256 FROM score_files").fetchall())
    stored_model = dict(con.execute("SELECT path, model FROM score_files").fetchall())

    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        hashed = list(pool.map(_read, files))
    todo = [(sf, data) for sf, data, digest in hashed
            if stored.get(sf.rel) != digest or stored_model.get(sf.rel) != model_of[sf.rel]]
    report.files_unchanged = len(files) - len(todo)
    report.files_new = sum(1 for sf, _ in todo if sf.rel not in stored)
    report.files_changed = len(todo) - report.files_new

    def parse(item):
        sf, data = item
        pf = parse_bytes(str(sf.path), data)
        if progress:
            progress(1)
        return sf, pf

    with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
        parsed = list(pool.map(parse, todo))   # the first bad file (in tree order) raises here
    if progress and report.files_unchanged:
        progress(report.files_unchanged)

    current = {sf.rel for sf in files}
    disappeared = sorted(p for p in stored if p not in current and _under(p, files))
    report.files_disappeared = len(disappeared)

    staged = _staged_table(parsed)
    rewritten = [sf.rel for sf, _ in parsed]
    staging = lake.parent / f".{lake.name}.staging-{uuid.uuid4().hex[:8]}"
    recorded_at = datetime.now().replace(microsecond=0)
    lake_writer = ThreadPoolExecutor(max_workers=1)
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("CREATE OR REPLACE TEMP TABLE tree_files AS SELECT unnest(?::VARCHAR[]) AS path",
                    [sorted(current)])
        con.execute("CREATE OR REPLACE TEMP TABLE rewritten AS SELECT unnest(?::VARCHAR[]) AS path",
                    [rewritten + (disappeared if prune else [])])
        affected = {b for (b,) in con.execute(
            "SELECT DISTINCT benchmark FROM score_files WHERE path IN (SELECT path FROM rewritten)").fetchall()}
        report.rows_removed = con.execute(
            "SELECT count(*) FROM scores WHERE source_ref IN (SELECT path FROM rewritten)").fetchone()[0]
        con.execute("DELETE FROM scores WHERE source_ref IN (SELECT path FROM rewritten)")
        con.execute("DELETE FROM score_files WHERE path IN (SELECT path FROM rewritten)")
        new_benchmarks = {sf.benchmark for sf, _ in parsed}
        kept = {b for (b,) in con.execute("SELECT DISTINCT benchmark FROM scores").fetchall()}
        fresh = new_benchmarks - kept          # every row of these comes from this ingest
        staging.mkdir(parents=True)
        from_rows = lake_writer.submit(write_lake_from_rows, staging, staged, parsed, model_of, fresh, recorded_at)
        if parsed:
            _insert(con, staged, parsed, model_of, report, recorded_at)
            affected |= new_benchmarks
        report.files_pruned = len(disappeared) if prune else 0
        if not prune:
            for path in disappeared:
                report.anomalies.append(Anomaly("disappeared_file", path,
                                                "in the warehouse but no longer in the tree (remove with --prune)"))
        report.anomalies += find_anomalies(con)
        if strict and report.anomalies:
            raise IngestError(str(root), f"--strict: {len(report.anomalies)} anomalies, nothing written:\n  "
                              + "\n  ".join(str(a) for a in report.anomalies))
        _summarise(con, report)
        stale = sorted(affected | (set(report.benchmarks) - lake_benchmarks(lake)))
        write_lake(con, staging, sorted(set(stale) - fresh))
        from_rows.result()
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        lake_writer.shutdown(wait=True)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    lake_writer.shutdown(wait=True)
    swap_lake(lake, staging, stale)
    report.seconds = time.perf_counter() - started
    return report


def _under(path: str, files: list[ScoreFile]) -> bool:
    """A stored file counts as disappeared only if its benchmark folder is part of this tree."""
    return path.split("/", 1)[0] in {sf.benchmark for sf in files}


def _insert(con, staged: pa.Table, parsed, model_of, report: IngestReport, recorded_at: datetime) -> None:
    meta = pa.table({
        "file_idx": pa.array(range(len(parsed)), pa.int32()),
        "path": [sf.rel for sf, _ in parsed],
        "sha256": [pf.sha256 for _, pf in parsed],
        "model": [model_of[sf.rel] for sf, _ in parsed],
        "file_model": [sf.file_model for sf, _ in parsed],
        "benchmark": [sf.benchmark for sf, _ in parsed],
        "subdir": [sf.subdir for sf, _ in parsed],
        "n_rows": pa.array([pf.table.num_rows for _, pf in parsed], pa.int64()),
        "n_duplicates": pa.array([pf.n_duplicates for _, pf in parsed], pa.int64()),
        "n_null_scores": pa.array([pf.n_null_scores for _, pf in parsed], pa.int64()),
        "layout": [pf.layout for _, pf in parsed],
    })
    con.register("incoming_rows", staged)
    con.register("incoming_files", meta)
    try:
        con.execute("""
            CREATE OR REPLACE TEMP VIEW incoming AS
            SELECT f.model, f.benchmark, f.subdir, r.instance_id, r.score, r.metric_name, f.path AS source_ref
            FROM incoming_rows r JOIN incoming_files f USING (file_idx)""")
        # A runner row with the same key is superseded by the file (reported, never duplicated).
        key_match = """s.model = i.model AND s.benchmark = i.benchmark AND s.subdir = i.subdir
                       AND s.instance_id = i.instance_id"""
        replaced = con.execute(f"SELECT count(*) FROM scores s SEMI JOIN incoming i ON {key_match}").fetchone()[0]
        if replaced:
            con.execute(f"DELETE FROM scores s USING incoming i WHERE {key_match}")
            report.rows_removed += replaced
            report.anomalies.append(Anomaly("replaced_rows", report.root,
                                            f"{replaced} rows from other sources (runs) replaced by file rows"))
        con.execute("""
            INSERT INTO scores
            SELECT model, benchmark, subdir, instance_id, score, metric_name, 'ingest', source_ref, ?
            FROM incoming""", [recorded_at])
        con.execute("INSERT INTO score_files SELECT * EXCLUDE (file_idx), current_localtimestamp() "
                    "FROM incoming_files")
        con.execute("""
            INSERT INTO benchmarks
            SELECT DISTINCT benchmark, 'source' FROM incoming_files
            WHERE benchmark NOT IN (SELECT benchmark FROM benchmarks)""")
        report.rows_written = staged.num_rows
    finally:
        con.execute("DROP VIEW IF EXISTS incoming")
        con.unregister("incoming_rows")
        con.unregister("incoming_files")


def _summarise(con, report: IngestReport) -> None:
    row = con.execute("""
        SELECT count(*), list(DISTINCT s.model ORDER BY s.model), list(DISTINCT s.benchmark ORDER BY s.benchmark),
               count(DISTINCT (s.benchmark, s.subdir))
        FROM scores s JOIN tree_files f ON s.source_ref = f.path""").fetchone()
    report.rows, report.models, report.benchmarks, report.leaves = row[0], row[1] or [], row[2] or [], row[3]
