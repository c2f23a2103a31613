"""The map of ``pace import lm-eval|inspect``: a TOML file saying, per harness task, which Pace leaf
(benchmark, subdir) its samples fill, which per-sample metric is the score and what the instance id is.

    model = "Qwen2.5-7B-Instruct"      # optional: the model's name here (else --model, else the harness's)

    [tasks.mmlu_pro]                   # a harness task (lm-eval: samples_<task>_<time>.jsonl; Inspect: the task)
    benchmark = "mmlu_pro"
    metric = "exact_match"             # the per-sample field (lm-eval) or scorer (Inspect) that is the score
    id = "doc.question_id"             # lm-eval: "doc_id" (the doc's index) or "doc.<field>";
                                       # Inspect: "id" (the sample id) or "metadata.<field>"
    filter = "custom-extract"          # lm-eval only, when the task logs several filters

    [tasks.ifeval]                     # one task filling several leaves: subdir -> metric
    benchmark = "ifeval"
    id = "doc_id"
    metric = { prompt_level_strict_acc = "prompt_level_strict_acc", inst_level_strict_acc = "inst_level_strict_acc" }

HELM (``pace import helm``) adds ``split`` (the stats split, default ``test``), a ``subdir`` may name
run-spec arguments (``subdir = "{subject}"``), and ``id`` is ``instance_id`` or ``instance.<field>``
(from scenario_state.json). Every Eval Ever (``pace import eee``) needs no map for files pace wrote;
its ``metric`` is ``score`` (``evaluation.score``, the default) or ``is_correct``, and ``id`` is
``sample_id`` or ``metadata.<field>``.

Every mistake (unknown key, missing benchmark, a benchmark name that cannot be a lake folder, ...)
is an :class:`IngestError` naming the map file and the line of the task's table.
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from ingest.errors import IngestError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

KINDS = ("lm-eval", "inspect", "helm", "eee")
DEFAULT_ID = {"lm-eval": "doc_id", "inspect": "id", "helm": "instance_id", "eee": "sample_id"}
ID_PREFIX = {"lm-eval": "doc.", "inspect": "metadata.", "helm": "instance.", "eee": "metadata."}
_KEYS = {"lm-eval": {"benchmark", "subdir", "metric", "id", "filter"},
         "inspect": {"benchmark", "subdir", "metric", "id", "score_key"},
         "helm": {"benchmark", "subdir", "metric", "id", "split"},
         "eee": {"benchmark", "subdir", "metric", "id"}}
#: the per-sample value of an Every Eval Ever instance record: evaluation.score, or evaluation.is_correct
EEE_METRICS = ("score", "is_correct")
_TOP_KEYS = {"model", "tasks"}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")      # a benchmark becomes a lake folder name


@dataclass(frozen=True)
class Leaf:
    benchmark: str
    subdir: str
    metric: str


@dataclass(frozen=True)
class TaskMap:
    task: str
    leaves: tuple[Leaf, ...]
    id: str
    filter: str | None = None          # lm-eval: keep the records of this filter
    score_key: str | None = None       # Inspect: the key of a dict-valued score
    split: str | None = None           # HELM: the stats split (test, valid)

    def mapping(self, kind: str, leaf: Leaf) -> str:
        """The JSON that ``score_files.mapping`` records for one leaf of this task."""
        entry = {"format": kind, "task": self.task, **asdict(leaf), "id": self.id}
        if self.filter is not None:
            entry["filter"] = self.filter
        if self.score_key is not None:
            entry["score_key"] = self.score_key
        if self.split is not None:
            entry["split"] = self.split
        return json.dumps(entry, sort_keys=True)


@dataclass(frozen=True)
class HarnessMap:
    path: str
    kind: str
    model: str | None
    tasks: dict[str, TaskMap]

    def task(self, name: str) -> TaskMap | None:
        """The entry for a harness task; Inspect's ``package/task`` also matches a plain ``task`` entry."""
        return self.tasks.get(name) or self.tasks.get(name.rsplit("/", 1)[-1])


def _line_of_table(text: str, task: str) -> int | None:
    pattern = re.compile(r"^[ \t]*\[[ \t]*tasks[ \t]*\.[ \t]*(\"?)" + re.escape(task) + r"\1[ \t]*\]", re.M)
    m = pattern.search(text)
    if m:
        return text.count("\n", 0, m.start()) + 1
    m = re.search(r"^[ \t]*\[[ \t]*tasks[ \t]*\]", text, re.M)
    return text.count("\n", 0, m.start()) + 1 if m else None


def _text(value, what: str, fail) -> str:
    if not isinstance(value, str) or not value.strip():
        fail(f"{what} must be a non-empty string, not {value!r}")
    if any(ord(c) < 32 for c in value):
        fail(f"{what} {value!r} contains a control character")
    return value.strip()


def load_map(path: str | Path, kind: str) -> HarnessMap:
    """Read and check the map at ``path`` for importer ``kind`` ('lm-eval' or 'inspect')."""
    path = Path(path)
    name = str(path)
    if not path.is_file():
        raise IngestError(name, "no such map file (a TOML file with one [tasks.<task>] table per harness task)")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IngestError(name, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        raise IngestError(name, f"not valid TOML: {str(exc).split(' (at line')[0]}",
                          line=int(m.group(1)) if m else None) from None

    def top_fail(message: str):
        raise IngestError(name, message)

    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        top_fail(f"unknown top-level key(s) {', '.join(unknown)} (allowed: model, [tasks.<task>])")
    model = _text(data["model"], "model", top_fail) if "model" in data else None
    tasks_raw = data.get("tasks")
    if not isinstance(tasks_raw, dict) or not tasks_raw:
        top_fail("no [tasks.<task>] table: the map must name at least one harness task")

    tasks: dict[str, TaskMap] = {}
    for task, entry in tasks_raw.items():
        line = _line_of_table(text, task)

        def fail(message: str, _task=task, _line=line):
            raise IngestError(name, f"[tasks.{_task}]: {message}", line=_line)

        if not isinstance(entry, dict):
            fail("must be a table (benchmark = ..., metric = ..., id = ...)")
        unknown = sorted(set(entry) - _KEYS[kind])
        if unknown:
            fail(f"unknown key(s) {', '.join(unknown)} for `pace import {kind}` "
                 f"(allowed: {', '.join(sorted(_KEYS[kind]))})")
        if "benchmark" not in entry:
            fail("missing `benchmark` (the Pace benchmark its samples belong to)")
        benchmark = _text(entry["benchmark"], "benchmark", fail)
        if not _NAME.match(benchmark):
            fail(f"benchmark {benchmark!r} must be letters, digits and _ . + - (it names a lake folder)")
        if "metric" not in entry and kind != "eee":
            fail("missing `metric` (the per-sample score: a metric name, or a table subdir -> metric)")
        metric = entry.get("metric", EEE_METRICS[0])
        if kind == "eee" and metric not in EEE_METRICS:
            fail(f"metric {metric!r} must be one of {', '.join(EEE_METRICS)} (evaluation.score or .is_correct)")
        if isinstance(metric, dict):
            if "subdir" in entry:
                fail("give either `subdir` with one metric, or `metric` as a table subdir -> metric, not both")
            if not metric:
                fail("`metric` is an empty table")
            leaves = tuple(Leaf(benchmark, _text(sub, "subdir", fail), _text(m, f"metric of subdir {sub!r}", fail))
                           for sub, m in metric.items())
        else:
            subdir = entry.get("subdir", "")
            if not isinstance(subdir, str) or any(ord(c) < 32 for c in subdir):
                fail(f"subdir must be a string, not {subdir!r}")
            leaves = (Leaf(benchmark, subdir.strip(), _text(metric, "metric", fail)),)
        ident = _text(entry.get("id", DEFAULT_ID[kind]), "id", fail)
        if ident != DEFAULT_ID[kind] and not (ident.startswith(ID_PREFIX[kind]) and len(ident) > len(ID_PREFIX[kind])):
            fail(f"id {ident!r} must be {DEFAULT_ID[kind]!r} or {ID_PREFIX[kind]}<field>")
        tasks[task] = TaskMap(
            task=task, leaves=leaves, id=ident,
            filter=_text(entry["filter"], "filter", fail) if "filter" in entry else None,
            score_key=_text(entry["score_key"], "score_key", fail) if "score_key" in entry else None,
            split=(_text(entry.get("split", "test"), "split", fail) if kind == "helm" else None))
    return HarnessMap(path=name, kind=kind, model=model, tasks=tasks)


def no_map(kind: str) -> HarnessMap:
    """The empty map of an import that needs none (``pace import eee`` of files pace wrote)."""
    return HarnessMap(path="(no map)", kind=kind, model=None, tasks={})
