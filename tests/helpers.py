"""Small helpers shared by tests."""
from __future__ import annotations

from pathlib import Path


def write_csv(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    return path
