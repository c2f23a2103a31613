"""Score tree -> DuckDB tables + hive-partitioned Parquet lake, all or nothing.

Order of work, so that bad input leaves the database and the lake exactly as they were:
1. discover every file and look at its size and modification time: a file of this tree with the
   size and time ``score_files`` recorded is unchanged without being read; a known file with
   another size or time is read and hashed (same sha256 -> a no-op for that file, its new size and
   time recorded); a new file is hashed when its rows are read (``pace import`` arrives here with
   its units already parsed: :func:`load_units`);
2. one transaction: remove exactly the replaced files' rows, then batch by batch (whole files, in
   the storage order of :func:`_storage_order`) read the files' bytes once, hash them and parse each
   batch with one Arrow CSV call (:mod:`ingest.bulk`), check them (a bad file stops
   everything with ``file:line``), resolve repeated ids, insert the rows, and hand the rows of
   benchmarks new to the warehouse to the lake writer; record provenance, find anomalies
   (``--strict`` rolls back on any; the stored collapsed cells are recomputed first when rows came or
   went, see ``ingest.collapsed``), mark the affected lake partitions pending and write the rest
   of them to a staging folder;
3. commit, then move the staged partitions into place and clear the pending mark (a kill in
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
from pathlib import Path
from typing import Callable

import duckdb
import pyarrow as pa

from ingest import preference, score_store
from ingest.anomalies import find_anomalies, summarise
from ingest.derived import refresh as refresh_derived, refresh_stale as refresh_stale_derived
from ingest.summaries import mark_stale as mark_summaries_stale
from ingest.bulk import BatchReader, FileRows, Probe, batches, probe, stat_probe
from ingest.csvfile import DUPLICATE_POLICIES, ParsedFile
from ingest.errors import IngestError
from ingest.lake import (claim_lake, lake_benchmarks, lake_of, mark_pending, pending, record_partitions, remember_lake,
                         remove_leftovers, stamp_lake, staging_folder, swap_lake, write_lake)
from ingest.lake_rows import RowsLakeWriter
from ingest.noise import hold_noise
from ingest.report import Anomaly, IngestReport, anomaly_lines
from ingest.tree import ScoreFile, discover, is_synthetic_tree, tree_identity
from warehouse import stored_predictions
from warehouse.connect import ingest_memory
from warehouse.registered import registered


def _resolve_models(units: list[Unit], aliases: dict[str, str]) -> dict[str, str]:
    """rel path -> model; two files of one leaf resolving to one model (and one source) is an error."""
    owner: dict[tuple[str, str, str, str | None], str] = {}
    model_of: dict[str, str] = {}
    for unit in units:
        sf = unit.sf
        model = aliases.get(sf.file_model, sf.file_model)
        model_of[sf.rel] = model
        if not unit.scores:                     # no score rows: nothing to clash with
            continue
        key = (sf.benchmark, sf.subdir, model, unit.source)
        if key in owner:
            raise IngestError(str(sf.path), f"model {model!r} already comes from {owner[key]} in this leaf "
                              "(check model_aliases)")
        owner[key] = sf.rel
    return model_of


#: models are stored in blocks of about this many CSV bytes (see _storage_order)
MODEL_BLOCK_BYTES = 32 << 20


def _storage_order(todo: list[Unit], model_of: dict[str, str]) -> list[Unit]:
    """The order rows are inserted in: blocks of consecutive models (by name, about
    :data:`MODEL_BLOCK_BYTES` of CSV each, ~1 M rows), leaf by leaf inside a block.

    A model's rows then lie in the few row groups of its block, so DuckDB's per-row-group min/max
    skip the rest of the table when one model is looked up (`predictions`, `pace plan`: ~10 row
    groups instead of all of them at 10^8 rows), while each row group still holds few leaves, so
    instance ids compress as well as leaf by leaf (model by model costs ~50% more space)."""
    size: dict[str, int] = {}
    for u in todo:
        size[model_of[u.sf.rel]] = size.get(model_of[u.sf.rel], 0) + u.probe.size
    block, filled, k = {}, 0, 0
    for model in sorted(size):
        if filled and filled + size[model] > MODEL_BLOCK_BYTES:
            k, filled = k + 1, 0
        block[model] = k
        filled += size[model]
    return sorted(todo, key=lambda u: (block[model_of[u.sf.rel]], u.sf.benchmark, u.sf.subdir, model_of[u.sf.rel]))


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
    rows, so an unchanged file under a changed map is read again. A CSV file carries its ``probe``
    and is read in bulk (:mod:`ingest.bulk`); an imported leaf carries ``parse``, called only when
    the unit is new or changed.

    ``source`` is ``score_files.source``: None for the warehouse's own files, else the source whose
    rows may stand beside another's for one (model, leaf) (:mod:`ingest.preference`). A unit with
    ``scores=False`` holds no score rows (its ``parse`` gives none): the file's provenance is recorded
    like any other's, its content goes to the importer's own tables (``load_units``'s ``side``)."""
    sf: ScoreFile
    sha256: str
    parse: Callable[[], ParsedFile] | None = None
    mapping: str | None = None
    probe: Probe | None = None
    source: str | None = None
    scores: bool = True


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
    skipped: list[tuple[str, str]] = []
    files = discover(root, skipped)
    if not files:
        raise IngestError(str(root), "no score files (<benchmark>/[<subdir>/]<Model>.csv) in this directory")
    report = IngestReport(root=str(root), files=len(files), tree=tree_identity(root),
                          synthetic=is_synthetic_tree(root))
    report.anomalies += [Anomaly("skipped_path", path, why) for path, why in skipped]
    known = {r[0]: r[1:] for r in con.execute(
        "SELECT path, tree, size, mtime_ns, sha256 FROM score_files WHERE tree = ? OR tree IS NULL", [report.tree]).fetchall()}

    def look(sf: ScoreFile) -> Probe:
        """Size and time; a file this tree had with other ones is read and hashed (its bytes decide)."""
        seen = stat_probe(sf.path)
        stored = known.get(sf.rel)
        if stored is None:
            return seen                               # new: hashed when its rows are read
        if (stored[1], stored[2]) == (seen.size, seen.mtime_ns):
            seen.sha256 = stored[3]                   # unchanged, not read
            return seen
        return probe(sf.path, classify=False)

    with report.timed("hash"), ThreadPoolExecutor(max_workers=min(4, 2 * (os.cpu_count() or 1))) as pool:
        probes = list(pool.map(look, files))
    units = [Unit(sf, pr.sha256, probe=pr) for sf, pr in zip(files, probes)]
    return load_units(con, units, report, lake, prune=prune, strict=strict, progress=progress,
                      duplicates=duplicates, started=started)


def load_units(con: duckdb.DuckDBPyConnection, units: list[Unit], report: IngestReport,
               lake: str | os.PathLike | None = None, **options) -> IngestReport:
    """:func:`_load_units` under DuckDB's ingest memory limit (the reader's batches are held beside it)."""
    with ingest_memory(con):
        return _load_units(con, units, report, lake, **options)


def _load_units(con: duckdb.DuckDBPyConnection, units: list[Unit], report: IngestReport,
                lake: str | os.PathLike | None = None, *, prune: bool = False, strict: bool = False, progress=None,
                duplicates: str = "first", started: float | None = None,
                side: Callable[[duckdb.DuckDBPyConnection, list[str], list[str]], None] | None = None,
                skip_anomalies: frozenset[str] = frozenset()) -> IngestReport:
    """Store the units of one tree (``report.tree``) with every guarantee of ``pace ingest``: unchanged
    units are no-ops, changed ones replace exactly their rows, all or nothing, anomalies reported,
    provenance recorded, the lake kept equal to ``scores``. ``report`` arrives with the tree's identity
    (and any anomalies the reader found) and is returned filled in.

    ``side(con, removed, written)`` runs inside the transaction after the score rows are in: an importer
    replaces its own tables' rows of the units ``removed`` (replaced or pruned) by those of ``written``
    (new or changed), by ``source_ref``; it may add anomalies to ``report``. ``skip_anomalies``: kinds of
    the tree-wide report the importer words better itself."""
    started = time.perf_counter() - report.seconds if started is None else started
    root, tree, synthetic = Path(report.root), report.tree, report.synthetic
    lake = Path(lake) if lake is not None else lake_of(con)
    _check_mixing(con, root, tree, synthetic)
    claim_lake(con, lake, stamp=False)      # a lake of another warehouse is refused before anything is read
    remove_leftovers(lake)                  # a killed writer's staging: ours, and we hold the write lock

    aliases = dict(con.execute("SELECT alias, model FROM model_aliases").fetchall())
    model_of = _resolve_models(units, aliases)
    stored = {r[0]: r[1:] for r in con.execute(f"""
        WITH present AS ({preference.PRESENT_ROWS})
        SELECT f.path, f.sha256, f.model, f.tree, f.n_rows, coalesce(f.duplicates, 'first'), f.n_duplicates,
               coalesce(p.n, 0), f.mapping, f.size, f.mtime_ns
        FROM score_files f LEFT JOIN present p USING (path)""").fetchall()}

    todo: list[Unit] = []
    adopted: list[str] = []
    restat: list[tuple] = []           # unchanged bytes under a new size or time: recorded
    for unit in units:
        sf, digest = unit.sf, unit.sha256
        if sf.rel not in stored:
            report.files_new += 1
            todo.append(unit)
            continue
        sha, model, old_tree, n_rows, policy, n_dups, present, mapping, size, mtime_ns = stored[sf.rel]
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
            if unit.probe is not None and (size, mtime_ns) != (unit.probe.size, unit.probe.mtime_ns):
                restat.append((sf.rel, unit.probe.size, unit.probe.mtime_ns))
            continue
        report.files_changed += 1
        todo.append(unit)
    report.files_unchanged = len(units) - len(todo)
    for u in todo:
        if u.probe is None:            # already parsed (pace import): nothing to read from disk
            u.probe = Probe(u.sha256, 0, 0, route="parsed")
    todo = _storage_order(todo, model_of)
    if progress and report.files_unchanged:
        progress(report.files_unchanged)
    mapping_of = {u.sf.rel: u.mapping for u in units}

    current = {u.sf.rel for u in units}
    disappeared = sorted(p for p, info in stored.items() if info[2] == tree and p not in current)
    report.files_disappeared = len(disappeared)

    rewritten = [u.sf.rel for u in todo]
    # what the warehouse knew before: only models and benchmarks new to it are held out or excluded (ingest.noise)
    models_before = {m for (m,) in con.execute("SELECT DISTINCT model FROM score_files UNION "
                                               "SELECT DISTINCT model FROM scores WHERE origin = 'runner'").fetchall()}
    benchmarks_before = {b for (b,) in con.execute("SELECT benchmark FROM benchmarks").fetchall()}
    staging = staging_folder(lake)
    recorded_at = datetime.now().replace(microsecond=0)
    lake_rows: RowsLakeWriter | None = None
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("CREATE OR REPLACE TEMP TABLE tree_files AS SELECT unnest(?::VARCHAR[]) AS path",
                    [sorted(current)])
        con.execute("CREATE OR REPLACE TEMP TABLE rewritten AS SELECT unnest(?::VARCHAR[]) AS path",
                    [rewritten + (disappeared if prune else [])])
        affected = {b for (b,) in con.execute("SELECT DISTINCT benchmark FROM score_files "
                                              "WHERE path IN (SELECT path FROM rewritten) AND n_rows > 0").fetchall()}
        with report.timed("delete"):
            removed = "origin = 'ingest' AND source_ref IN (SELECT path FROM rewritten)"
            if affected:
                report.rows_removed = con.execute(f"""SELECT (SELECT count(*) FROM scores WHERE {removed})
                                                      + (SELECT count(*) FROM scores_displaced WHERE {removed})
                                                   """).fetchone()[0]
                score_store.delete_sources(con, removed)
                con.execute(f"DELETE FROM scores_displaced WHERE {removed}")
            con.execute("DELETE FROM score_files WHERE path IN (SELECT path FROM rewritten)")
        if adopted:
            con.execute("UPDATE score_files SET tree = ?, synthetic = ? WHERE path IN (SELECT unnest(?::VARCHAR[]))",
                        [tree, synthetic, adopted])
        if restat:
            with registered(con, restat_files=pa.table(list(zip(*restat)), names=["path", "size", "mtime_ns"])):
                con.execute("UPDATE score_files AS f SET size = r.size, mtime_ns = r.mtime_ns FROM restat_files AS r "
                            "WHERE f.path = r.path")
        new_benchmarks = {u.sf.benchmark for u in todo if u.scores}
        kept = {b for (b,) in con.execute("SELECT DISTINCT benchmark FROM scores").fetchall()}
        fresh = new_benchmarks - kept          # every row of these comes from this ingest
        # Benchmarks that only gain rows (no file of theirs replaced or reloaded, a partition on disk
        # and none pending): the new rows go into the partition as one more file.
        appending = ((new_benchmarks & kept) - affected - set(pending(con))) & lake_benchmarks(lake)
        staging.mkdir(parents=True)
        lake_rows = RowsLakeWriter(staging, fresh | appending,
                                   [(u.sf.benchmark, model_of[u.sf.rel], u.sf.subdir, u.sf.rel) for u in todo],
                                   recorded_at)
        if todo:
            runs_replaced = _load(con, todo, model_of, report, recorded_at, tree, synthetic, duplicates, lake_rows,
                                  progress, mapping_of)
            appending -= runs_replaced
            affected |= new_benchmarks
        if side is not None:
            with report.timed("side"):
                side(con, rewritten + (disappeared if prune else []), [u.sf.rel for u in todo])
        with report.timed("preference"):
            moved = preference.refresh(con)     # which source each contested (model, leaf) keeps in scores
        if moved:           # partitions whose rows moved are copied from scores, not written from the files
            affected |= moved
            appending -= moved
            fresh -= moved
        report.files_pruned = len(disappeared) if prune else 0
        if not prune:
            for path in disappeared:
                report.anomalies.append(Anomaly("disappeared_file", path,
                                                "in the warehouse but no longer in this tree (remove with --prune)"))
        noise, notes = hold_noise(con, sorted(current), models_before, benchmarks_before)
        report.anomalies += [a for a in noise if a.kind not in skip_anomalies]
        report.notes += notes
        if affected:            # rows came or went: recompute the stored collapsed cells (the anomalies read
            refresh_derived(con, report.timed, ["collapsed cells"])       # them) now, the summaries after COMMIT
            mark_summaries_stale(con)
        with report.timed("anomalies"):
            report.anomalies += [a for a in find_anomalies(con, imported=report.source != "tree")
                                 if a.kind not in skip_anomalies]
        if strict and report.anomalies:
            raise IngestError(str(root), f"--strict: {len(report.anomalies)} anomalies, nothing written:\n"
                              + "\n".join(anomaly_lines(report.anomalies, "  ")))
        report.rows, report.models, report.benchmarks, report.leaves = summarise(con)
        # every benchmark with rows and no partition is written too, not only this tree's: a lake that is new
        # to this warehouse (PACE_LAKE on a copied warehouse) or lost a partition then holds all of scores
        stale = sorted(affected | ((kept | new_benchmarks | set(report.benchmarks)) - lake_benchmarks(lake)))
        mark_pending(con, stale)
        with report.timed("lake_copy"):
            write_lake(con, staging, sorted(set(stale) - fresh - appending))
        with report.timed("lake_close"):
            lake_rows.close()
            lake_rows.discard(lake_rows.fresh - fresh - appending)     # rows replaced runs: copied instead
        with report.timed("commit"):
            con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        if lake_rows is not None:
            lake_rows.abort()
        shutil.rmtree(staging, ignore_errors=True)
        raise
    # The rows are in: what follows derives from them, and a failure (e.g. out of memory) or a kill leaves
    # its mark for the next open instead of failing an ingest that is committed; the lake is moved in either way.
    try:
        refresh_stale_derived(con, timed=report.timed)
    except duckdb.Error as exc:
        report.notes.append(f"the stored collapsed cells and summaries were not recomputed "
                            f"({str(exc).splitlines()[0]}): the next command that opens the warehouse (or "
                            "`pace doctor`) recomputes them")
    else:
        try:            # the written models' stored predictions: lookups compute them meanwhile
            with report.timed("predictions"):
                stored_predictions.refresh_committed(con)
        except duckdb.Error as exc:
            report.notes.append(f"stored predictions not recomputed ({str(exc).splitlines()[0]}): lookups "
                                "compute them from the view until `pace doctor` or the next fit")
    with report.timed("swap"):
        stamp_lake(con, lake)
        swap_lake(lake, staging, stale, appended=appending)
    if stale:
        con.execute("DELETE FROM lake_pending WHERE benchmark IN (SELECT unnest(?::VARCHAR[]))", [stale])
        record_partitions(con, lake, stale)
    remember_lake(con, lake)
    report.seconds = time.perf_counter() - started
    return report


def _load(con, todo: list[Unit], model_of: dict[str, str], report: IngestReport,
          recorded_at: datetime, tree: str, synthetic: bool, duplicates: str, lake_rows: RowsLakeWriter,
          progress, mapping_of: dict[str, str | None]) -> set[str]:
    """Read, check and insert the files of ``todo`` batch by batch (inside the caller's transaction).
    Returns the benchmarks where file rows replaced rows of runs."""
    # The reader has its own connection (a cursor: the same database, outside this transaction) so the
    # next batch is parsed while this one is inserted.
    reader_con = con.cursor()
    reader = BatchReader(reader_con, [str(u.sf.path) for u in todo], [u.sf.path for u in todo],
                         [u.probe for u in todo], duplicates, parsers=[u.parse for u in todo])
    meta = pa.table({
        "fi": pa.array(range(len(todo)), pa.int32()),
        "path": [u.sf.rel for u in todo],
        "model": [model_of[u.sf.rel] for u in todo],
        "benchmark": [u.sf.benchmark for u in todo],
        "subdir": [u.sf.subdir for u in todo],
        "source": pa.array([u.source for u in todo], pa.string()),
        "scores": pa.array([u.scores for u in todo], pa.bool_()),
    })
    with registered(con, incoming_meta=meta):
        con.execute("CREATE OR REPLACE TEMP TABLE incoming_files AS SELECT * FROM incoming_meta")
    # file fi's rows are source first_id + fi: ids follow the storage order, so a model's rows hold a
    # narrow range of them (see sql/004_score_sources.sql)
    first_id = score_store.next_source_id(con)
    con.execute("""INSERT INTO score_sources
                   SELECT ? + fi, model, benchmark, subdir, 'ingest', path, ? FROM incoming_files""",
                [first_id, recorded_at])
    # A runner row with the same key is superseded by the file (reported, never duplicated); a row
    # another ingested file (of another tree, via an alias) already holds is a conflict.
    runner_keys = con.execute("SELECT count(*) FROM scores WHERE origin = 'runner'").fetchone()[0]
    others = con.execute("""
        SELECT DISTINCT s.path FROM score_files s JOIN incoming_files i USING (benchmark, subdir, model)
        WHERE s.path <> i.path AND i.scores AND s.source IS NOT DISTINCT FROM i.source""").fetchall()
    key_match = """s.model = i.model AND s.benchmark = i.benchmark AND s.subdir = i.subdir
                   AND s.instance_id = i.instance_id"""
    incoming = """SELECT f.model, f.benchmark, f.subdir, r.instance_id, r.score, r.metric_name, f.path AS source_ref
                  FROM batch_rows AS r JOIN incoming_files AS f USING (fi)"""
    info: dict[int, FileRows] = {}
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="read") as ahead:
            try:
                runs_replaced = _insert_batches(con, reader, ahead, incoming, key_match, runner_keys, first_id,
                                                lake_rows, report, progress, info)
            except BaseException:
                reader_con.interrupt()          # Ctrl-C or an error: do not finish parsing the next batch
                raise
    finally:
        reader.close()
        reader_con.close()
    report.files_per_file = len(reader.per_file)
    report.phases["read"] = reader.seconds
    if others:
        clash = con.execute(f"""
            SELECT i.source_ref, s.source_ref, count(*)
            FROM (SELECT * FROM scores WHERE source_ref IN (SELECT unnest(?::VARCHAR[]))) AS s
            JOIN (SELECT * FROM scores WHERE source_ref IN (SELECT path FROM incoming_files)) AS i ON {key_match}
            WHERE s.origin = 'ingest' GROUP BY ALL ORDER BY ALL LIMIT 1""", [[p for (p,) in others]]).fetchone()
        if clash:
            raise IngestError(clash[0], f"{clash[2]} rows have the same model, leaf and ids as rows already "
                              f"ingested from {clash[1]} (another tree); remove one of the two files (check "
                              "model_aliases)")
    files = pa.table({
        "path": meta.column("path"),
        "sha256": [u.probe.sha256 for u in todo],          # known once the bytes were read
        "model": meta.column("model"),
        "file_model": [u.sf.file_model for u in todo],
        "benchmark": meta.column("benchmark"),
        "subdir": meta.column("subdir"),
        "n_rows": pa.array([info[i].n_rows for i in range(len(todo))], pa.int64()),
        "n_duplicates": pa.array([_dups(info[i]) for i in range(len(todo))], pa.int64()),
        "n_null_scores": pa.array([info[i].n_null_scores for i in range(len(todo))], pa.int64()),
        "layout": [info[i].layout for i in range(len(todo))],
        "tree": [tree] * len(todo),
        "synthetic": [synthetic] * len(todo),
        "duplicates": [duplicates if _dups(info[i]) else None for i in range(len(todo))],
        "n_runs": pa.array([info[i].resolved.n_runs if info[i].resolved else 1 for i in range(len(todo))],
                           pa.int32()),
        "run_means": pa.array([(info[i].resolved.run_means or None) if info[i].resolved else None
                               for i in range(len(todo))], pa.list_(pa.float64())),
        "conflicting_ids": pa.array([(info[i].resolved.conflicting_ids or None) if info[i].resolved else None
                                     for i in range(len(todo))], pa.list_(pa.string())),
        "ids_hash": pa.array([info[i].ids_hash for i in range(len(todo))], pa.uint64()),
        "mapping": pa.array([mapping_of.get(u.sf.rel) for u in todo], pa.string()),
        "size": pa.array([None if u.probe.route == "parsed" else u.probe.size for u in todo], pa.int64()),
        "mtime_ns": pa.array([None if u.probe.route == "parsed" else u.probe.mtime_ns for u in todo], pa.int64()),
        "source": meta.column("source"),
    })
    with registered(con, incoming_file_rows=files):
        con.execute("INSERT INTO score_files BY NAME SELECT *, current_localtimestamp() AS ingested_at "
                    "FROM incoming_file_rows")
    con.execute("""
        INSERT INTO benchmarks
        SELECT DISTINCT benchmark, 'source' FROM incoming_files
        WHERE scores AND benchmark NOT IN (SELECT benchmark FROM benchmarks)""")
    return runs_replaced


def _insert_batches(con, reader: BatchReader, ahead: ThreadPoolExecutor, incoming: str, key_match: str,
                    runner_keys: int, first_id: int, lake_rows: RowsLakeWriter, report: IngestReport,
                    progress, info: dict[int, FileRows]) -> set[str]:
    """Insert batch after batch while the reader parses the next one. Returns the benchmarks where
    file rows replaced rows of runs."""
    replaced, where = 0, set()
    todo = batches(list(range(len(reader.probes))), reader.probes)
    pending = ahead.submit(reader.read, todo[0]) if todo else None
    for k, batch in enumerate(todo):
        with report.timed("wait_read"):
            rows, found = pending.result()
        pending = ahead.submit(reader.read, todo[k + 1]) if k + 1 < len(todo) else None
        info.update(found)
        with registered(con, batch_rows=rows):
            if runner_keys:
                hits = dict(con.execute(f"SELECT s.benchmark, count(*) FROM scores s SEMI JOIN ({incoming}) i "
                                        f"ON {key_match} WHERE s.origin = 'runner' GROUP BY 1").fetchall())
                n = sum(hits.values())
                where |= set(hits)
                if n:
                    score_store.execute(con, f"DELETE FROM scores s USING ({incoming}) i "
                                             f"WHERE {key_match} AND s.origin = 'runner'")
                    replaced += n
            with report.timed("insert"):
                # the per-file constants are in score_sources already: four narrow columns per row
                con.execute("INSERT INTO score_rows SELECT ? + fi, instance_id, score, metric_name FROM batch_rows",
                            [first_id])
        with report.timed("wait_lake"):
            lake_rows.add(rows, batch)
        report.rows_written += rows.num_rows
        if progress:
            progress(len(batch))
    if replaced:
        report.rows_removed += replaced
        report.anomalies.append(Anomaly("replaced_rows", report.root,
                                        f"{replaced} rows from other sources (runs) replaced by file rows"))
    return where


def _dups(info: FileRows) -> int:
    return info.resolved.n_duplicates if info.resolved else 0

