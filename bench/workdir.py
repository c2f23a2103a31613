"""A benchmark's work folder: the bench may replace what it wrote there on an earlier run, never anything else.

A folder is the bench's when it is new, empty, or holds the bench's marker file (written on first use).
Anything else (a user's folder given as ``--work`` by mistake, another bench's) is refused before a file is
touched, so the ``shutil.rmtree`` calls a bench makes inside its work folder only reach its own output.
"""
from __future__ import annotations

from pathlib import Path


def claim(work: Path, marker: str) -> Path:
    """``work``, created if needed and marked as ``marker``'s; SystemExit (one line) when it holds files
    this bench did not write."""
    work = Path(work)
    stamp = work / f".{marker}"
    if work.exists() and not work.is_dir():
        raise SystemExit(f"--work {work} is a file: give a new or empty folder")
    if work.is_dir() and any(work.iterdir()) and not stamp.exists():
        raise SystemExit(f"--work {work} holds files this bench did not write: give a new or empty folder")
    work.mkdir(parents=True, exist_ok=True)
    stamp.touch()
    return work
