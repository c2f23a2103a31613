"""Readers for the published reference outputs in ``../shared/reference`` (test-only)."""
from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Dict, List, Tuple

from .published_loader import default_reference_dir

#: folder → --sources (reference README)
REFERENCE_SOURCES: Dict[str, List[str]] = {
    "v1": ["mmmu", "visualpuzzles"],
    "v2": ["planbench", "mmmu", "visualpuzzles"],
    "v3": ["planbench", "repobench", "lifbench", "visualwebbench", "mmmu", "visualpuzzles"],
    "v4": ["planbench", "repobench", "lifbench", "visualwebbench", "mmmu", "visualpuzzles", "ifeval"],
    # every source benchmark in ../pace-results when v5 was produced (the tree holds more now)
    "v5": ["acp_gen", "aime25", "bfcl", "debugbench", "ifeval", "lifbench", "livecodebench", "logiqa",
           "mmmu", "planbench", "repobench", "visualpuzzles", "visualwebbench"],
}

_ROW = re.compile(r"^(\S+)\s+(-?[\d.]+)%\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s*$")
_CFG = re.compile(r'"(\w+)": dict\(m=([\d.]+), nc_h=\s*(\d+), nc_d=\s*(\d+), q=([\d.]+)\)')


def run_dir(folder: str, run: str) -> Path:
    return default_reference_dir() / folder / run


def read_log_table(path: Path) -> Dict[str, Dict[str, float]]:
    """Per-target (and AVERAGE) MAE (score units), Spearman, Pearson, R² of the printed table."""
    out = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        m = _ROW.match(line.strip())
        if m:
            out[m.group(1)] = {"mae": float(m.group(2)) / 100.0, "spearman": float(m.group(3)),
                               "pearson": float(m.group(4)), "r2": float(m.group(5))}
    return out


_SHAPE = re.compile(r"^X: \(\d+, ([\d,]+)\)\s+Valid: ([\d,]+)")


def read_log_shapes(path: Path) -> Dict[str, int]:
    """Source columns the published loader printed before / after the zero-variance filter
    ({"raw", "valid"})."""
    out = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        m = _SHAPE.match(line.strip())
        if m:
            out["raw"], out["valid"] = (int(g.replace(",", "")) for g in m.groups())
    return out


def read_autotune_configs(path: Path) -> Dict[str, Tuple[float, int, int, float]]:
    """target → (m, nc_h, nc_d, q) from the paste-ready block of an auto-tune log."""
    out = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        m = _CFG.search(line)
        if m:
            out[m.group(1)] = (float(m.group(2)), int(m.group(3)), int(m.group(4)), float(m.group(5)))
    return out


def read_predictions(path: Path) -> Dict[Tuple[str, str], Tuple[float, float]]:
    """(model, target) → (predicted, actual)."""
    out = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            out[(r["model"], r["target"])] = (float(r["predicted"]), float(r["actual"]))
    return out


def read_selections(path: Path) -> List[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))
