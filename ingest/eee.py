"""Read Every Eval Ever files into score rows (``pace import eee``).

Every Eval Ever (EvalEval coalition; schema version 0.2.1 followed here: ``eval.schema.json`` and
``instance_level_eval.schema.json``) stores one aggregate JSON per evaluation: ``schema_version``,
``evaluation_id``, ``model_info`` (``name``, ``id``), ``evaluation_results`` (one per evaluation name:
``evaluation_name``, ``metric_config``, ``score_details``, ...) and, when per-instance data exists,
``detailed_evaluation_results`` (``format`` jsonl, ``file_path``, ``hash_algorithm``, ``checksum``,
``total_rows``) pointing at a JSONL file with one record per sample: ``evaluation_id`` (the
aggregate's), ``evaluation_name`` (and in later versions ``evaluation_result_id``), ``sample_id``,
``evaluation`` (``score``, ``is_correct``), ``token_usage``, ``error``, ``metadata``, ...

Pace needs per-instance scores, so an aggregate without its JSONL is skipped (and said). A record
with an ``error`` is stored as NULL, never 0. A leaf (benchmark, subdir) comes from the map's
``[tasks.<evaluation_name>]``, else from the result's ``metric_config.additional_details``
(``pace_benchmark``, ``pace_subdir``, ``pace_metric_name``: what ``pace export --format eee`` writes),
else the evaluation name is the benchmark. Aggregates that ``pace export`` marked as predictions
(``source_metadata.additional_details.pace_kind = prediction``) are never imported as scores.

The JSONL is found beside the aggregate (by its file name), else at ``file_path`` relative to the
imported folder or to a folder above the aggregate (the datastore's repository-relative paths). A
sha256 checksum that does not match, a ``total_rows`` that does not, or a record of another
evaluation stops the import.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path, PurePosixPath

import pyarrow as pa

from ingest.csvfile import finish_rows, sha256_of
from ingest.errors import IngestError
from ingest.harness_map import HarnessMap, Leaf, TaskMap
from ingest.lm_eval import FileRead, json_document

LAYOUT = "every eval ever"
SCHEMA_VERSION = "0.2.1"
#: the keys pace writes into metric_config.additional_details / source_metadata.additional_details
PACE_BENCHMARK, PACE_SUBDIR, PACE_METRIC, PACE_KIND = "pace_benchmark", "pace_subdir", "pace_metric_name", "pace_kind"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


def discover(root: Path) -> list[Path]:
    """The JSON files at ``root`` (one aggregate, or a folder searched recursively; hidden ones left out)."""
    if not root.exists():
        raise IngestError(str(root), "no such file or folder")
    if root.is_file():
        return [root]
    found = sorted(p for p in root.rglob("*.json")
                   if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts))
    if not found:
        raise IngestError(str(root), "no Every Eval Ever aggregates (*.json) in this folder")
    return found


def samples_path(aggregate: Path, detail: dict) -> Path | None:
    """Where the aggregate's JSONL is (see the module doc), or None."""
    rel = detail.get("file_path")
    if not isinstance(rel, str) or not rel.strip():
        return None
    rel_path = PurePosixPath(rel.strip())
    if rel_path.is_absolute() or ".." in rel_path.parts:
        raise IngestError(str(aggregate), f"detailed_evaluation_results.file_path {rel!r} must be a relative path")
    candidates = [aggregate.parent / rel_path.name] + [folder / rel_path for folder in aggregate.parents]
    return next((c for c in candidates if c.is_file()), None)


def _score(record: dict, metric: str, where: str, name: str, line: int) -> float | None:
    if record.get("error") not in (None, ""):
        return None
    evaluation = record.get("evaluation")
    if not isinstance(evaluation, dict) or metric not in evaluation:
        raise IngestError(name, f"{where}: no evaluation.{metric}", line=line)
    value = evaluation[metric]
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if value is None:
        return None
    raise IngestError(name, f"{where}: evaluation.{metric} is {json.dumps(value)[:40]}, not a number", line=line)


def _sample_id(record: dict, ident: str, name: str, line: int) -> str:
    if ident == "sample_id":
        value, where = record.get("sample_id"), "sample_id"
    else:
        value, where = record.get("metadata") or {}, ident
        for part in ident[len("metadata."):].split("."):
            value = value.get(part) if isinstance(value, dict) else None
    if value is None or isinstance(value, (bool, dict, list)):
        raise IngestError(name, f"{where} is {json.dumps(value)[:40]}, not an instance id", line=line)
    text = str(value).strip()
    if not text or any(c in text for c in "\r\n"):
        raise IngestError(name, f"{where} {value!r} is not usable as an instance id", line=line)
    return text


def _leaf_of(result: dict, hmap: HarnessMap, path: Path) -> tuple[TaskMap, list[tuple[Leaf, str]]] | None:
    """The map entry and (leaf, metric_name) pairs of one evaluation result; None when the map skips it."""
    name = str(result.get("evaluation_name", "")).strip()
    config = result.get("metric_config") if isinstance(result.get("metric_config"), dict) else {}
    details = config.get("additional_details") if isinstance(config.get("additional_details"), dict) else {}
    if hmap.tasks:
        entry = hmap.task(name)
        if entry is None:
            return None
        return entry, [(leaf, details.get(PACE_METRIC) or leaf.metric) for leaf in entry.leaves]
    benchmark = str(details.get(PACE_BENCHMARK) or name)
    if not _NAME.match(benchmark):
        raise IngestError(str(path), f"evaluation {name!r} is not usable as a benchmark name (letters, digits and "
                          "_ . + -): name its leaf with --map ([tasks.\"<evaluation_name>\"] benchmark = ...)")
    metric_name = details.get(PACE_METRIC) or config.get("metric_name") or "score"
    leaf = Leaf(benchmark, str(details.get(PACE_SUBDIR) or ""), "score")
    return TaskMap(task=name, leaves=(leaf,), id="sample_id"), [(leaf, str(metric_name))]


def read(path: Path, hmap: HarnessMap, model: str | None, duplicates: str) -> FileRead:
    """Parse one aggregate and its per-instance JSONL."""
    name = str(path)
    data = path.read_bytes()
    agg = json_document(path, data)
    if not isinstance(agg, dict) or not isinstance(agg.get("evaluation_results"), list):
        return FileRead(task="(not an Every Eval Ever aggregate)")
    source = agg.get("source_metadata") if isinstance(agg.get("source_metadata"), dict) else {}
    if (source.get("additional_details") or {}).get(PACE_KIND) == "prediction":
        return FileRead(task="(pace predictions: not imported as scores)")
    detail = agg.get("detailed_evaluation_results")
    samples = samples_path(path, detail) if isinstance(detail, dict) else None
    if samples is None:
        return FileRead(task="(aggregate without per-instance records)")
    raw = samples.read_bytes()
    if str(detail.get("hash_algorithm", "")).lower() == "sha256" and detail.get("checksum"):
        got = hashlib.sha256(raw).hexdigest()
        if got != str(detail["checksum"]).lower():
            raise IngestError(str(samples), f"sha256 {got[:12]}... differs from the aggregate's checksum "
                              f"{str(detail['checksum'])[:12]}...: the file changed after it was written")
    evaluation_id = agg.get("evaluation_id")
    info = agg.get("model_info") if isinstance(agg.get("model_info"), dict) else {}
    out = FileRead(task=str(evaluation_id))
    out.sha256 = sha256_of(sha256_of(data).encode() + sha256_of(raw).encode())
    out.model = (model or hmap.model or str(info.get("name") or info.get("id") or "")).strip()
    if not out.model:
        raise IngestError(name, "model_info names no model: pass --model NAME")

    by_name, by_id, skipped = {}, {}, []
    for k, result in enumerate(agg["evaluation_results"]):
        if not isinstance(result, dict) or not str(result.get("evaluation_name", "")).strip():
            raise IngestError(name, f"evaluation_results[{k}] has no evaluation_name")
        got = _leaf_of(result, hmap, path)
        if got is None:
            skipped.append(result["evaluation_name"])
            continue
        by_name[str(result["evaluation_name"]).strip()] = got
        if result.get("evaluation_result_id"):
            by_id[str(result["evaluation_result_id"])] = got
    if skipped:
        out.notes.append(f"{path.name}: evaluations not in the map, skipped: {', '.join(skipped)}")

    rows: dict[Leaf, tuple[TaskMap, list, list, list, list]] = {}
    text = _text(samples, raw)
    n_lines = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        n_lines += 1
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise IngestError(str(samples), f"not a JSON line: {exc}", line=number) from None
        if not isinstance(record, dict) or "sample_id" not in record or "evaluation" not in record:
            raise IngestError(str(samples), "not an instance record (sample_id, evaluation, ...)", line=number)
        if evaluation_id is not None and record.get("evaluation_id") not in (None, evaluation_id):
            raise IngestError(str(samples), f"evaluation_id {record.get('evaluation_id')!r} is not the aggregate's "
                              f"{evaluation_id!r}", line=number)
        rid, ename = record.get("evaluation_result_id"), str(record.get("evaluation_name", "")).strip()
        target = by_id.get(str(rid)) if rid else None
        target = target or by_name.get(ename)
        if target is None:
            if ename in skipped:
                continue
            raise IngestError(str(samples), f"evaluation_name {ename!r} is not one of the aggregate's results",
                              line=number)
        entry, leaves = target
        meta = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
        for leaf, metric_name in leaves:
            bucket = rows.setdefault(leaf, (entry, [], [], [], []))
            bucket[1].append(str(meta.get(PACE_METRIC) or metric_name))
            bucket[2].append(_sample_id(record, entry.id, str(samples), number))
            bucket[3].append(_score(record, leaf.metric, f"sample {record['sample_id']!r}", str(samples), number))
            bucket[4].append(number)
    total = detail.get("total_rows")
    if isinstance(total, int) and total != n_lines:
        raise IngestError(str(samples), f"{n_lines} records, but the aggregate's total_rows says {total}")
    for leaf, (entry, metric_names, ids, scores, lines) in rows.items():
        table = pa.table({"instance_id": pa.array(ids, pa.string()), "score": pa.array(scores, pa.float64()),
                          "metric_name": pa.array(metric_names, pa.string())})
        out.leaves.append((leaf, finish_rows(str(samples), out.sha256, LAYOUT, table, duplicates,
                                             line_of=lambda row, lines=lines: lines[row])))
        out.entries[leaf] = entry
    if not out.leaves:
        out.task = "(no per-instance records of a mapped evaluation)"
    return out


def _text(path: Path, raw: bytes) -> str:
    if b"\x00" in raw:
        raise IngestError(str(path), "binary data (NUL byte): not a JSONL text file",
                          line=raw.count(b"\n", 0, raw.find(b"\x00")) + 1)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IngestError(str(path), f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})",
                          line=raw.count(b"\n", 0, exc.start) + 1) from None
