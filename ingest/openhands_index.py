"""``pace import openhands-index DIR``: the OpenHands Index results (per-instance agentic runs, their
costs, the reported aggregates and model metadata) through the same loader as ``pace ingest``
(:func:`ingest.load.load_units`): idempotent (each file's sha256), all or nothing, provenance per file
in ``score_files`` (``source`` 'openhands-index'), the lake kept equal to ``scores``, anomalies reported.

The upstream layout (``OpenHands/openhands-index-results``)::

    results/<Model>/metadata.json                       -> model_metadata
    results/<Model>/scores.json                         -> reported_scores
    results/<Model>/instance_results/<bench>.json       -> agentic_runs, and score rows (the OpenHands agent)
    alternative_agents/<agent>/<Model>/...              -> the same tables with that agent; no score rows

Each file is one unit of the loader. The OpenHands agent's instance files carry score rows (``resolved``
as 1 / 0, NULL when the index gives none; metric ``resolved``), which land in ``scores`` unless the model
also has rows of the warehouse's own files for that benchmark: then :mod:`ingest.preference` keeps one
source in ``scores`` (``pace`` by default, ``--prefer``) and the other in ``scores_displaced``. Every
other file is a provenance-only unit whose content the ``side`` step writes to the tables above.

Names: the index's benchmarks map to the warehouse's (:data:`BENCHMARKS`); a model is its folder's
name, through ``model_aliases``. Spellings that look like a model the warehouse knows are offered as
``pace alias add`` lines (:data:`KNOWN_SPELLINGS`, the index README's list, and names equal up to case,
punctuation and order of words), never applied.
"""
from __future__ import annotations

import json
import math
import os
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from ingest import preference
from ingest.csvfile import ParsedFile, finish_rows, sha256_of
from ingest.errors import IngestError
from ingest.load import Unit, check_duplicates_policy, load_units
from ingest.report import Anomaly, IngestReport
from ingest.tree import ScoreFile, is_synthetic_tree, tree_identity
from warehouse.errors import pace_command
from warehouse.registered import registered

LAYOUT = "openhands-index"
SOURCE = preference.INDEX
#: the agent of results/<Model>/ (the harness the warehouse's targets come from)
MAIN_AGENT = "openhands"
#: the index's benchmark names -> the warehouse's
BENCHMARKS = {"swe-bench": "swebench", "swt-bench": "swtbench", "swe-bench-multimodal": "swebench_multimodal",
              "gaia": "gaia", "commit0": "commit0"}
#: spellings of the index README that name a model the Pace files spell otherwise (offered, never applied)
KNOWN_SPELLINGS = {"claude-opus-4-5": "Claude-4.5-Opus", "claude-opus-4-6": "Claude-4.6-Opus",
                   "claude-sonnet-4-5": "Claude-4.5-Sonnet", "Gemini-3-Flash": "Gemini-3-Flash-Preview",
                   "Gemini-3-Pro": "Gemini-3-Pro-Preview", "Qwen3-Coder-480B": "Qwen3-Coder-480B-A35B-Instruct",
                   "DeepSeek-V3.2-Reasoner": "DeepSeek-V3.2"}
#: a reported score further than this (percentage points) from every reading of the instance results
REPORTED_TOLERANCE_PP = 1.0
#: anomalies of the tree-wide report this importer words itself (or that do not apply to an index)
# second_spelling: the importer reports it itself (it also reads the name metadata.json gives); the hold
# out of fits (ingest.noise) still applies
SKIPPED_ANOMALIES = frozenset({"unknown_model", "unknown_ids", "target_rows_differ", "second_spelling"})
_METADATA_NUMBERS = ("parameter_count_b", "active_parameter_count_b", "input_price", "output_price",
                     "cache_read_price", "cache_write_price")
_METADATA_TEXT = ("agent_name", "agent_version", "model", "openness", "country", "tool_usage", "submission_time")
_REPORTED_NUMBERS = ("score", "cost_per_instance", "average_runtime")
_REPORTED_TEXT = ("metric", "agent_version", "submission_time", "full_archive")


class _Object(list):
    """A JSON object as its (key, value) pairs, in file order (repeated keys kept)."""


def _line_of(text: str, needle: str) -> int | None:
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def _key_at(text: str, needle: str, start: int) -> int:
    """Where the object key ``needle`` (a JSON string) next occurs from ``start`` (followed by ':'), or -1."""
    at = text.find(needle, start)
    while at >= 0:
        rest = text[at + len(needle):at + len(needle) + 64].lstrip()
        if rest.startswith(":"):
            return at
        at = text.find(needle, at + 1)
    return -1


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def read_json(path: Path, name: str) -> tuple[object, str, str]:
    """(value, text, sha256) of a JSON file; objects as :class:`_Object`. Bad bytes or syntax raise
    :class:`IngestError` with the line."""
    data = path.read_bytes()
    if b"\x00" in data:
        raise IngestError(name, "binary data (NUL byte): not a JSON text file",
                          line=data.count(b"\n", 0, data.find(b"\x00")) + 1)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IngestError(name, f"not valid UTF-8 (byte 0x{data[exc.start]:02x})",
                          line=data.count(b"\n", 0, exc.start) + 1) from None
    if not text.strip():
        raise IngestError(name, "empty file: not JSON", line=1)
    try:
        value = json.loads(text, object_pairs_hook=_Object, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise IngestError(name, f"not valid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from None
    except ValueError as exc:            # NaN / Infinity
        raise IngestError(name, f"not valid JSON: {exc}", line=_line_of(text, str(exc).split()[0])) from None
    return value, text, sha256_of(data)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# ------------------------------------------------------------------------------------------- reading
@dataclass
class ModelDir:
    agent: str            # 'openhands' or the alternative_agents/<agent> folder
    index_model: str      # the folder's name
    rel: str              # relative to DIR, e.g. results/GLM-4.7
    path: Path


@dataclass
class InstanceFile:
    folder: ModelDir
    rel: str
    index_benchmark: str
    benchmark: str
    sha256: str
    parsed: ParsedFile            # instance_id, score (resolved), metric_name, cost; repeated ids resolved


@dataclass
class IndexRead:
    """Everything read from DIR before the warehouse is opened: the loader's units and the rows of the
    side tables, keyed by the file they come from."""
    units: list[Unit] = field(default_factory=list)
    report: IngestReport | None = None
    folders: list[ModelDir] = field(default_factory=list)
    instances: dict[str, InstanceFile] = field(default_factory=dict)
    metadata: dict[str, dict] = field(default_factory=dict)          # rel -> row (without model)
    reported: dict[str, list[dict]] = field(default_factory=dict)    # rel -> rows (without model)
    side_units: set[str] = field(default_factory=set)


def model_folders(root: Path) -> list[ModelDir]:
    """The model folders of the index at ``root`` (results/ and every alternative agent's)."""
    if not root.exists():
        raise IngestError(str(root), "no such directory")
    if not root.is_dir():
        raise IngestError(str(root), "not a directory (expected an OpenHands Index checkout: results/<Model>/..., "
                          "alternative_agents/<agent>/<Model>/...)")
    found: list[ModelDir] = []

    def visible_dirs(folder: Path) -> list[Path]:
        return sorted((p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")), key=lambda p: p.name)

    results, alternatives = root / "results", root / "alternative_agents"
    if not results.is_dir() and not alternatives.is_dir():
        raise IngestError(str(root), "not an OpenHands Index folder: neither results/ nor alternative_agents/ in it "
                          "(expected results/<Model>/{metadata.json,scores.json,instance_results/<bench>.json})")
    if results.is_dir():
        found += [ModelDir(MAIN_AGENT, p.name, f"results/{p.name}", p) for p in visible_dirs(results)]
    if alternatives.is_dir():
        for agent in visible_dirs(alternatives):
            if agent.name == MAIN_AGENT:
                raise IngestError(str(agent), f"an alternative agent may not be called {MAIN_AGENT!r} (the agent of "
                                  "results/)")
            found += [ModelDir(agent.name, p.name, f"alternative_agents/{agent.name}/{p.name}", p)
                      for p in visible_dirs(agent)]
    for folder in found:
        _check_name(folder.index_model, str(folder.path), "model folder")
    if not found:
        raise IngestError(str(root), "no model folders under results/ or alternative_agents/<agent>/")
    return found


def _check_name(name: str, where: str, what: str) -> None:
    if not name.strip() or name != name.strip() or any(ord(c) < 32 for c in name) or name == preference.EVERY_MODEL:
        raise IngestError(where, f"{what} name {name!r} is not usable as a model name (blank, padded or a "
                          "control character)")


def _instance_rows(name: str, value, text: str, sha: str, duplicates: str) -> ParsedFile:
    """``{instance_id: {"resolved": bool|null, "cost": number|null}}`` -> resolved rows (with ``cost``)."""
    if not isinstance(value, _Object):
        raise IngestError(name, "not an instance results file: expected a JSON object "
                          '{"<instance_id>": {"resolved": true|false|null, "cost": USD|null}, ...}', line=1)
    ids, scores, costs, lines = [], [], [], []
    cursor, line_at_cursor = 0, 1    # keys come in file order: each one is found after the previous one
    for instance_id, record in value:
        at = _key_at(text, json.dumps(instance_id, ensure_ascii=False), cursor)
        if at >= 0:
            line_at_cursor += text.count("\n", cursor, at)
            cursor = at
        line = line_at_cursor if at >= 0 else None
        if not instance_id.strip() or any(c in instance_id for c in "\r\n"):
            raise IngestError(name, f"instance id {instance_id!r} is not usable (empty or a line break)", line=line)
        if not isinstance(record, _Object):
            raise IngestError(name, f"instance {instance_id!r}: expected an object with resolved and cost, not "
                              f"{json.dumps(record)[:40]}", line=line)
        fields = dict(record)
        if "resolved" not in fields:
            raise IngestError(name, f"instance {instance_id!r} has no 'resolved' (fields: "
                              f"{', '.join(fields) or 'none'})", line=line)
        resolved, cost = fields["resolved"], fields.get("cost")
        if resolved is None:
            score = None
        elif isinstance(resolved, bool) or (_is_number(resolved) and resolved in (0, 1)):
            score = float(resolved)
        else:
            raise IngestError(name, f"instance {instance_id!r}: resolved is {json.dumps(resolved)[:40]}, not "
                              "true, false or null", line=line)
        if cost is not None and not (_is_number(cost) and cost >= 0):
            raise IngestError(name, f"instance {instance_id!r}: cost is {json.dumps(cost)[:40]}, not a "
                              "non-negative number of USD or null", line=line)
        ids.append(instance_id)
        scores.append(score)
        costs.append(None if cost is None else float(cost))
        lines.append(line or 1)
    table = pa.table({"instance_id": pa.array(ids, pa.string()), "score": pa.array(scores, pa.float64()),
                      "metric_name": pa.array(["resolved"] * len(ids), pa.string()),
                      "cost": pa.array(costs, pa.float64())})
    return finish_rows(name, sha, LAYOUT, table, duplicates, line_of=lambda row: lines[row])


def _typed(name: str, text: str, record: dict, numbers: tuple, texts: tuple, what: str) -> dict:
    out = {}
    for key in numbers:
        value = record.get(key)
        if value is not None and not _is_number(value):
            raise IngestError(name, f"{what}: {key} is {json.dumps(value)[:40]}, not a number or null",
                              line=_line_of(text, json.dumps(key)))
        out[key] = None if value is None else float(value)
    for key in texts:
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            raise IngestError(name, f"{what}: {key} is {json.dumps(value)[:40]}, not a string or null",
                              line=_line_of(text, json.dumps(key)))
        out[key] = value
    return out


def _plain(value):
    """A parsed value with its objects as dicts again (for the raw JSON columns)."""
    if isinstance(value, _Object):
        return {k: _plain(v) for k, v in value}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _metadata_row(name: str, value, text: str) -> dict:
    if not isinstance(value, _Object):
        raise IngestError(name, "not a metadata file: expected a JSON object (agent_name, model, release_date, "
                          "parameter_count_b, prices, ...)", line=1)
    record = dict(value)
    row = _typed(name, text, record, _METADATA_NUMBERS, _METADATA_TEXT, "metadata")
    row["metadata_model"] = row.pop("model")
    released = record.get("release_date")
    if released is None:
        row["release_date"] = None
    else:
        try:
            row["release_date"] = date.fromisoformat(released) if isinstance(released, str) else None
        except ValueError:
            row["release_date"] = None
        if row["release_date"] is None:
            raise IngestError(name, f"release_date is {json.dumps(released)[:40]}, not a date YYYY-MM-DD or null",
                              line=_line_of(text, '"release_date"'))
    for key in ("supports_vision", "available"):
        flag = record.get(key)
        if flag is not None and not isinstance(flag, bool):
            raise IngestError(name, f"{key} is {json.dumps(flag)[:40]}, not true, false or null",
                              line=_line_of(text, json.dumps(key)))
        row[key] = flag
    row["directory_name"] = record.get("directory_name")
    row["raw"] = json.dumps(_plain(value), ensure_ascii=False)
    return row


def _reported_rows(name: str, value, text: str, report: IngestReport, rel: str) -> list[dict]:
    if not isinstance(value, list):
        raise IngestError(name, "not a scores file: expected a JSON array of records "
                          '[{"benchmark": ..., "score": ..., "metric": ...}, ...]', line=1)
    rows: dict[str, dict] = {}
    for k, item in enumerate(value):
        if not isinstance(item, _Object):
            raise IngestError(name, f"record {k + 1}: expected an object, not {json.dumps(_plain(item))[:40]}",
                              line=_line_of(text, "[") if k == 0 else None)
        record = dict(item)
        index_benchmark = record.get("benchmark")
        line = _line_of(text, f'"benchmark": {json.dumps(index_benchmark)}') or _line_of(text, json.dumps(index_benchmark))
        if not isinstance(index_benchmark, str) or not index_benchmark:
            raise IngestError(name, f"record {k + 1}: benchmark is {json.dumps(index_benchmark)[:40]}, not a name",
                              line=line)
        if index_benchmark not in BENCHMARKS:
            report.anomalies.append(Anomaly("unknown_benchmark", rel, f"reports {index_benchmark!r}, which this "
                                            f"import does not map (known: {', '.join(BENCHMARKS)}): skipped"))
            continue
        row = _typed(name, text, record, _REPORTED_NUMBERS, _REPORTED_TEXT, f"record {index_benchmark!r}")
        components = record.get("component_scores")
        if components is not None and not isinstance(components, _Object):
            raise IngestError(name, f"record {index_benchmark!r}: component_scores is not an object", line=line)
        row.update(index_benchmark=index_benchmark, benchmark=BENCHMARKS[index_benchmark],
                   score=None if row["score"] is None else row["score"] / 100,
                   component_scores=None if components is None else json.dumps(_plain(components)),
                   raw=json.dumps(_plain(item), ensure_ascii=False))
        if index_benchmark in rows:
            report.anomalies.append(Anomaly("duplicate_reported", rel, f"reports {index_benchmark!r} twice: the "
                                            "first record is kept"))
            continue
        rows[index_benchmark] = row
    return list(rows.values())


def read_index(root: str | os.PathLike, *, duplicates: str = "first", progress=None) -> IndexRead:
    """Read and check every file of the index at ``root``, touching no warehouse. Bad input raises
    :class:`IngestError` (``file:line``); what is odd but readable becomes anomalies of the report."""
    check_duplicates_policy(duplicates, str(root))
    started = time.perf_counter()
    root = Path(root)
    folders = model_folders(root)
    out = IndexRead(folders=folders)
    report = out.report = IngestReport(root=str(root), source=LAYOUT, tree=tree_identity(root),
                                       synthetic=is_synthetic_tree(root))
    for folder in folders:
        names = {p.name for p in folder.path.iterdir() if not p.name.startswith(".")}
        meta, scores_file = folder.path / "metadata.json", folder.path / "scores.json"
        inst_dir = folder.path / "instance_results"
        if not (meta.is_file() or scores_file.is_file() or inst_dir.is_dir()):
            report.anomalies.append(Anomaly("empty_model_dir", folder.rel, "no metadata.json, scores.json or "
                                            f"instance_results/ (holds: {', '.join(sorted(names)) or 'nothing'}): "
                                            "skipped"))
            continue
        if meta.is_file():
            rel = f"{folder.rel}/metadata.json"
            value, text, sha = read_json(meta, str(meta))
            out.metadata[rel] = {**_metadata_row(str(meta), value, text), "folder": folder}
            out.units.append(_side_unit(meta, rel, folder, sha))
        else:
            report.anomalies.append(Anomaly("missing_metadata", folder.rel, "no metadata.json (release date, "
                                            "parameters, prices unknown for this model)"))
        if scores_file.is_file():
            rel = f"{folder.rel}/scores.json"
            value, text, sha = read_json(scores_file, str(scores_file))
            out.reported[rel] = [{**r, "folder": folder} for r in _reported_rows(str(scores_file), value, text,
                                                                                  report, rel)]
            out.units.append(_side_unit(scores_file, rel, folder, sha))
        if inst_dir.is_dir():
            for path in sorted(p for p in inst_dir.iterdir() if p.is_file() and not p.name.startswith(".")):
                rel = f"{folder.rel}/instance_results/{path.name}"
                index_benchmark = path.name[:-len(".json")] if path.name.endswith(".json") else None
                if index_benchmark not in BENCHMARKS:
                    report.anomalies.append(Anomaly(
                        "unknown_benchmark", rel, f"not an instance file of a benchmark this import maps "
                        f"({', '.join(f'{b}.json' for b in BENCHMARKS)}): skipped"))
                    continue
                value, text, sha = read_json(path, str(path))
                parsed = _instance_rows(str(path), value, text, sha, duplicates)
                one = InstanceFile(folder, rel, index_benchmark, BENCHMARKS[index_benchmark], sha, parsed)
                out.instances[rel] = one
                out.units.append(_instance_unit(path, one))
        if progress:
            progress(1)
    if not out.units:
        raise IngestError(str(root), "no metadata.json, scores.json or instance_results/<bench>.json in any model "
                          "folder")
    _check_side_keys(out)
    report.anomalies += _file_anomalies(out)
    report.files = len(out.units)
    report.seconds = time.perf_counter() - started
    return out


def _side_unit(path: Path, rel: str, folder: ModelDir, sha: str) -> Unit:
    sf = ScoreFile(path=path, rel=rel, benchmark="", subdir="", file_model=folder.index_model)
    return Unit(sf, sha, parse=lambda: _no_rows(sha), mapping=json.dumps({"agent": folder.agent}),
                source=SOURCE, scores=False)


def _no_rows(sha: str) -> ParsedFile:
    empty = pa.table({"instance_id": pa.array([], pa.string()), "score": pa.array([], pa.float64()),
                      "metric_name": pa.array([], pa.string())})
    return ParsedFile(sha256=sha, layout=LAYOUT, table=empty, n_duplicates=0, n_null_scores=0)


def _instance_unit(path: Path, one: InstanceFile) -> Unit:
    sf = ScoreFile(path=path, rel=one.rel, benchmark=one.benchmark, subdir="", file_model=one.folder.index_model)
    mapping = json.dumps({"agent": one.folder.agent, "benchmark": one.index_benchmark})
    if one.folder.agent != MAIN_AGENT:          # other harnesses: agentic_runs only
        return Unit(sf, one.sha256, parse=lambda: _no_rows(one.sha256), mapping=mapping, source=SOURCE, scores=False)
    p = one.parsed

    def rows() -> ParsedFile:
        return ParsedFile(sha256=p.sha256, layout=LAYOUT, table=p.table.drop_columns(["cost"]),
                          n_duplicates=p.n_duplicates, n_null_scores=p.n_null_scores, n_runs=p.n_runs,
                          run_means=p.run_means, conflicting_ids=p.conflicting_ids)
    return Unit(sf, one.sha256, parse=rows, mapping=mapping, source=SOURCE)


def _check_side_keys(read: IndexRead) -> None:
    """Two folders of one agent with one model name and benchmark cannot both be imported (the loader
    checks the same for score rows, after aliases; this is the check before them)."""
    seen: dict[tuple[str, str, str], str] = {}
    for one in read.instances.values():
        key = (one.folder.agent, one.folder.index_model, one.benchmark)
        if key in seen:
            raise IngestError(one.rel, f"{seen[key]} already gives {one.benchmark} for this model and agent")
        seen[key] = one.rel


# ------------------------------------------------------------------------------------------ anomalies
def spelling_key(name: str) -> tuple:
    """Names equal up to case, punctuation, the order of their words and a one-letter version prefix
    (``MiniMax-M2.7`` ~ ``Minimax-2.7``, ``claude-opus-4-5`` ~ ``Claude-4.5-Opus``): the numbers in order,
    the words as a set."""
    tokens = re.findall(r"[a-z]+|[0-9]+", name.lower())
    words, numbers = [], []
    for i, token in enumerate(tokens):
        if token.isdigit():
            numbers.append(int(token))
        elif not (len(token) == 1 and i + 1 < len(tokens) and tokens[i + 1].isdigit()):
            words.append(token)
    return tuple(sorted(words)), tuple(numbers)


def _short(names: list[str], limit: int = 6) -> str:
    return ", ".join(names[:limit]) + (f" (+{len(names) - limit} more)" if len(names) > limit else "")


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _file_anomalies(read: IndexRead) -> list[Anomaly]:
    """What the files say about themselves: reported scores far from their instance results, files
    covering part of a benchmark, instances without a cost, a model spelled two ways in the index."""
    out: list[Anomaly] = []
    union: dict[str, set] = defaultdict(set)
    for one in read.instances.values():
        union[one.benchmark] |= set(one.parsed.table.column("instance_id").to_pylist())
    partial: dict[str, list[str]] = defaultdict(list)
    no_cost: dict[str, list[str]] = defaultdict(list)
    no_cost_rows: dict[str, int] = defaultdict(int)
    for one in read.instances.values():
        n = one.parsed.table.num_rows
        label = one.rel.rsplit("/instance_results/", 1)[0].removeprefix("results/")
        if n < len(union[one.benchmark]):
            partial[one.benchmark].append(f"{label} {n}")
        missing = one.parsed.table.column("cost").null_count
        if missing:
            no_cost[one.benchmark].append(f"{label} {missing}")
            no_cost_rows[one.benchmark] += missing
        if one.folder.agent != MAIN_AGENT and (one.parsed.n_null_scores or one.parsed.n_duplicates):
            out.append(Anomaly("null_scores" if one.parsed.n_null_scores else "duplicate_ids", one.rel,
                               f"{one.parsed.n_null_scores} instance(s) with resolved null (stored as NULL), "
                               f"{one.parsed.n_duplicates} repeated id(s) dropped"))
    n_files = defaultdict(int)
    for one in read.instances.values():
        n_files[one.benchmark] += 1
    for benchmark, files in sorted(partial.items()):
        out.append(Anomaly("partial_instances", benchmark,
                           f"{len(files)} of {n_files[benchmark]} instance files list part of the {len(union[benchmark])} "
                           f"ids the index has for it: {_short(sorted(files, key=lambda f: int(f.rsplit(' ', 1)[1])))}",
                           items=sorted(files)))
    for benchmark, files in sorted(no_cost.items()):
        out.append(Anomaly("null_costs", benchmark,
                           f"{no_cost_rows[benchmark]} instance(s) in {len(files)} of {n_files[benchmark]} files have "
                           f"no cost (NULL in agentic_runs, never 0): {_short(sorted(files))}", items=sorted(files)))
    out += _reported_far(read, union)
    out += _second_spellings(read)
    return out


def _reported_far(read: IndexRead, union: dict[str, set]) -> list[Anomaly]:
    """A reported score that no reading of the instance results gives (their plain mean; the instances
    without a result, or missing from the file, counted as failures; the component totals scores.json
    states), within :data:`REPORTED_TOLERANCE_PP`."""
    files = {(one.folder.rel, one.benchmark): one for one in read.instances.values()}
    out = []
    for rel, rows in sorted(read.reported.items()):
        for row in rows:
            one = files.get((row["folder"].rel, row["benchmark"]))
            if one is None or row["score"] is None:
                continue
            scores = [s for s in one.parsed.table.column("score").to_pylist() if s is not None]
            if not scores:
                continue
            solved = sum(scores)
            components = json.loads(row["component_scores"]) if row["component_scores"] else {}
            totals = {len(scores), one.parsed.table.num_rows, len(union[one.benchmark])}   # nulls: failures?
            parts = [int(v) for k, v in components.items() if k.endswith("_total") and _is_number(v) and v > 0]
            totals |= set(parts) | ({sum(parts)} if parts else set())
            readings = [solved / t for t in totals]
            reported = [row["score"]] + [v / 100 for k, v in components.items()
                                         if k == "combined_accuracy" and _is_number(v)]
            gap = min(abs(r - m) for r in reported for m in readings)
            if 100 * gap > REPORTED_TOLERANCE_PP:
                mean = solved / len(scores)
                out.append(Anomaly("reported_score_far", one.rel,
                                   f"scores.json reports {_pct(row['score'])} ({row['metric'] or 'no metric'}); the "
                                   f"{len(scores)} instance results give {_pct(mean)} ({solved:g} resolved), "
                                   f"{100 * abs(row['score'] - mean):.1f} pp apart: not the run behind the figure?"))
    return out


def _second_spellings(read: IndexRead) -> list[Anomaly]:
    """Folders (or a folder and the name its metadata.json gives) that spell one model two ways."""
    spellings: dict[tuple, set[str]] = defaultdict(set)
    where: dict[str, list[str]] = defaultdict(list)
    for folder in read.folders:
        spellings[spelling_key(folder.index_model)].add(folder.index_model)
        where[folder.index_model].append(folder.rel)
    for rel, row in read.metadata.items():
        for claimed in (row.get("metadata_model"), row.get("directory_name")):
            if isinstance(claimed, str) and claimed.strip() and claimed != row["folder"].index_model:
                spellings[spelling_key(claimed)].add(claimed)
                spellings[spelling_key(row["folder"].index_model)].add(claimed)
                if f"{rel} names it" not in where[claimed]:
                    where[claimed].append(f"{rel} names it")
    out = []
    seen: set[frozenset] = set()
    for names in spellings.values():
        if len(names) < 2 or frozenset(names) in seen:
            continue
        seen.add(frozenset(names))
        ordered = sorted(names, key=lambda n: (-_rows_of(read, n), n))
        keep = ordered[0]
        described = "; ".join(f"{n}: {', '.join(where[n]) or 'no folder'}" for n in ordered)
        lines = [pace_command("alias", "add", n, keep) for n in ordered[1:] if any(f.index_model == n for f in read.folders)]
        out.append(Anomaly("second_spelling", " / ".join(ordered),
                           f"one model spelled {len(ordered)} ways ({described})"
                           + (f"; to merge them: `{'`, `'.join(lines)}`" if lines else ""), items=lines))
    return out


def _rows_of(read: IndexRead, name: str) -> int:
    return sum(one.parsed.table.num_rows for one in read.instances.values() if one.folder.index_model == name)


# ------------------------------------------------------------------------------------------ storing
def import_index(con: duckdb.DuckDBPyConnection, root: str | os.PathLike, *, lake: str | os.PathLike | None = None,
                 prefer: dict[str, str] | None = None, prune: bool = False, strict: bool = False,
                 duplicates: str = "first", progress=None, read: IndexRead | None = None) -> IngestReport:
    """Import the index at ``root`` (see the module doc). ``prefer``: ``{model or '*': 'pace' |
    'openhands-index'}`` recorded in ``agentic_preference`` before the rule is applied. ``read``: the
    result of :func:`read_index` when the caller read the files already (before opening the warehouse)."""
    read = read or read_index(root, duplicates=duplicates, progress=progress)
    for source in (prefer or {}).values():
        if source not in preference.SOURCES:
            raise IngestError(str(root), f"--prefer {source!r} is not one of {', '.join(preference.SOURCES)}")
    report = read.report
    brought = {one.benchmark for one in read.instances.values()} | {r["benchmark"] for rows in read.reported.values()
                                                                    for r in rows}
    new_benchmarks = brought - {b for (b,) in con.execute("SELECT benchmark FROM benchmarks").fetchall()}
    recorded_at = datetime.now().replace(microsecond=0)

    def side(con: duckdb.DuckDBPyConnection, removed: list[str], written: list[str]) -> None:
        _store_side(con, read, removed, written, recorded_at)
        if new_benchmarks:          # agentic benchmarks are targets (the loader adds unseen ones as sources)
            con.execute("INSERT OR REPLACE INTO benchmarks SELECT unnest(?::VARCHAR[]), 'target'",
                        [sorted(new_benchmarks)])
        if prefer:
            preference.set_preference(con, prefer)
        report.anomalies.extend(_warehouse_anomalies(con, read))
        report.notes.extend(_notes(con, read, brought))

    return load_units(con, read.units, report, lake, prune=prune, strict=strict, duplicates=duplicates, side=side,
                      skip_anomalies=SKIPPED_ANOMALIES)


def _store_side(con, read: IndexRead, removed: list[str], written: list[str], recorded_at: datetime) -> None:
    """Replace the side tables' rows of ``removed`` files by those of ``written`` (models after aliases)."""
    for table in ("agentic_runs", "model_metadata", "reported_scores"):
        con.execute(f"DELETE FROM {table} WHERE source_ref IN (SELECT unnest(?::VARCHAR[]))", [removed])
    aliases = dict(con.execute("SELECT alias, model FROM model_aliases").fetchall())
    wanted = set(written)

    def model(folder: ModelDir) -> str:
        return aliases.get(folder.index_model, folder.index_model)

    runs = [one for rel, one in read.instances.items() if rel in wanted]
    if runs:
        lengths = [one.parsed.table.num_rows for one in runs]
        table = pa.table({
            "model": pa.array([model(one.folder) for one, n in zip(runs, lengths) for _ in range(n)], pa.string()),
            "index_model": pa.array([one.folder.index_model for one, n in zip(runs, lengths) for _ in range(n)]),
            "agent": pa.array([one.folder.agent for one, n in zip(runs, lengths) for _ in range(n)]),
            "benchmark": pa.array([one.benchmark for one, n in zip(runs, lengths) for _ in range(n)]),
            "instance_id": pa.concat_arrays([one.parsed.table.column("instance_id").combine_chunks() for one in runs]),
            "resolved": pa.concat_arrays([one.parsed.table.column("score").combine_chunks() for one in runs]),
            "cost": pa.concat_arrays([one.parsed.table.column("cost").combine_chunks() for one in runs]),
            "source_ref": pa.array([one.rel for one, n in zip(runs, lengths) for _ in range(n)]),
        })
        _insert(con, "agentic_runs", table, recorded_at)
    meta = [(rel, row) for rel, row in read.metadata.items() if rel in wanted]
    if meta:
        columns = ["agent_name", "agent_version", "metadata_model", "openness", "country", "tool_usage",
                   "release_date", *_METADATA_NUMBERS, "supports_vision", "submission_time", "available", "raw"]
        table = pa.table({"model": [model(r["folder"]) for _, r in meta],
                          "index_model": [r["folder"].index_model for _, r in meta],
                          "agent": [r["folder"].agent for _, r in meta],
                          **{c: [r[c] for _, r in meta] for c in columns},
                          "source_ref": [rel for rel, _ in meta]})
        _insert(con, "model_metadata", table, recorded_at)
    reported = [(rel, row) for rel, rows in read.reported.items() if rel in wanted for row in rows]
    if reported:
        columns = ["benchmark", "index_benchmark", *_REPORTED_NUMBERS, *_REPORTED_TEXT, "component_scores", "raw"]
        table = pa.table({"model": [model(r["folder"]) for _, r in reported],
                          "index_model": [r["folder"].index_model for _, r in reported],
                          "agent": [r["folder"].agent for _, r in reported],
                          **{c: [r[c] for _, r in reported] for c in columns},
                          "source_ref": [rel for rel, _ in reported]})
        _insert(con, "reported_scores", table, recorded_at)


def _insert(con, name: str, table: pa.Table, recorded_at: datetime) -> None:
    with registered(con, side_rows=table):
        con.execute(f"INSERT INTO {name} BY NAME SELECT *, ? AS source, ? AS recorded_at FROM side_rows",
                    [SOURCE, recorded_at])


def _warehouse_anomalies(con, read: IndexRead) -> list[Anomaly]:
    """What only the warehouse can tell: index runs that disagree with the rows of another source for the
    same model, benchmark and instance, and index names that look like a model the warehouse spells
    otherwise (with the `pace alias add` line)."""
    out = []
    chosen = preference.preference_of(con)
    rows = con.execute(f"""
        WITH cells AS (
            SELECT model, target, subdir FROM target_rows_by_source
            GROUP BY ALL HAVING count(DISTINCT source) > 1),
        mine AS (
            SELECT t.* FROM target_rows_by_source AS t SEMI JOIN cells USING (model, target, subdir)),
        paired AS (
            SELECT model, target, instance_id,
                   max(CASE WHEN source = '{preference.PACE}' THEN score END) AS a,
                   max(CASE WHEN source = '{SOURCE}' THEN score END) AS b,
                   count(*) FILTER (WHERE source = '{preference.PACE}') AS in_a,
                   count(*) FILTER (WHERE source = '{SOURCE}') AS in_b
            FROM mine GROUP BY ALL),
        index_files AS (
            SELECT model, target, min(source_ref) AS index_file FROM mine WHERE source = '{SOURCE}' GROUP BY ALL)
        SELECT p.model, p.target, count(*) FILTER (WHERE in_a > 0 AND in_b > 0) AS shared,
               count(*) FILTER (WHERE in_a > 0 AND in_b > 0 AND a IS DISTINCT FROM b) AS differ,
               count(*) FILTER (WHERE in_b = 0) AS only_a, count(*) FILTER (WHERE in_a = 0) AS only_b,
               avg(a) AS mean_a, avg(b) AS mean_b, any_value(f.index_file) AS index_file
        FROM paired AS p JOIN index_files AS f USING (model, target)
        GROUP BY p.model, p.target ORDER BY p.model, p.target""").fetchall()
    quiet = []
    for model, target, shared, differ, only_a, only_b, mean_a, mean_b, index_file in rows:
        used = chosen.get(model, chosen.get(preference.EVERY_MODEL, preference.PACE))
        other = SOURCE if used == preference.PACE else preference.PACE
        if not differ:
            quiet.append(f"{model}/{target}")
            continue
        extra = ", ".join(part for part in (f"{only_a} only in the Pace rows" if only_a else "",
                                            f"{only_b} only in the index" if only_b else "") if part)
        out.append(Anomaly("source_disagreement", f"{model} {target}",
                           f"the Pace rows and {index_file} differ on {differ} of {shared} shared instances "
                           f"(means {_pct(mean_a)} / {_pct(mean_b)}{'; ' + extra if extra else ''}); views use "
                           f"{used} (`--prefer {model}={other}` to switch; both kept, see source_disagreements)"))
    if quiet:
        read.report.notes.append(f"{len(quiet)} (model, target) cells have rows of both sources that agree on every "
                                 f"shared instance (id sets may differ): {_short(sorted(quiet), 4)}")
    out += _alias_suggestions(con, read)
    return out


def _alias_suggestions(con, read: IndexRead) -> list[Anomaly]:
    """An index model name that is no model with source rows but names one the warehouse holds: the
    README's spellings (:data:`KNOWN_SPELLINGS`) and names with the same :func:`spelling_key`."""
    aliases = dict(con.execute("SELECT alias, model FROM model_aliases").fetchall())
    present = {m for (m,) in con.execute("SELECT DISTINCT model FROM scores").fetchall()}
    sourced = {m for (m,) in con.execute("SELECT model FROM models WHERE known").fetchall()}
    by_key = defaultdict(list)
    for m in sorted(sourced):
        by_key[spelling_key(m)].append(m)
    out = []
    for name in sorted({f.index_model for f in read.folders}):
        if name in aliases or name in sourced:
            continue
        known = KNOWN_SPELLINGS.get(name)
        candidates = [known] if known in present and known != name else \
            [m for m in by_key.get(spelling_key(name), []) if m != name]
        if len(candidates) == 1:
            # --yes: the rename moves a whole model's rows, which `pace alias add` asks to confirm
            line = pace_command("alias", "add", name, candidates[0], "--yes")
            out.append(Anomaly("alias_suggestion", name, f"no source rows under this name, but it looks like "
                               f"{candidates[0]!r}: `{line}` (not applied)", items=[line]))
    return out


def _notes(con, read: IndexRead, brought: set[str]) -> list[str]:
    notes = []
    chosen = preference.preference_of(con)
    if chosen:
        notes.append("preference: " + ", ".join(f"{m} -> {s}" for m, s in chosen.items())
                     + " (models without a choice: pace)")
    roles = dict(con.execute("SELECT benchmark, role FROM benchmarks WHERE benchmark IN (SELECT unnest(?::VARCHAR[]))",
                             [sorted(brought)]).fetchall())
    for benchmark, role in sorted(roles.items()):
        if role != "target":
            notes.append(f"{benchmark} has the role {role!r} here: its rows are stored but no method predicts it "
                         f"(`{pace_command('benchmarks', 'set', benchmark, 'target')}`)")
    aliases = dict(con.execute("SELECT alias, model FROM model_aliases").fetchall())
    models = sorted({aliases.get(f.index_model, f.index_model) for f in read.folders})
    with_runs = {aliases.get(one.folder.index_model, one.folder.index_model) for one in read.instances.values()}
    sourced = {m for (m,) in con.execute("SELECT model FROM models WHERE known").fetchall()}
    agentic_only = [m for m in models if m not in sourced and m in with_runs]
    described_only = [m for m in models if m not in sourced and m not in with_runs]
    notes.append(f"{len(models)} models in the index ({len(read.folders)} folders): {len(models) - len(agentic_only) - len(described_only)} "
                 f"have source rows; {len(agentic_only)} have agentic results only (the source-based methods leave "
                 f"them out until their sources are ingested): {_short(agentic_only, 8)}"
                 + (f"; {len(described_only)} have metadata only: {_short(described_only, 8)}" if described_only else ""))
    return notes


#: the tables that name models besides scores (renamed by `pace alias add`)
SIDE_TABLES = ("agentic_runs", "model_metadata", "reported_scores")


def rename_model(con: duckdb.DuckDBPyConnection, alias: str, model: str) -> None:
    """``pace alias add``: the side tables' rows of ``alias`` become ``model``'s (inside its transaction)."""
    for table in SIDE_TABLES:
        con.execute(f"UPDATE {table} SET model = ? WHERE model = ?", [model, alias])
