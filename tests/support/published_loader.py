"""Test-only oracle: load a ``standardized_results`` tree with the PUBLISHED semantics.

Implements spec ``pace-method.md`` §1–§2 (leaf discovery, reading, union of ids
sorted as strings, first duplicate kept, NaN → 0, float32 storage, targets in
alphabetical order, ``--sources`` filter, zero-variance filter on all n rows).
I/O is allowed here (this module is NOT part of ``models/``).

The warehouse builds the same matrices from SQL and is tested against this.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

MODELS: Tuple[str, ...] = (
    "Claude-4.5-Opus",
    "Claude-4.5-Sonnet",
    "Claude-4.6-Opus",
    "DeepSeek-V3.2",
    "GLM-4.7",
    "GPT-5.2",
    "GPT-5.2-Codex",
    "Gemini-3-Flash-Preview",
    "Gemini-3-Pro-Preview",
    "Kimi-K2",
    "Kimi-K2.5",
    "MiniMax-M2.1",
    "MiniMax-M2.5",
    "Qwen3-Coder-480B-A35B-Instruct",
)
TARGETS: Tuple[str, ...] = ("gaia", "swebench", "swebench_multimodal", "swtbench")
EXCLUDE: Tuple[str, ...] = ("commit0", "swebench_bash_only")


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def default_results_dir() -> Path:
    """``<repo>/../shared/pace-results/standardized_results`` (may not exist)."""
    return repo_root() / ".." / "shared" / "pace-results" / "standardized_results"


def default_reference_dir() -> Path:
    return repo_root() / ".." / "shared" / "reference"


@dataclass
class PublishedData:
    """Matrices as the published pipeline builds them.

    X: (n, S) float64 source scores after the zero-variance filter (values are
       float32-representable). col_meta[s] = (benchmark, subdir, instance_id).
    P: target -> (n, N_t) float32 per-instance target scores.
    Y: (n, T) float32 target means (row means of P_t computed in float32),
       target order = ``targets`` (alphabetical).
    X_raw_cols: number of source columns before the filter.
    """

    X: np.ndarray
    col_meta: List[Tuple[str, str, str]]
    P: Dict[str, np.ndarray]
    Y: np.ndarray
    models: List[str]
    targets: List[str]
    X_raw_cols: int = 0
    leaves: List[Tuple[str, str]] = field(default_factory=list)


def _has_csv(d: Path) -> bool:
    return any(p.is_file() and p.suffix == ".csv" for p in d.iterdir())


def discover_leaves(base: Path) -> List[Tuple[str, str, Path]]:
    """§2.1: (benchmark, subdir, path) in sorted order, two levels only."""
    leaves = []
    for d in sorted(base.iterdir(), key=lambda p: p.name):
        if not d.is_dir():
            continue
        if _has_csv(d):
            leaves.append((d.name, "", d))
            continue
        for sd in sorted(d.iterdir(), key=lambda p: p.name):
            if sd.is_dir() and _has_csv(sd):
                leaves.append((d.name, sd.name, sd))
    return leaves


def _to_float(s: Optional[str]) -> float:
    if s is None:
        return 0.0
    try:
        v = float(s.strip())
    except (ValueError, AttributeError):
        return 0.0
    return 0.0 if math.isnan(v) else v


def read_leaf(path: Path, models: Sequence[str]) -> Tuple[List[str], np.ndarray]:
    """§2.2: returns (sorted-as-strings union of ids, n × #ids float32 matrix)."""
    per_model: List[Optional[Dict[str, float]]] = []
    for m in models:
        f = path / f"{m}.csv"
        if not f.is_file():
            per_model.append(None)
            continue
        with open(f, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        if not rows:
            per_model.append({})
            continue
        header = rows[0]
        if "metric_name" not in header:
            ids = [r[header.index("id")] for r in rows[1:] if r]
            if ids and all(_is_number(i) for i in ids):
                # published legacy swap branch crashes (spec §2.2 / §18.5)
                raise KeyError("id")
        i_id, i_sc = header.index("id"), header.index("score")
        d: Dict[str, float] = {}
        for r in rows[1:]:
            if not r:
                continue
            k = r[i_id]
            if k in d:  # keep first duplicate
                continue
            d[k] = _to_float(r[i_sc] if i_sc < len(r) else None)
        per_model.append(d)
    ids = sorted(set().union(*[set(d) for d in per_model if d is not None]))
    M = np.zeros((len(models), len(ids)), dtype=np.float32)
    pos = {k: j for j, k in enumerate(ids)}
    for i, d in enumerate(per_model):
        if not d:
            continue
        for k, v in d.items():
            M[i, pos[k]] = v
    return ids, M


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def load_published(
    base: Optional[Path] = None,
    sources: Optional[Sequence[str]] = None,
    targets: Optional[Sequence[str]] = None,
    models: Sequence[str] = MODELS,
) -> PublishedData:
    """§2: build X_v (filtered), col_meta, P, Y exactly as the published loader."""
    base = Path(base) if base is not None else default_results_dir()
    tgts = sorted(targets) if targets is not None else sorted(TARGETS)
    exclude = set(EXCLUDE) - set(tgts)
    if sources is not None and set(sources) & set(tgts):
        raise ValueError("dataset named both as source and target")
    src_blocks, meta, leaves_used = [], [], []
    tgt_blocks: Dict[str, List[np.ndarray]] = {t: [] for t in tgts}
    for bench, sub, path in discover_leaves(base):
        if bench in exclude:
            continue
        is_target = bench in tgts
        if not is_target and sources is not None and bench not in sources:
            continue
        ids, M = read_leaf(path, models)
        if not ids:
            continue
        leaves_used.append((bench, sub))
        if is_target:
            tgt_blocks[bench].append(M)
        else:
            src_blocks.append(M)
            meta.extend((bench, sub, i) for i in ids)
    n = len(models)
    X32 = np.concatenate(src_blocks, axis=1) if src_blocks else np.zeros((n, 0), np.float32)
    P: Dict[str, np.ndarray] = {}
    Y = np.zeros((n, len(tgts)), dtype=np.float32)
    for t_i, t in enumerate(tgts):
        if tgt_blocks[t]:
            P[t] = np.concatenate(tgt_blocks[t], axis=1).astype(np.float32)
            Y[:, t_i] = P[t].mean(axis=1)
        else:
            P[t] = np.zeros((n, 0), dtype=np.float32)
    keep = X32.var(axis=0) > 1e-10
    X = X32[:, keep].astype(np.float64)
    meta_f = [m for m, k in zip(meta, keep) if k]
    return PublishedData(X=X, col_meta=meta_f, P=P, Y=Y, models=list(models),
                         targets=list(tgts), X_raw_cols=X32.shape[1], leaves=leaves_used)
