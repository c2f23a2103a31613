"""Find the score files of a results tree laid out as the Pace project publishes it.

    <root>/<benchmark>/<Model>.csv            one leaf, subdir ''
    <root>/<benchmark>/<subdir>/<Model>.csv   one leaf per subdir

Anything else holding a CSV (a CSV directly in the root, a third level, a benchmark folder with
both CSVs and leaf sub-folders) is an error rather than silently ignored as upstream does.
Files that are not ``*.csv`` (README.md, MANIFEST.tsv, ...) and hidden entries are ignored.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ingest.errors import IngestError


@dataclass(frozen=True)
class ScoreFile:
    path: Path          # on disk
    rel: str            # relative to the root, '/'-separated: the file's identity in score_files
    benchmark: str
    subdir: str         # '' for a one-leaf benchmark
    file_model: str     # the file name's stem, before aliases


def _visible(entries):
    return [e for e in entries if not e.name.startswith(".")]


def _has_csv_below(directory: Path) -> Path | None:
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.endswith(".csv") and not name.startswith("."):
                return Path(dirpath) / name
    return None


def discover(root: str | os.PathLike) -> list[ScoreFile]:
    """All score files under ``root`` in (benchmark, subdir, file name) order.

    Raises :class:`IngestError` when ``root`` is not a directory or a CSV sits at a depth the
    layout does not define.
    """
    root = Path(root)
    if not root.exists():
        raise IngestError(str(root), "no such directory")
    if not root.is_dir():
        raise IngestError(str(root), "not a directory (expected a results tree <benchmark>/[<subdir>/]<Model>.csv)")
    found: list[ScoreFile] = []
    for entry in sorted(_visible(root.iterdir()), key=lambda p: p.name):
        if entry.is_file():
            if entry.suffix == ".csv":
                raise IngestError(str(entry), "a CSV directly in the results root: unknown layout depth "
                                  "(expected <benchmark>/<Model>.csv or <benchmark>/<subdir>/<Model>.csv)")
            continue
        csvs = sorted(p for p in _visible(entry.iterdir()) if p.is_file() and p.suffix == ".csv")
        subdirs = sorted((p for p in _visible(entry.iterdir()) if p.is_dir()), key=lambda p: p.name)
        if csvs:
            for sub in subdirs:
                stray = _has_csv_below(sub)
                if stray:
                    raise IngestError(str(stray), f"benchmark folder {entry.name}/ has both its own CSVs and "
                                      "CSVs in sub-folders: unknown layout depth")
            found += [ScoreFile(p, f"{entry.name}/{p.name}", entry.name, "", p.stem) for p in csvs]
            continue
        for sub in subdirs:
            leaf_csvs = sorted(p for p in _visible(sub.iterdir()) if p.is_file() and p.suffix == ".csv")
            for deeper in sorted(p for p in _visible(sub.iterdir()) if p.is_dir()):
                stray = _has_csv_below(deeper)
                if stray:
                    raise IngestError(str(stray), "CSV three or more levels below the results root: unknown "
                                      "layout depth (expected <benchmark>/<subdir>/<Model>.csv at most)")
            found += [ScoreFile(p, f"{entry.name}/{sub.name}/{p.name}", entry.name, sub.name, p.stem)
                      for p in leaf_csvs]
    return found


def tree_identity(root: str | os.PathLike) -> str:
    """How score_files remembers a tree: its absolute, symlink-free folder."""
    return str(Path(root).resolve())


#: a line of the README that ``pace demo-data`` writes at the root of every synthetic tree
_SYNTHETIC_LINES = ("SYNTHETIC:", "# SYNTHETIC ")


def is_synthetic_tree(root: str | os.PathLike) -> bool:
    """True when ``root/README.md`` carries the SYNTHETIC marker of ``ingest.synthetic``."""
    readme = Path(root) / "README.md"
    if not readme.is_file():
        return False
    lines = readme.read_text(encoding="utf-8", errors="replace").splitlines()
    return any(line.startswith(_SYNTHETIC_LINES) for line in lines)
