"""Score tree -> DuckDB tables + hive-partitioned Parquet lake, all or nothing.

Order of work, so that bad input leaves the database and the lake exactly as they were:
1. discover and hash every file (unchanged sha256 -> no-op for that file);
2. parse the new and changed files (any error stops here, before anything is written);
3. one transaction: replace exactly those files' rows, record provenance, find anomalies
   (``--strict`` rolls back on any), mark the affected lake partitions pending and write them to a
   staging folder;
4. commit, then move the staged partitions into place and clear the pending mark (a kill in
   between is finished by the next write open: see ``ingest.lake``).

Provenance: every file remembers the tree (root folder) it came from. "Disappeared" and ``--prune``
only consider files of the tree being ingested, so ingesting a second tree (a new model's results)
never touches the first. A synthetic tree (``pace demo-data``'s SYNTHETIC marker) and real trees are
never mixed in one warehouse. A file whose rows went missing from ``scores`` (deleted outside
ingest) is reloaded even though its bytes did not change.
"""
from __future__ import annotations

import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Callable

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ingest.anomalies import find_anomalies
from ingest.csvfile import DUPLICATE_POLICIES, ParsedFile, parse_bytes, sha256_of
from ingest.errors import IngestError
from ingest.lake import (LAKE_TABLE, lake_benchmarks, lake_of, mark_pending, remember_lake, staging_folder,
                         swap_lake, write_lake)
from ingest.report import Anomaly, IngestReport
from ingest.tree import ScoreFile, discover, is_synthetic_tree, tree_identity


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


def _check_mixing(con, root: Path, tree: str, synthetic: bool) -> None:
    """Refuse to put synthetic and real files into one warehouse (either way round)."""
    other = con.execute("""
        SELECT tree, count(*) FROM score_files
        WHERE tree IS NOT NULL AND tree <> ? AND synthetic IS DISTINCT FROM ?
        GROUP BY tree ORDER BY tree LIMIT 1""", [tree, synthetic]).fetchone()
    runner_rows = con.execute("SELECT count(*) FROM scores WHERE origin = 'runner'").fetchone()[0] if synthetic else 0
    if not other and not runner_rows:
        return
    this = "SYNTHETIC (its README carries the marker)" if synthetic else "real (no SYNTHETIC marker)"
    held = (f"{other[1]} {'real' if synthetic else 'SYNTHETIC'} files from {other[0]}" if other
            else f"{runner_rows} rows from `pace run`")
    raise IngestError(str(root), f"this tree is {this} but the warehouse holds {held}; refusing to mix "
                      "synthetic and real scores: use another --db (`pace demo` keeps synthetic data in "
                      "its own demo_warehouse/)")


@dataclass
class Unit:
    """One score file's worth of rows, as ``score_files`` records it: a CSV file of a results tree,
    or one leaf of a harness file that ``pace import`` reads (see :mod:`ingest.harness`).

    ``sha256`` is the source file's; ``mapping`` (imports only) the map entry that turned it into
    rows, so an unchanged file under a changed map is read again. ``parse`` is called only when the
    unit is new or changed."""
    sf: ScoreFile
    sha256: str
    parse: Callable[[], ParsedFile]
    mapping: str | None = None


def check_duplicates_policy(duplicates: str, where: str) -> None:
    if duplicates not in DUPLICATE_POLICIES:
        raise IngestError(where, f"--duplicates must be one of {', '.join(DUPLICATE_POLICIES)}, "
                          f"not {duplicates!r}")


def ingest_tree(con: duckdb.DuckDBPyConnection, root: str | os.PathLike, lake: str | os.PathLike | None = None, *,
                prune: bool = False, strict: bool = False, progress=None, duplicates: str = "first") -> IngestReport:
    """Ingest the results tree at ``root``. ``progress`` is a callable(advance:int) or None.

    ``lake`` defaults to the warehouse's lake (:func:`ingest.lake.lake_of`). ``duplicates`` says
    which row of a repeated id is kept: ``first`` (published), ``last``, or ``error``."""
    check_duplicates_policy(duplicates, str(root))
    started = time.perf_counter()
    root = Path(root)
    files = discover(root)
    if not files:
        raise IngestError(str(root), "no score files (<benchmark>/[<subdir>/]<Model>.csv) in this directory")
    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        hashed = list(pool.map(_read, files))
    units = [Unit(sf, digest, partial(parse_bytes, str(sf.path), data, duplicates)) for sf, data, digest in hashed]
    report = IngestReport(root=str(root), files=len(files), tree=tree_identity(root),
                          synthetic=is_synthetic_tree(root))
    return load_units(con, units, report, lake, prune=prune, strict=strict, progress=progress,
                      duplicates=duplicates, started=started)


def load_units(con: duckdb.DuckDBPyConnection, units: list[Unit], report: IngestReport,
               lake: str | os.PathLike | None = None, *, prune: bool = False, strict: bool = False, progress=None,
               duplicates: str = "first", started: float | None = None) -> IngestReport:
    """Store the units of one tree (``report.tree``) with every guarantee of ``pace ingest``: unchanged
    units are no-ops, changed ones replace exactly their rows, all or nothing, anomalies reported,
    provenance recorded, the lake kept equal to ``scores``. ``report`` arrives with the tree's identity
    (and any anomalies the reader found) and is returned filled in."""
    started = time.perf_counter() - report.seconds if started is None else started
    root, tree, synthetic = Path(report.root), report.tree, report.synthetic
    lake = Path(lake) if lake is not None else lake_of(con)
    _check_mixing(con, root, tree, synthetic)

    aliases = dict(con.execute("SELECT alias, model FROM model_aliases").fetchall())
    model_of = _resolve_models([u.sf for u in units], aliases)
    stored = {r[0]: r[1:] for r in con.execute("""
        WITH present AS (SELECT source_ref AS path, count(*) AS n FROM scores WHERE origin = 'ingest' GROUP BY 1)
        SELECT f.path, f.sha256, f.model, f.tree, f.n_rows, coalesce(f.duplicates, 'first'), f.n_duplicates,
               coalesce(p.n, 0), f.mapping
        FROM score_files f LEFT JOIN present p USING (path)""").fetchall()}

    todo, adopted = [], []
    for unit in units:
        sf, digest = unit.sf, unit.sha256
        if sf.rel not in stored:
            report.files_new += 1
            todo.append(unit)
            continue
        sha, model, old_tree, n_rows, policy, n_dups, present, mapping = stored[sf.rel]
        same = sha == digest and model == model_of[sf.rel] and mapping == unit.mapping
        if old_tree is not None and old_tree != tree:
            report.anomalies.append(Anomaly("other_tree", sf.rel, f"was ingested from {old_tree}; "
                                            "this tree's file replaces it"))
        elif same and present != n_rows:
            report.files_reloaded += 1
            report.anomalies.append(Anomaly("reloaded_rows", sf.rel, f"{n_rows - present} of its {n_rows} rows "
                                            "were missing from scores (deleted outside ingest): reloaded"))
            todo.append(unit)
            continue
        elif same and (n_dups == 0 or policy == duplicates):
            if old_tree is None:
                adopted.append(sf.rel)
            continue
        report.files_changed += 1
        todo.append(unit)
    report.files_unchanged = len(units) - len(todo)

    def parse(unit: Unit):
        pf = unit.parse()
        if progress:
            progress(1)
        return unit.sf, pf

    with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
        parsed = list(pool.map(parse, todo))   # the first bad file (in tree order) raises here
    if progress and report.files_unchanged:
        progress(report.files_unchanged)
    mapping_of = {u.sf.rel: u.mapping for u in units}

    current = {u.sf.rel for u in units}
    disappeared = sorted(p for p, info in stored.items() if info[2] == tree and p not in current)
    report.files_disappeared = len(disappeared)

    staged = _staged_table(parsed)
    rewritten = [sf.rel for sf, _ in parsed]
    staging = staging_folder(lake)
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
        removed = "origin = 'ingest' AND source_ref IN (SELECT path FROM rewritten)"
        report.rows_removed = con.execute(f"SELECT count(*) FROM scores WHERE {removed}").fetchone()[0]
        con.execute(f"DELETE FROM scores WHERE {removed}")
        con.execute("DELETE FROM score_files WHERE path IN (SELECT path FROM rewritten)")
        if adopted:
            con.execute("UPDATE score_files SET tree = ?, synthetic = ? WHERE path IN (SELECT unnest(?::VARCHAR[]))",
                        [tree, synthetic, adopted])
        new_benchmarks = {sf.benchmark for sf, _ in parsed}
        kept = {b for (b,) in con.execute("SELECT DISTINCT benchmark FROM scores").fetchall()}
        fresh = new_benchmarks - kept          # every row of these comes from this ingest
        staging.mkdir(parents=True)
        from_rows = lake_writer.submit(write_lake_from_rows, staging, staged, parsed, model_of, fresh, recorded_at)
        if parsed:
            _insert(con, staged, parsed, model_of, report, recorded_at, tree, synthetic, duplicates, mapping_of)
            affected |= new_benchmarks
        report.files_pruned = len(disappeared) if prune else 0
        if not prune:
            for path in disappeared:
                report.anomalies.append(Anomaly("disappeared_file", path,
                                                "in the warehouse but no longer in this tree (remove with --prune)"))
        report.anomalies += find_anomalies(con, imported=report.source != "tree")
        if strict and report.anomalies:
            raise IngestError(str(root), f"--strict: {len(report.anomalies)} anomalies, nothing written:\n  "
                              + "\n  ".join(str(a) for a in report.anomalies))
        _summarise(con, report)
        stale = sorted(affected | (set(report.benchmarks) - lake_benchmarks(lake)))
        mark_pending(con, stale)
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
    if stale:
        con.execute("DELETE FROM lake_pending WHERE benchmark IN (SELECT unnest(?::VARCHAR[]))", [stale])
    remember_lake(con, lake)
    report.seconds = time.perf_counter() - started
    return report


def _insert(con, staged: pa.Table, parsed, model_of, report: IngestReport, recorded_at: datetime,
            tree: str, synthetic: bool, duplicates: str, mapping_of: dict[str, str | None]) -> None:
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
        "tree": [tree] * len(parsed),
        "synthetic": [synthetic] * len(parsed),
        "duplicates": [duplicates if pf.n_duplicates else None for _, pf in parsed],
        "n_runs": pa.array([pf.n_runs for _, pf in parsed], pa.int32()),
        "run_means": pa.array([pf.run_means or None for _, pf in parsed], pa.list_(pa.float64())),
        "conflicting_ids": pa.array([pf.conflicting_ids or None for _, pf in parsed], pa.list_(pa.string())),
        "mapping": pa.array([mapping_of.get(sf.rel) for sf, _ in parsed], pa.string()),
    })
    con.register("incoming_rows", staged)
    con.register("incoming_files", meta)
    try:
        con.execute("""
            CREATE OR REPLACE TEMP VIEW incoming AS
            SELECT f.model, f.benchmark, f.subdir, r.instance_id, r.score, r.metric_name, f.path AS source_ref
            FROM incoming_rows r JOIN incoming_files f USING (file_idx)""")
        # A runner row with the same key is superseded by the file (reported, never duplicated);
        # a row another ingested file (of another tree) already holds is a conflict.
        key_match = """s.model = i.model AND s.benchmark = i.benchmark AND s.subdir = i.subdir
                       AND s.instance_id = i.instance_id"""
        clash = con.execute(f"""SELECT i.source_ref, s.source_ref, count(*) FROM scores s JOIN incoming i ON {key_match}
                                WHERE s.origin = 'ingest' GROUP BY ALL ORDER BY ALL LIMIT 1""").fetchone()
        if clash:
            raise IngestError(clash[0], f"{clash[2]} rows have the same model, leaf and ids as rows already "
                              f"ingested from {clash[1]} (another tree); remove one of the two files (check "
                              "model_aliases)")
        replaced = con.execute(f"SELECT count(*) FROM scores s SEMI JOIN incoming i ON {key_match}").fetchone()[0]
        if replaced:
            con.execute(f"DELETE FROM scores s USING incoming i WHERE {key_match} AND s.origin = 'runner'")
            report.rows_removed += replaced
            report.anomalies.append(Anomaly("replaced_rows", report.root,
                                            f"{replaced} rows from other sources (runs) replaced by file rows"))
        con.execute("""
            INSERT INTO scores
            SELECT model, benchmark, subdir, instance_id, score, metric_name, 'ingest', source_ref, ?
            FROM incoming""", [recorded_at])
        con.execute("INSERT INTO score_files BY NAME SELECT * EXCLUDE (file_idx), "
                    "current_localtimestamp() AS ingested_at FROM incoming_files")
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
