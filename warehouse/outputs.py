"""Folders that commands write result files into (``pace export``, ``--out`` of loocv / sweep / demo)
without ever deleting or overwriting a file they did not write.

Each such folder holds a manifest, ``.pace-outputs.json``: per *group* of outputs (``export``,
``loocv-abs``, ``sweep``, ...) the files the last run of that group wrote, with their sha256. A new
run of the group

* builds all its files in a staging folder inside the target folder first (a failure leaves the
  folder as it was);
* refuses, before touching anything, when one of its file names is taken by a file that is not
  recorded as its own, or that was changed since it was written;
* then moves its files into place, and deletes the group's previous files that it did not rewrite
  (e.g. the plot of a target no longer evaluated), only if they are still byte-identical to what
  was written, so no stale output is left looking current.

A run holds a lock on ``.pace-staging-<id>.lock`` beside its staging folder for as long as it lives
(``flock``: the system drops it when the process ends, even by ``kill -9``). The next run into the
folder removes the staging folders whose lock is free, i.e. whose run was killed, and never one of a
run still going.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Iterator

from warehouse.errors import UserError

try:
    import fcntl
except ImportError:              # not on a POSIX system: leftover staging folders stay (and are ignored)
    fcntl = None

MANIFEST = ".pace-outputs.json"
STAGING_PREFIX = ".pace-staging-"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_manifest(folder: Path) -> dict:
    path = folder / MANIFEST
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise UserError(f"{path} is not a readable pace manifest: move it away or choose another folder") from None
    return data if isinstance(data, dict) else {}


def owned_files(folder: Path, group: str | None = None) -> dict[str, str]:
    """rel path -> sha256 of the files recorded (for ``group``, or for every group)."""
    manifest = read_manifest(folder)
    groups = [group] if group else list(manifest)
    out: dict[str, str] = {}
    for g in groups:
        out.update(manifest.get(g, {}).get("files", {}))
    return out


def _is_ours(folder: Path, rel: str, recorded: dict[str, str]) -> bool:
    path = folder / rel
    return rel in recorded and path.is_file() and _sha256(path) == recorded[rel]


def require_folder(folder: Path) -> None:
    """``folder`` is a folder, or can be made one: nothing on its path is a file (a one-line error)."""
    for path in (folder, *folder.parents):
        if path.exists():
            if not path.is_dir():
                raise UserError(f"{folder} exists and is not a folder" if path == folder else
                                f"{folder} cannot be made a folder: {path} is a file")
            return


def _visible_entries(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name != MANIFEST] if folder.is_dir() else []


@contextmanager
def output_run(folder: Path, group: str, *, note: str = "") -> Iterator[Path]:
    """Yield a staging folder; files written into it replace the group's outputs in ``folder`` on a
    clean exit (see the module doc). Nothing in ``folder`` changes if the body raises."""
    folder = Path(folder)
    require_folder(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with staging_run(folder) as staging:
        yield staging
        commit(folder, staging, group, note=note)


@contextmanager
def staging_run(folder: Path) -> Iterator[Path]:
    """A new staging folder in ``folder``, locked for this run (see the module doc), removed at the
    end; staging folders of killed runs are removed first."""
    remove_dead_staging(folder)
    staging = folder / f"{STAGING_PREFIX}{uuid.uuid4().hex[:8]}"
    lock = _locked(staging)
    staging.mkdir()
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        _lock_path(staging).unlink(missing_ok=True)
        if lock is not None:
            lock.close()


def _lock_path(staging: Path) -> Path:
    return staging.with_name(staging.name + ".lock")


def _locked(staging: Path):
    """The open lock file of ``staging``, locked before it appears under its name (so a lock file
    that can be seen is always held while its run lives)."""
    if fcntl is None:
        return None
    tmp = staging.with_name(staging.name + ".lock.tmp")
    handle = tmp.open("w")
    fcntl.flock(handle, fcntl.LOCK_EX)
    os.replace(tmp, _lock_path(staging))
    return handle


def remove_dead_staging(folder: Path) -> list[Path]:
    """Remove the staging folders in ``folder`` whose run was killed (their lock is free)."""
    removed = []
    if fcntl is None or not folder.is_dir():
        return removed
    for lock_path in sorted(folder.glob(f"{STAGING_PREFIX}*.lock")):
        try:
            handle = lock_path.open("a")
        except OSError:
            continue
        with handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue                        # its run is alive
            staging = lock_path.with_name(lock_path.name[: -len(".lock")])
            shutil.rmtree(staging, ignore_errors=True)
            lock_path.unlink(missing_ok=True)
            removed.append(staging)
    return removed


def check_names(folder: Path, group: str, names: list[str]) -> None:
    """Refuse if one of ``names`` is taken in ``folder`` by a file that is not this group's own."""
    recorded = owned_files(folder, group)
    for rel in names:
        target = folder / rel
        if target.exists() and not _is_ours(folder, rel, recorded):
            why = "was changed since pace wrote it" if rel in recorded else "was not written by this command"
            raise UserError(f"{target} exists and {why}: refusing to overwrite it; move it away or choose "
                            "another output folder")


def commit(folder: Path, staging: Path, group: str, *, note: str = "") -> list[str]:
    """Move the staged files into ``folder`` (see the module doc); returns their rel paths."""
    new = sorted(str(p.relative_to(staging)).replace(os.sep, "/") for p in staging.rglob("*") if p.is_file())
    check_names(folder, group, new)
    manifest = read_manifest(folder)
    previous = manifest.get(group, {}).get("files", {})
    stale = [rel for rel in previous if rel not in new and _is_ours(folder, rel, previous)]
    files = {}
    for rel in new:
        files[rel] = _sha256(staging / rel)
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / rel, target)
    for rel in stale:
        (folder / rel).unlink()
        _prune_empty_dirs(folder, (folder / rel).parent)
    manifest[group] = {"written_at": datetime.now().isoformat(timespec="seconds"), "note": note, "files": files}
    tmp = folder / f"{MANIFEST}.tmp"
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, folder / MANIFEST)
    return new


def _prune_empty_dirs(folder: Path, start: Path) -> None:
    """Remove folders left empty by deleting our files, up to (not including) ``folder``."""
    here = start
    while here != folder and folder in here.parents:
        try:
            here.rmdir()
        except OSError:
            return
        here = here.parent


def require_empty_or_ours(folder: Path, group: str, overwrite: bool) -> None:
    """For commands that want a folder of their own (``pace export``): a missing or empty folder is
    fine; a non-empty one needs ``overwrite``, and even then only the group's own files are replaced."""
    require_folder(folder)
    entries = _visible_entries(folder) if folder.exists() else []
    entries = [p for p in entries if not p.name.startswith(STAGING_PREFIX)]
    if entries and not overwrite:
        recorded = owned_files(folder, group)
        kind = "an earlier export" if recorded else "files this command did not write"
        raise UserError(f"{folder} is not empty (it holds {kind}, e.g. {entries[0].name}): pass --overwrite to "
                        f"replace only what an earlier `pace {group}` wrote there, or choose a new folder")
