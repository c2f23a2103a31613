"""``pace import lm-eval|inspect``: a harness's own per-sample output -> score rows, through the same
machinery as ``pace ingest`` (:func:`ingest.load.load_units`), so an import is idempotent (the sha256
of each file, plus the map entry applied), all or nothing, reports its anomalies, keeps the lake
equal to ``scores`` and records its provenance in ``score_files``.

Each (file, leaf) pair is one ``score_files`` row with the path ``<file>#<benchmark>[/<subdir>]``
relative to PATH, the tree PATH itself (a folder, or a single file), the layout
('lm-eval samples' / 'inspect log') and the map entry as JSON (``mapping``).
"""
from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

import duckdb

from ingest import eee, helm, inspect_log, lm_eval
from ingest.errors import IngestError
from ingest.harness_map import KINDS, load_map, no_map
from ingest.load import Unit, check_duplicates_policy, load_units
from ingest.report import IngestReport
from ingest.tree import ScoreFile, tree_identity

READERS = {"lm-eval": lm_eval, "inspect": inspect_log, "helm": helm, "eee": eee}
#: formats whose files carry enough to be imported without a map (Every Eval Ever written by pace)
MAP_OPTIONAL = ("eee",)


def unit_path(rel: str, benchmark: str, subdir: str) -> str:
    """The ``score_files.path`` of one leaf of one harness file."""
    return f"{rel}#{benchmark}" + (f"/{subdir}" if subdir else "")


def import_results(con: duckdb.DuckDBPyConnection, kind: str, path: str | os.PathLike,
                   map_path: str | os.PathLike | None,
                   *, model: str | None = None, lake: str | os.PathLike | None = None, prune: bool = False,
                   strict: bool = False, duplicates: str = "first", progress=None) -> IngestReport:
    """Import the harness output at ``path`` (a file or a folder) with the map at ``map_path``."""
    units, report = read_results(kind, path, map_path, model=model, duplicates=duplicates, progress=progress)
    return load_units(con, units, report, lake, prune=prune, strict=strict, duplicates=duplicates)


def read_results(kind: str, path: str | os.PathLike, map_path: str | os.PathLike | None, *, model: str | None = None,
                 duplicates: str = "first", progress=None) -> tuple[list[Unit], IngestReport]:
    """Read and check every file at ``path`` with the map, touching no warehouse: the units to store
    and the report so far (the reader's anomalies and notes). Any bad input raises here."""
    if kind not in KINDS:
        raise IngestError(str(path), f"unknown format {kind!r} (known: {', '.join(KINDS)})")
    check_duplicates_policy(duplicates, str(path))
    started = time.perf_counter()
    root = Path(path)
    reader = READERS[kind]
    if map_path is None and kind not in MAP_OPTIONAL:
        raise IngestError(str(path), f"`pace import {kind}` needs --map (a TOML file naming each task's leaf)")
    hmap = no_map(kind) if map_path is None else load_map(map_path, kind)
    files = reader.discover(root)
    base = root if root.is_dir() else root.parent
    units: list[Unit] = []
    report = IngestReport(root=str(root), source=reader.LAYOUT, tree=tree_identity(root), synthetic=False)
    skipped: Counter = Counter()
    used = set()
    for f in files:
        got = reader.read(f, hmap, model, duplicates)
        if progress:
            progress(1)
        report.notes += got.notes
        if got.entry is None and not got.entries:
            skipped[got.task] += 1
            continue
        used.update(e.task for e in [got.entry, *got.entries.values()] if e is not None)
        rel = f.relative_to(base).as_posix()
        report.anomalies += got.anomalies
        for leaf, parsed in got.leaves:
            sf = ScoreFile(path=f, rel=unit_path(rel, leaf.benchmark, leaf.subdir), benchmark=leaf.benchmark,
                           subdir=leaf.subdir, file_model=got.model)
            entry = got.entries.get(leaf, got.entry)
            units.append(Unit(sf, got.sha256, (lambda p=parsed: p), mapping=entry.mapping(kind, leaf)))
    if not units and not hmap.tasks:
        raise IngestError(str(root), f"none of the {len(files)} file(s) holds per-instance results to import "
                          f"({', '.join(sorted(skipped)) or 'none'})")
    if not units:
        found = ", ".join(sorted(skipped)) or "none"
        raise IngestError(str(root), f"none of the {len(files)} file(s) is of a task in {hmap.path} (tasks found: "
                          f"{found}; tasks in the map: {', '.join(sorted(hmap.tasks))})")
    if skipped:
        report.notes.append("skipped (task not in the map): "
                            + ", ".join(f"{t} ({n} file{'s' * (n > 1)})" for t, n in sorted(skipped.items())))
    unused = sorted(set(hmap.tasks) - used)
    if unused:
        report.notes.append(f"map tasks with no file here: {', '.join(unused)}")
    report.files = len(units)
    report.seconds = time.perf_counter() - started
    return units, report
