"""Read HELM run folders into score rows (``pace import helm``).

``helm-run`` writes one folder per run under ``benchmark_output/runs/<suite>/``, named by the run
spec (``mmlu:subject=anatomy,method=multiple_choice_joint,model=openai_gpt2``). A folder holds, among
others:

* ``run_spec.json``: the run spec; ``name`` (scenario, then ``key=value`` arguments) and
  ``adapter_spec.model`` (the model, e.g. ``openai/gpt2``);
* ``per_instance_stats.json``: a list with one entry per (instance, train trial[, perturbation]):
  ``instance_id``, ``train_trial_index``, optional ``perturbation`` and ``stats``, a list of statistics
  each named by a ``MetricName`` (``name``, and the instance's context: ``split``, ``sub_split``,
  ``perturbation``) with ``count``, ``sum``, ``mean``, ...;
* ``scenario_state.json``: the adapter spec and ``request_states``, each with its ``instance``
  (``id``, ``split``, ``input``, ``references``, ...).

A run's task is its scenario name (before the ``:``); the map's ``[tasks.<scenario>]`` names the
metric (``exact_match``, ``quasi_exact_match``, ...), the ``split`` (default ``test``) and the leaf;
``subdir`` may use the run's arguments (``subdir = "{subject}"``). A row's score is the statistic's mean
for the unperturbed instance (``sum / count`` when no mean is written), averaged over train trials.
An instance of that split in ``scenario_state.json`` without the statistic (a failed request) is
stored as NULL, never 0. ``id = "instance_id"`` keeps HELM's own id; ``id = "instance.<field>"`` takes a
field of the instance in ``scenario_state.json`` (e.g. ``instance.extra_data.id``).
"""
from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import pyarrow as pa

from ingest.csvfile import finish_rows, sha256_of
from ingest.errors import IngestError
from ingest.harness_map import HarnessMap, Leaf
from ingest.lm_eval import FileRead, json_document

LAYOUT = "helm run"
STATS = "per_instance_stats.json"
SPEC = "run_spec.json"
STATE = "scenario_state.json"


def discover(root: Path) -> list[Path]:
    """The ``per_instance_stats.json`` of every run at ``root`` (one run folder, the file itself, or a
    folder searched recursively)."""
    if not root.exists():
        raise IngestError(str(root), "no such file or folder")
    if root.is_file():
        if root.name != STATS:
            raise IngestError(str(root), f"not a HELM run ({STATS} beside {SPEC} and {STATE})")
        return [root]
    found = sorted(p for p in root.rglob(STATS)
                   if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts))
    if not found:
        raise IngestError(str(root), f"no HELM runs here (folders holding {STATS}, {SPEC} and {STATE}, as "
                          "helm-run writes them under benchmark_output/runs/<suite>/)")
    return found


def run_name(spec: dict, path: Path) -> tuple[str, dict[str, str]]:
    """(scenario, arguments) of a run spec name ``scenario:key=value,key=value``."""
    name = spec.get("name") if isinstance(spec, dict) else None
    if not isinstance(name, str) or not name.strip():
        raise IngestError(str(path), "run_spec.json has no run name (`name`)")
    scenario, _, rest = name.partition(":")
    args = {}
    for part in filter(None, rest.split(",")):
        key, eq, value = part.partition("=")
        if eq:
            args[key.strip()] = value.strip()
    return scenario.strip(), args


def _field(value, path: str):
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _value(stat: dict) -> float | None:
    mean = stat.get("mean")
    if isinstance(mean, (int, float)) and not isinstance(mean, bool):
        return float(mean) if math.isfinite(mean) else None
    total, count = stat.get("sum"), stat.get("count")
    if isinstance(total, (int, float)) and isinstance(count, (int, float)) and count:
        value = float(total) / float(count)
        return value if math.isfinite(value) else None
    return None


def read(path: Path, hmap: HarnessMap, model: str | None, duplicates: str) -> FileRead:
    """Parse one run folder (given by its per_instance_stats.json) with the map."""
    folder = path.parent
    spec_path, state_path = folder / SPEC, folder / STATE
    if not spec_path.is_file():
        raise IngestError(str(path), f"no {SPEC} beside it: not a HELM run folder")
    spec_bytes = spec_path.read_bytes()
    spec = json_document(spec_path, spec_bytes)
    scenario, args = run_name(spec, spec_path)
    entry = hmap.task(scenario)
    out = FileRead(task=scenario, entry=entry)
    if entry is None:
        return out
    data = path.read_bytes()
    state_bytes = state_path.read_bytes() if state_path.is_file() else b""
    # the rows depend on all three files: the unit's fingerprint covers them
    out.sha256 = sha256_of(b"".join(sha256_of(b).encode() for b in (data, spec_bytes, state_bytes)))
    out.model = model or hmap.model or str(_field(spec, "adapter_spec.model") or "").strip()
    if not out.model:
        raise IngestError(str(spec_path), "no adapter_spec.model in the run spec: pass --model NAME")
    records = json_document(path, data)
    if not isinstance(records, list):
        raise IngestError(str(path), "not HELM per-instance stats (a JSON list of {instance_id, stats})")

    state = None
    if state_bytes:
        state = json_document(state_path, state_bytes)
    elif entry.id != "instance_id":
        raise IngestError(str(path), f"id {entry.id!r} reads {STATE}, which is not beside it")
    instances = {}
    for rs in (state or {}).get("request_states", []) if isinstance(state, dict) else []:
        inst = rs.get("instance") if isinstance(rs, dict) else None
        if isinstance(inst, dict) and inst.get("id") is not None and inst.get("perturbation") is None:
            instances.setdefault(str(inst["id"]), inst)

    split = entry.split or "test"
    leaves = []
    for leaf in entry.leaves:
        try:
            subdir = leaf.subdir.format_map(args)
        except (KeyError, ValueError, IndexError) as exc:
            raise IngestError(hmap.path, f"[tasks.{entry.task}]: subdir {leaf.subdir!r} names {exc}, which run "
                              f"{scenario} does not have (its arguments: {', '.join(sorted(args)) or 'none'})") \
                from None
        leaves.append(Leaf(leaf.benchmark, subdir, leaf.metric))

    seen_names: set[tuple[str, str]] = set()
    for leaf in leaves:
        values: dict[str, list[float | None]] = defaultdict(list)
        order: list[str] = []
        for k, rec in enumerate(records):
            if not isinstance(rec, dict) or "instance_id" not in rec or not isinstance(rec.get("stats"), list):
                raise IngestError(str(path), f"entry {k} is not a per-instance record (instance_id, stats)")
            if rec.get("perturbation"):
                continue
            iid = str(rec["instance_id"])
            for stat in rec["stats"]:
                name = stat.get("name") if isinstance(stat, dict) else None
                if not isinstance(name, dict):
                    continue
                seen_names.add((str(name.get("name")), str(name.get("split"))))
                # a per-instance statistic carries its instance's context (split, sub_split, perturbation)
                if name.get("name") == leaf.metric and name.get("split") == split and not name.get("perturbation"):
                    if iid not in values:
                        order.append(iid)
                    values[iid].append(_value(stat))
        if not order:
            have = ", ".join(f"{n} ({s})" for n, s in sorted(seen_names)[:12])
            raise IngestError(str(path), f"no statistic {leaf.metric!r} on split {split!r} (statistics here: "
                              f"{have or 'none'}); fix [tasks.{entry.task}] in {hmap.path}")
        missing = [i for i, inst in instances.items() if inst.get("split") == split and i not in values]
        if missing:
            out.notes.append(f"{path.parent.name}: {len(missing)} {split} instance(s) without {leaf.metric} "
                             "(a failed request?) stored as NULL")
        trials = max(len(v) for v in values.values())
        if trials > 1:
            out.notes.append(f"{path.parent.name}: {trials} train trials per instance, averaged")
        ids, scores = [], []
        for iid in order + missing:
            usable = [v for v in values.get(iid, []) if v is not None]
            ids.append(_instance_id(iid, entry.id, instances, path))
            scores.append(sum(usable) / len(usable) if usable else None)
        table = pa.table({"instance_id": pa.array(ids, pa.string()), "score": pa.array(scores, pa.float64()),
                          "metric_name": pa.array([f"{leaf.metric},{split}"] * len(ids), pa.string())})
        out.leaves.append((leaf, finish_rows(str(path), out.sha256, LAYOUT, table, duplicates,
                                             line_of=lambda row: None)))
    return out


def _instance_id(iid: str, ident: str, instances: dict, path: Path) -> str:
    if ident == "instance_id":
        return iid
    field = ident[len("instance."):]
    value = _field(instances.get(iid), field)
    if value is None or isinstance(value, (bool, dict, list)):
        fields = sorted(instances.get(iid, {})) if iid in instances else []
        raise IngestError(str(path), f"instance {iid!r}: no usable {ident!r} in {STATE} (instance fields: "
                          f"{', '.join(fields) or 'instance not found'})")
    text = str(int(value) if isinstance(value, float) and value.is_integer() else value).strip()
    if not text or any(c in text for c in "\r\n"):
        raise IngestError(str(path), f"instance {iid!r}: {ident} {value!r} is not usable as an instance id")
    return text
