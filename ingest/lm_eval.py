"""Read lm-evaluation-harness per-sample logs (``--log_samples``) into score rows.

The harness writes, under ``--output_path``, one folder per model holding ``results_<time>.json``
and one ``samples_<task>_<time>.jsonl`` per task. Each line of a samples file is one document
under one filter: ``doc_id`` (the document's index in the task's split), ``doc`` (the dataset row),
``target``, ``arguments``, ``resps``, ``filtered_resps``, ``filter``, ``metrics`` (the names of the
metric fields on the line), ``doc_hash`` / ``prompt_hash`` / ``target_hash``, and one field per
metric holding the document's value (a number or boolean; a list for instance-level metrics such
as ifeval's ``inst_level_*``, averaged here; corpus-level metrics such as BLEU log a
(reference, prediction) pair, which is not a per-sample score and is refused).

The model is ``--model``, else the map's ``model``, else ``model_name`` (or the ``pretrained=``
model argument) of the ``results_<time>.json`` written with the samples.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from ingest.csvfile import ParsedFile, finish_rows, sha256_of
from ingest.errors import IngestError
from ingest.harness_map import HarnessMap, Leaf, TaskMap
from ingest.report import Anomaly

LAYOUT = "lm-eval samples"
_SAMPLES = re.compile(r"^samples_(?P<task>.+?)(?:_(?P<time>\d{4}-\d{2}-\d{2}T[0-9.\-]+))?\.jsonl$")
# fields every line carries besides the metrics (listed when a metric is missing)
_BOOKKEEPING = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
                "doc_hash", "prompt_hash", "target_hash"}


@dataclass
class FileRead:
    """What one harness file gives: its task, model and, if the map names the task, one parsed table
    per leaf. The other readers return the same shape; a file holding several tasks (an Every Eval
    Ever aggregate) names each leaf's map entry in ``entries``."""
    task: str
    sha256: str = ""
    model: str = ""
    entry: TaskMap | None = None
    leaves: list[tuple[Leaf, ParsedFile]] = field(default_factory=list)
    entries: dict[Leaf, TaskMap] = field(default_factory=dict)
    anomalies: list[Anomaly] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def json_document(path: Path, data: bytes):
    """The JSON document in ``data`` (the bytes of ``path``), or an IngestError naming what is wrong; the
    HELM and Every Eval Ever readers share it."""
    try:
        return json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise IngestError(str(path), f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})") \
            from None
    except ValueError as exc:
        raise IngestError(str(path), f"not valid JSON: {exc}") from None


def discover(root: Path) -> list[Path]:
    """The samples files at ``root`` (a file, or a folder searched recursively)."""
    if not root.exists():
        raise IngestError(str(root), "no such file or folder")
    if root.is_file():
        if not _SAMPLES.match(root.name):
            raise IngestError(str(root), "not an lm-eval samples file (expected samples_<task>_<time>.jsonl, "
                              "written by lm-eval --log_samples)")
        return [root]
    found = sorted(p for p in root.rglob("samples_*.jsonl")
                   if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts))
    if not found:
        raise IngestError(str(root), "no lm-eval samples files (samples_<task>_<time>.jsonl) in this folder: "
                          "run lm-eval with --log_samples --output_path")
    return found


def task_of(path: Path) -> tuple[str, str | None]:
    m = _SAMPLES.match(path.name)
    return m.group("task"), m.group("time")


def model_of_results(folder: Path, time: str | None) -> str | None:
    """The model named by the results file written with the samples (same time stamp, else the only one)."""
    candidates = [folder / f"results_{time}.json"] if time else []
    if not candidates or not candidates[0].is_file():
        candidates = sorted(folder.glob("results_*.json"))
        if len(candidates) != 1:
            return None
    try:
        data = json.loads(candidates[0].read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("model_name"), str) and data["model_name"].strip():
        return data["model_name"].strip()
    args = (data.get("config") or {}).get("model_args")
    if isinstance(args, str):
        m = re.search(r"(?:^|,)\s*(?:pretrained|model)=([^,]+)", args)
        if m:
            return m.group(1).strip()
    return None


def per_sample_value(value, metric: str, name: str, line: int) -> float | None:
    """A metric field as one number: booleans 0/1, numbers as they are, a list of numbers or booleans
    averaged (instance-level metrics); None, NaN and empty stay NULL. Anything else is refused."""
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, list) and all(isinstance(v, (bool, int, float)) for v in value):
        finite = [float(v) for v in value if math.isfinite(v)]
        return sum(finite) / len(finite) if finite else None
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            pass
        else:
            return number if math.isfinite(number) else None
    shown = json.dumps(value, default=str)
    raise IngestError(name, f"metric {metric!r} is not a per-sample score: {shown[:80]} (a corpus-level metric "
                      "logs what it aggregates later; choose a per-sample metric in the map)", line=line)


def _instance_id(record: dict, ident: str, name: str, line: int) -> str:
    if ident == "doc_id":
        value = record.get("doc_id")
        where = "doc_id"
    else:
        value = record.get("doc")
        where = "doc"
        for part in ident[len("doc."):].split("."):
            if not isinstance(value, dict) or part not in value:
                keys = sorted(value) if isinstance(value, dict) else []
                raise IngestError(name, f"no field {ident!r} on this line (doc fields: "
                                  f"{', '.join(keys[:12]) or 'none'}); fix `id` in the map", line=line)
            value = value[part]
            where += "." + part
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        raise IngestError(name, f"{where} is {json.dumps(value)[:40]}, not an instance id", line=line)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    if not text or any(c in text for c in "\r\n"):
        raise IngestError(name, f"{where} {value!r} is not usable as an instance id (empty or a line break)",
                          line=line)
    return text


def read(path: Path, hmap: HarnessMap, model: str | None, duplicates: str) -> FileRead:
    """Parse one samples file with the map; a task the map does not name is returned without leaves."""
    name = str(path)
    task, time = task_of(path)
    entry = hmap.task(task)
    out = FileRead(task=task, entry=entry)
    if entry is None:
        return out
    data = path.read_bytes()
    out.sha256 = sha256_of(data)
    out.model = model or hmap.model or model_of_results(path.parent, time) or ""
    if not out.model:
        raise IngestError(name, "cannot tell which model wrote these samples (no results_*.json with model_name "
                          "beside it): pass --model NAME or set model = \"...\" in the map")
    if b"\x00" in data:
        raise IngestError(name, "binary data (NUL byte): not a JSONL text file", line=data.count(b"\n", 0,
                          data.find(b"\x00")) + 1)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IngestError(name, f"not valid UTF-8 (byte 0x{data[exc.start]:02x})",
                          line=data.count(b"\n", 0, exc.start) + 1) from None
    records: list[tuple[int, dict]] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except ValueError as exc:
            raise IngestError(name, f"not a JSON line: {exc}", line=number) from None
        if not isinstance(record, dict) or "doc_id" not in record:
            raise IngestError(name, "not an lm-eval sample (a JSON object with doc_id, doc, ..., metrics)",
                              line=number)
        records.append((number, record))
    if not records:
        raise IngestError(name, "no samples in this file", line=1)

    filters = sorted({str(r.get("filter", "none")) for _, r in records})
    chosen = entry.filter
    if chosen is None and len(filters) > 1:
        raise IngestError(name, f"the samples hold filters {', '.join(filters)}: choose one with filter = \"...\" "
                          f"in [tasks.{entry.task}] of {hmap.path}")
    if chosen is not None and chosen not in filters:
        raise IngestError(name, f"no samples for filter {chosen!r} (filters: {', '.join(filters)}); fix "
                          f"[tasks.{entry.task}] in {hmap.path}")
    if chosen is not None:
        records = [(n, r) for n, r in records if str(r.get("filter", "none")) == chosen]
    flt = chosen or filters[0]

    lines = [n for n, _ in records]
    ids = [_instance_id(r, entry.id, name, n) for n, r in records]
    for leaf in entry.leaves:
        scores = []
        for n, r in records:
            if leaf.metric not in r:
                metrics = r.get("metrics") if isinstance(r.get("metrics"), list) else sorted(set(r) - _BOOKKEEPING)
                raise IngestError(name, f"no metric {leaf.metric!r} on this line (metrics: "
                                  f"{', '.join(map(str, metrics)) or 'none'}); fix [tasks.{entry.task}] in {hmap.path}",
                                  line=n)
            scores.append(per_sample_value(r[leaf.metric], leaf.metric, name, n))
        metric_name = leaf.metric if flt == "none" else f"{leaf.metric},{flt}"
        table = pa.table({"instance_id": pa.array(ids, pa.string()), "score": pa.array(scores, pa.float64()),
                          "metric_name": pa.array([metric_name] * len(ids), pa.string())})
        out.leaves.append((leaf, finish_rows(name, out.sha256, LAYOUT, table, duplicates,
                                             line_of=lambda row: lines[row])))
    return out
