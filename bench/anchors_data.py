"""STOP-GAP loader of the agentic per-instance results for bench/anchors.py, until `pace import openhands-index`
lands: then `load_targets` becomes one warehouse query (scores of the target benchmarks joined with
instance_costs and model_metadata) and this file goes.

Sources of truth (say so wherever figures are reported):
- the OpenHands Index copy (``<shared>/openhands-index/results/<Model>/instance_results/<bench>.json``), the
  OpenHands agent only (``alternative_agents`` is not read), every model with instance results (``Minimax-2.7``
  has none: skipped as a second spelling of MiniMax-M2.7); ``resolved: null`` counts as missing, not as 0;
- for the 14 Pace models the Pace files (``<shared>/pace-results/standardized_results/<target>/<Model>.csv``)
  are the truth on gaia, swebench, swebench_multimodal and swtbench (``prefer="pace"``, the default the issue
  fixes for the importer; Kimi-K2 is only there); ``prefer="openhands"`` takes the OpenHands runs instead
  where both exist (the two differ: Pace drops errored instances, and Claude-4.5-Sonnet's gaia and
  Claude-4.6-Opus's swebench are other runs). commit0 comes from the OpenHands Index alone;
- costs (USD per instance) always from the OpenHands Index (the model's own run), NaN where null or absent.
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ingest.openhands_index import BENCHMARKS, KNOWN_SPELLINGS

TARGETS = ["gaia", "swebench", "swebench_multimodal", "swtbench", "commit0"]
OPENHANDS_FILES = {bench: name for name, bench in BENCHMARKS.items()}     # warehouse name -> index file stem
# the OpenHands Index README's name map: its spelling -> the Pace (warehouse) name
SAME_MODEL = KNOWN_SPELLINGS
SECOND_SPELLINGS = {"Minimax-2.7"}
PACE_FILE_NAMES = {"DeepSeek-V3.2": ["DeepSeek-V3.2", "DeepSeek-V3.2-Reasoner"]}


@dataclass
class TargetResults:
    """One target's 0/1 results: ``y`` (m, n) in {0, 1}, NaN where the model has no result for the instance;
    ``cost`` (m, n) USD of that model's run of the instance, NaN where unknown."""
    target: str
    models: list[str]
    instances: list[str]
    y: np.ndarray
    cost: np.ndarray
    truth_source: dict[str, str] = field(default_factory=dict)   # model -> 'pace' | 'openhands'


@dataclass
class AgenticData:
    targets: dict[str, TargetResults]
    metadata: dict[str, dict]          # model -> the OpenHands metadata.json (absent for Kimi-K2)
    pace_models: list[str]             # the models with Pace files (they have source-benchmark scores)


def _openhands(shared: Path) -> tuple[dict, dict]:
    """{target: {model: {instance: (resolved 0/1 or None, cost or None)}}}, {model: metadata}."""
    root = shared / "openhands-index" / "results"
    runs: dict[str, dict] = {t: {} for t in TARGETS}
    meta = {}
    for model_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        if model_dir.name in SECOND_SPELLINGS or not (model_dir / "instance_results").is_dir():
            continue
        name = SAME_MODEL.get(model_dir.name, model_dir.name)
        meta[name] = json.loads((model_dir / "metadata.json").read_text())
        for target, stem in OPENHANDS_FILES.items():
            path = model_dir / "instance_results" / f"{stem}.json"
            if path.is_file():
                rows = json.loads(path.read_text())
                runs[target][name] = {i: (None if r.get("resolved") is None else float(bool(r["resolved"])),
                                          r.get("cost")) for i, r in rows.items()}
    return runs, meta


def _pace(shared: Path) -> dict:
    """{target: {model: {instance: score}}} from the Pace files of the four Pace targets."""
    root = shared / "pace-results" / "standardized_results"
    out: dict[str, dict] = {}
    for target in TARGETS[:4]:
        out[target] = {}
        for path in sorted((root / target).glob("*.csv")):
            name = next((k for k, v in PACE_FILE_NAMES.items() if path.stem in v), path.stem)
            with path.open(newline="") as handle:
                out[target][name] = {r["id"]: float(r["score"]) for r in csv.DictReader(handle)}
    return out


def load_targets(shared: Path, prefer: str = "pace") -> AgenticData:
    """The stop-gap: every target's (model x instance) 0/1 results and costs, read from the files."""
    if prefer not in ("pace", "openhands"):
        raise ValueError(f"prefer must be 'pace' or 'openhands', not {prefer!r}")
    runs, meta = _openhands(shared)
    pace = _pace(shared)
    pace_models = sorted({m for per in pace.values() for m in per})
    targets = {}
    for target in TARGETS:
        models = sorted(set(runs[target]) | set(pace.get(target, {})))
        truth: dict[str, dict] = {}
        source = {}
        for model in models:
            in_pace = model in pace.get(target, {})
            use_pace = in_pace and (prefer == "pace" or model not in runs[target])
            if use_pace:
                truth[model], source[model] = pace[target][model], "pace"
            else:
                truth[model] = {i: v for i, (v, _) in runs[target][model].items() if v is not None}
                source[model] = "openhands"
        instances = sorted({i for per in truth.values() for i in per})
        col = {i: k for k, i in enumerate(instances)}
        y = np.full((len(models), len(instances)), np.nan)
        cost = np.full_like(y, np.nan)
        for r, model in enumerate(models):
            for i, v in truth[model].items():
                y[r, col[i]] = v
            for i, (_, c) in runs[target].get(model, {}).items():
                if c is not None and i in col:
                    cost[r, col[i]] = float(c)
        targets[target] = TargetResults(target, models, instances, y, cost, source)
    return AgenticData(targets, meta, pace_models)
