"""Find the score files of a results tree laid out as the Pace project publishes it.

    <root>/<benchmark>/<Model>.csv            one leaf, subdir ''
    <root>/<benchmark>/<subdir>/<Model>.csv   one leaf per subdir

Anything else holding a CSV (a CSV directly in the root, a third level, a benchmark folder with
both CSVs and leaf sub-folders) is an error rather than silently ignored as upstream does.
Hidden entries and files at the root that are not CSVs (README.md, MANIFEST.tsv) are ignored. Every
other entry left out is listed (``skipped``; ingest reports each as a ``skipped_path`` anomaly): a
folder named like a score file (``X.csv/``), a file that is not a CSV inside a benchmark, a folder
below a leaf, and a symlink that leads out of the tree, to a folder above it (a loop) or nowhere:
symlinks are followed only to places inside the tree, so the walk never leaves it and always ends.
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


class _Walk:
    """Directory listings that never leave ``top`` (the tree's resolved root), with what they left out."""

    def __init__(self, root: Path):
        self.root, self.top = root, root.resolve()
        self.skipped: list[tuple[str, str]] = []

    def skip(self, path: Path, why: str) -> None:
        self.skipped.append((path.relative_to(self.root).as_posix(), why))

    def entries(self, directory: Path) -> list[Path]:
        """The visible entries of ``directory`` in name order, symlinks that leave the tree or loop left out."""
        out = []
        for entry in sorted(_visible(directory.iterdir()), key=lambda p: p.name):
            if entry.is_symlink():
                try:
                    target = entry.resolve(strict=True)
                except (OSError, RuntimeError):          # a loop of links (RuntimeError before 3.13) or dangling
                    self.skip(entry, "a symlink that loops or points nowhere: not followed")
                    continue
                if not target.is_relative_to(self.top):
                    self.skip(entry, "a symlink out of the tree: not followed")
                    continue
                if target.is_dir() and entry.parent.resolve().is_relative_to(target):
                    self.skip(entry, "a symlink to a folder above it (a loop): not followed")
                    continue
            out.append(entry)
        return out

    def split(self, directory: Path) -> tuple[list[Path], list[Path]]:
        """(score files, sub-folders) of ``directory``; anything else there is listed as skipped."""
        csvs, folders = [], []
        for entry in self.entries(directory):
            if entry.is_dir():
                if entry.suffix == ".csv":
                    self.skip(entry, "a folder named like a score file")
                else:
                    folders.append(entry)
            elif entry.is_file() and entry.suffix == ".csv":
                csvs.append(entry)
            else:
                self.skip(entry, "not a score file (<Model>.csv)")
        return csvs, folders


def _has_csv_below(directory: Path) -> Path | None:
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.endswith(".csv") and not name.startswith("."):
                return Path(dirpath) / name
    return None


def discover(root: str | os.PathLike, skipped: list[tuple[str, str]] | None = None) -> list[ScoreFile]:
    """All score files under ``root`` in (benchmark, subdir, file name) order. ``skipped``, when given,
    receives (path relative to ``root``, why) of every entry left out (see the module docstring).

    Raises :class:`IngestError` when ``root`` is not a directory or a CSV sits at a depth the
    layout does not define.
    """
    root = Path(root)
    if not root.exists():
        raise IngestError(str(root), "no such directory")
    if not root.is_dir():
        raise IngestError(str(root), "not a directory (expected a results tree <benchmark>/[<subdir>/]<Model>.csv)")
    walk = _Walk(root)
    found: list[ScoreFile] = []
    for entry in walk.entries(root):
        if not entry.is_dir():
            if entry.suffix == ".csv":
                raise IngestError(str(entry), "a CSV directly in the results root: unknown layout depth "
                                  "(expected <benchmark>/<Model>.csv or <benchmark>/<subdir>/<Model>.csv)")
            continue
        csvs, subdirs = walk.split(entry)
        if csvs:
            for sub in subdirs:
                stray = _has_csv_below(sub)
                if stray:
                    raise IngestError(str(stray), f"benchmark folder {entry.name}/ has both its own CSVs and "
                                      "CSVs in sub-folders: unknown layout depth")
                walk.skip(sub, "a folder beside score files (no score files in it)")
            found += [ScoreFile(p, f"{entry.name}/{p.name}", entry.name, "", p.stem) for p in csvs]
            continue
        for sub in subdirs:
            leaf_csvs, deeper = walk.split(sub)
            for folder in deeper:
                stray = _has_csv_below(folder)
                if stray:
                    raise IngestError(str(stray), "CSV three or more levels below the results root: unknown "
                                      "layout depth (expected <benchmark>/<subdir>/<Model>.csv at most)")
                walk.skip(folder, "a folder below a leaf (no score files in it)")
            found += [ScoreFile(p, f"{entry.name}/{sub.name}/{p.name}", entry.name, sub.name, p.stem)
                      for p in leaf_csvs]
    if skipped is not None:
        skipped += walk.skipped
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
