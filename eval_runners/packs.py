"""Instance packs: versioned JSONL files, one record per call unit, imported into ``instances``.

Record (one JSON object per line)::

    {"format": "pace-pack/1", "pack": "aime25", "pack_version": "2025.1",
     "benchmark": "aime25", "subdir": "", "instance_id": "0",
     "messages": [{"role": "user", "content": "..."}],            # image parts by reference:
         # {"type": "image_ref", "path": "images/x.png", "sha256": "<hex>"}  (relative to the pack)
     "reference": {...}, "grader": "exact_number", "grader_config": {},
     "generation": {"max_tokens": 32768},
     "content_hash": "<sha256 of the canonical record without content_hash>"}

``subdir``/``instance_id`` are the registry's *call key* (see ``registry.py``). Builders turn a
local copy of a benchmark's public dataset rows (JSONL / JSON / CSV / Parquet) into a pack; nothing
is downloaded, at build time or at run time.
"""
from __future__ import annotations

import base64
import hashlib
import json
import mimetypes
import random
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

from eval_runners.client import canonical_json

FORMAT = "pace-pack/1"
RECORD_FIELDS = ("format", "pack", "pack_version", "benchmark", "subdir", "instance_id", "messages",
                 "reference", "grader", "grader_config", "generation")


class PackError(ValueError):
    pass


def content_hash(record: dict) -> str:
    body = {k: record.get(k) for k in RECORD_FIELDS if k not in ("format",)}
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


def make_record(pack: str, version: str, benchmark: str, subdir: str, instance_id: str,
                messages: list, reference: dict, grader: str, grader_config: dict | None = None,
                generation: dict | None = None) -> dict:
    rec = {"format": FORMAT, "pack": pack, "pack_version": version, "benchmark": benchmark,
           "subdir": subdir, "instance_id": str(instance_id), "messages": messages,
           "reference": reference, "grader": grader, "grader_config": grader_config or {},
           "generation": generation or {}}
    rec["content_hash"] = content_hash(rec)
    return rec


def write_pack(path: str | Path, records: Iterable[dict]) -> int:
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    n = 0
    with open(tmp, "w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n")
            n += 1
    tmp.replace(path)                      # atomic
    return n


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def image_ref(path: str | Path, root: str | Path) -> dict:
    """An image message part by reference (path relative to the pack + sha256)."""
    p = Path(path)
    return {"type": "image_ref", "path": str(p.relative_to(root)) if p.is_absolute() else str(p),
            "sha256": file_sha256(Path(root) / p if not p.is_absolute() else p)}


def read_pack(path: str | Path) -> list[dict]:
    out = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as exc:
                raise PackError(f"{path}:{lineno}: not JSON ({exc})") from None
            missing = [k for k in ("benchmark", "instance_id", "messages", "grader", "content_hash")
                       if k not in rec]
            if missing:
                raise PackError(f"{path}:{lineno}: record lacks {missing}")
            if rec.get("format", FORMAT) != FORMAT:
                raise PackError(f"{path}:{lineno}: unknown pack format {rec.get('format')!r}")
            if content_hash(rec) != rec["content_hash"]:
                raise PackError(f"{path}:{lineno}: content_hash does not match the record")
            out.append(rec)
    return out


def _image_parts(messages: list) -> Iterable[dict]:
    for m in messages:
        if isinstance(m.get("content"), list):
            for part in m["content"]:
                if isinstance(part, dict) and part.get("type") == "image_ref":
                    yield part


def import_pack(con, path: str | Path) -> dict:
    """Load a pack into ``instances`` (idempotent: an unchanged record is a no-op). Returns counts."""
    path = Path(path)
    records = read_pack(path)
    root = str(path.resolve().parent)
    for rec in records:
        for part in _image_parts(rec["messages"]):
            img = Path(root) / part["path"]
            if not img.is_file():
                raise PackError(f"{path}: image {part['path']} of {rec['benchmark']}/{rec['instance_id']} is missing")
            if file_sha256(img) != part["sha256"]:
                raise PackError(f"{path}: image {part['path']} does not match its sha256")
    existing = {(b, s, i): h for b, s, i, h in con.execute(
        "SELECT benchmark, subdir, instance_id, content_hash FROM instances").fetchall()}
    counts = {"new": 0, "updated": 0, "unchanged": 0}
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    rows = []
    for rec in records:
        key = (rec["benchmark"], rec.get("subdir") or "", str(rec["instance_id"]))
        old = existing.get(key)
        if old == rec["content_hash"]:
            counts["unchanged"] += 1
            continue
        counts["updated" if old else "new"] += 1
        rows.append([*key, rec.get("pack") or path.stem, str(rec.get("pack_version") or ""),
                     json.dumps(rec["messages"], ensure_ascii=False),
                     json.dumps(rec.get("reference"), ensure_ascii=False),
                     rec["grader"], json.dumps(rec.get("grader_config") or {}),
                     json.dumps(rec.get("generation") or {}), root, rec["content_hash"], now])
    if rows:
        con.execute("BEGIN")
        try:
            con.executemany("INSERT OR REPLACE INTO instances VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
    return counts


def resolve_messages(messages: list, asset_root: str | None) -> list:
    """Turn image references into data URLs (hash checked); text is left as is."""
    out = []
    for m in messages:
        if not isinstance(m.get("content"), list):
            out.append(m)
            continue
        parts = []
        for part in m["content"]:
            if isinstance(part, dict) and part.get("type") == "image_ref":
                img = Path(asset_root or ".") / part["path"]
                data = img.read_bytes()
                if hashlib.sha256(data).hexdigest() != part["sha256"]:
                    raise PackError(f"image {img} changed since the pack was built (sha256 mismatch)")
                mime = mimetypes.guess_type(img.name)[0] or "image/png"
                parts.append({"type": "image_url", "image_url": {
                    "url": f"data:{mime};base64,{base64.b64encode(data).decode()}"}})
            else:
                parts.append(part)
        out.append({**m, "content": parts})
    return out


def estimate_prompt_tokens(messages: list) -> int:
    """Rough upper-leaning estimate: ~3.5 characters per token, +4 per message, 1000 per image."""
    n = 0
    for m in messages:
        n += 4
        c = m.get("content")
        if isinstance(c, str):
            n += int(len(c) / 3.5) + 1
        elif isinstance(c, list):
            for part in c:
                if part.get("type") in ("image_ref", "image_url"):
                    n += 1000
                else:
                    n += int(len(part.get("text", "")) / 3.5) + 1
    return n


def shuffled_choices(key: str, correct: str, wrong: list[str]) -> tuple[list[str], str]:
    """Deterministic choice order from the instance key (gold position not always A)."""
    opts = [correct] + list(wrong)
    rng = random.Random(hashlib.sha256(key.encode()).hexdigest())
    rng.shuffle(opts)
    return opts, "ABCDEFGHIJ"[opts.index(correct)]
