"""Read Inspect AI evaluation logs (``.eval`` or ``.json``) into score rows, with Inspect's own reader
(``inspect_ai.log.read_eval_log``; the optional extra ``inspect``).

One log is one task run against one model. A sample's score under the map's ``metric`` (a scorer
name) becomes its row: Inspect's letter values C / I / P / N count 1 / 0 / 0.5 / 0 as Inspect itself
counts them, booleans 0 / 1, numbers as they are, a list of numbers its mean; a dict-valued score
needs ``score_key`` in the map. A sample that errored, or a value that is none of these, is stored
as NULL (counted), never as 0. Several epochs of a sample are averaged (Inspect's default reducer).
A log that did not finish (status other than success) is imported and reported as an anomaly.
"""
from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import pyarrow as pa

from ingest.csvfile import finish_rows, sha256_of
from ingest.errors import IngestError
from ingest.harness_map import HarnessMap
from ingest.lm_eval import FileRead
from ingest.report import Anomaly

LAYOUT = "inspect log"
LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_NOT_LOGS = {"logs.json"}          # Inspect's own listing of a log folder


def log_reader():
    """Inspect's own log reader, or None when inspect_ai is not installed."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        return None
    return read_eval_log


def discover(root: Path) -> list[Path]:
    """The log files at ``root`` (a file, or a folder searched recursively)."""
    if not root.exists():
        raise IngestError(str(root), "no such file or folder")
    if root.is_file():
        return [root]
    found = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".eval", ".json")
                   and p.name not in _NOT_LOGS
                   and not any(part.startswith(".") for part in p.relative_to(root).parts))
    if not found:
        raise IngestError(str(root), "no Inspect logs (*.eval or *.json) in this folder")
    return found


def score_value(value, score_key: str | None, where: str, name: str) -> float | None:
    """One sample's score as a number (see the module doc); None when it has no usable value."""
    if isinstance(value, dict):
        if score_key is None:
            raise IngestError(name, f"{where}: the score is a dict (keys {', '.join(map(str, value))}): "
                              "say which key is the score with score_key = \"...\" in the map")
        if score_key not in value:
            raise IngestError(name, f"{where}: no key {score_key!r} in the score (keys {', '.join(map(str, value))})")
        value = value[score_key]
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        if value in LETTERS:
            return LETTERS[value]
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    if isinstance(value, list) and value and all(isinstance(v, (bool, int, float)) for v in value):
        finite = [float(v) for v in value if math.isfinite(v)]
        return sum(finite) / len(finite) if finite else None
    return None


def _sample_id(sample, ident: str, name: str) -> str:
    if ident == "id":
        value = sample.id
        where = "id"
    else:
        value = sample.metadata or {}
        where = "metadata"
        for part in ident[len("metadata."):].split("."):
            if not isinstance(value, dict) or part not in value:
                keys = sorted(value) if isinstance(value, dict) else []
                raise IngestError(name, f"sample {sample.id!r}: no {ident!r} (metadata fields: "
                                  f"{', '.join(keys[:12]) or 'none'}); fix `id` in the map")
            value = value[part]
            where += "." + part
    if value is None or isinstance(value, (bool, dict, list)):
        raise IngestError(name, f"sample {sample.id!r}: {where} is {value!r}, not an instance id")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    if not text or any(c in text for c in "\r\n"):
        raise IngestError(name, f"sample {sample.id!r}: {where} {value!r} is not usable as an instance id")
    return text


def read(path: Path, hmap: HarnessMap, model: str | None, duplicates: str) -> FileRead:
    """Parse one log with the map; a task the map does not name is returned without leaves."""
    name = str(path)
    read_eval_log = log_reader()
    if read_eval_log is None:
        raise IngestError(name, "reading Inspect logs needs inspect_ai: pip install 'pace-warehouse[inspect]'")
    data = path.read_bytes()
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - any failure of the reader means: not a log we can read
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise IngestError(name, f"not a readable Inspect log: {first[:160]}") from None
    task = log.eval.task
    entry = hmap.task(task)
    out = FileRead(task=task, entry=entry)
    if entry is None:
        return out
    out.sha256 = sha256_of(data)
    out.model = model or hmap.model or log.eval.model
    samples = log.samples or []
    if not samples:
        raise IngestError(name, f"the log holds no samples (status {log.status})")
    if log.status != "success":
        out.anomalies.append(Anomaly("incomplete_log", name, f"status {log.status!r}: {len(samples)} samples "
                                     "were logged; the rest of the task has no rows"))
    # one row per sample (its epochs averaged); two samples mapped to one id are repeated ids
    order: list = []
    ident_of: dict = {}
    values: dict[str, dict] = {leaf.metric: defaultdict(list) for leaf in entry.leaves}
    epochs = defaultdict(int)
    for sample in samples:
        if sample.id not in ident_of:
            order.append(sample.id)
            ident_of[sample.id] = _sample_id(sample, entry.id, name)
        epochs[sample.id] += 1
        scores = sample.scores or {}
        for leaf in entry.leaves:
            if leaf.metric not in scores:
                if sample.error is not None or not scores:
                    values[leaf.metric][sample.id].append(None)      # the sample errored: no score
                    continue
                raise IngestError(name, f"sample {sample.id!r}: no score {leaf.metric!r} (scorers: "
                                  f"{', '.join(scores)}); fix [tasks.{entry.task}] in {hmap.path}")
            where = f"sample {sample.id!r} epoch {sample.epoch}"
            values[leaf.metric][sample.id].append(score_value(scores[leaf.metric].value, entry.score_key,
                                                              where, name))
    if max(epochs.values()) > 1:
        out.notes.append(f"{path.name}: {max(epochs.values())} epochs per sample, averaged (Inspect's default "
                         "reducer)")
    ids = [ident_of[s] for s in order]
    for leaf in entry.leaves:
        scores = []
        for sample_id in order:
            usable = [v for v in values[leaf.metric][sample_id] if v is not None]
            scores.append(sum(usable) / len(usable) if usable else None)
        metric_name = leaf.metric if entry.score_key is None else f"{leaf.metric}.{entry.score_key}"
        table = pa.table({"instance_id": pa.array(ids, pa.string()), "score": pa.array(scores, pa.float64()),
                          "metric_name": pa.array([metric_name] * len(ids), pa.string())})
        out.leaves.append((leaf, finish_rows(name, out.sha256, LAYOUT, table, duplicates, line_of=lambda row: None)))
    return out
