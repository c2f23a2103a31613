"""What each benchmark is, for the runner: plan row -> call, instance -> request, response -> rows.

The client knows nothing of benchmarks; everything benchmark-specific lives here and in
``graders/``. A plan row ``(benchmark, subdir, instance_id)`` maps to a *call key*
``(benchmark, call_subdir, call_id)`` (the key of the ``instances`` table); rows that map to the
same key share one API call (runners.md §5):

* ``ifeval``: the four metric subdirs are one call (call_subdir ``''``); all four are written.
* ``repobench``: ``<subtask>_<metric>`` -> call_subdir ``<subtask>``; exact_match,
  edit_similarity (and codebleu when its extra is installed) are written.
* ``logiqa``: ids ``<doc>_strict-match`` / ``<doc>_flexible-extract`` -> one call per doc, each
  graded with *its own* filter (the published runner took whichever came first).
* metric-subdir benchmarks (aime25, gpqa, mmlu_cot, humaneval_chat, mbpp_chat): subdir is a
  metric variant; call_subdir ``''``; the score is written to every requested subdir.
* subdir-is-subtask benchmarks (planbench, bfcl, livecodebench, lifbench, acp_gen,
  visualwebbench): call_subdir = subdir.

Each entry declares its requirements (optional Python extras, vision, outside services such as
the LeetCode judge for non-Python debugbench or an LLM judge for infobench, and what is not
supported with the reason); :func:`unmet` reports every unmet one and the run refuses those calls
before any is paid. Every source benchmark of the published tree has a grader or a declared
outside service.
"""
from __future__ import annotations

import importlib.util
import json
import shutil
from dataclasses import dataclass, field
from typing import Iterable

from eval_runners.graders import get_grader


@dataclass(frozen=True)
class Requirements:
    vision: bool = False
    services: tuple[str, ...] = ()       # outside services (never contacted by default)
    binaries: tuple[str, ...] = ()       # executables that must be on PATH
    modules: tuple[str, ...] = ()        # importable Python modules (optional extras)
    judge: bool = False                  # needs an LLM judge
    unsupported: str | None = None       # why this runner cannot grade it (yet)


@dataclass(frozen=True)
class ScoreRow:
    subdir: str
    instance_id: str
    metric_name: str
    score: float | None


@dataclass(frozen=True)
class Target:
    subdir: str
    instance_id: str


@dataclass
class Benchmark:
    name: str
    kind: str                             # plain | metric_subdir | subtask | ifeval | repobench | logiqa
    grader: str | None                    # default grader name (an instance may name another)
    metric: str | None = None             # metric_name written (None: from the grader's keys)
    max_tokens: int = 4096                # answer budget; the client escalates once for empty reasoning output
    requires: Requirements = field(default_factory=Requirements)
    subtask_requires: dict = field(default_factory=dict)   # call_subdir (prefix) -> Requirements
    subtasks: tuple[str, ...] | None = None                 # known call subdirs (None: any)
    id_requires: tuple = ()                                 # (instance id prefix, Requirements) pairs
    other_ids_require: Requirements | None = None           # ids matching no prefix above

    # ---- plan row -> call -----------------------------------------------------------------
    def call_key(self, subdir: str, instance_id: str) -> tuple[str, str]:
        if self.kind == "repobench":
            for suffix in ("_codebleu", "_edit_similarity", "_exact_match"):
                if subdir.endswith(suffix):
                    return subdir[: -len(suffix)], instance_id
            raise ValueError(f"repobench subdir {subdir!r} has no metric suffix")
        if self.kind == "ifeval":
            if subdir not in IFEVAL_SUBDIRS:
                raise ValueError(f"ifeval subdir {subdir!r} is not one of {IFEVAL_SUBDIRS}")
            return "", instance_id
        if self.kind == "logiqa":
            doc, sep, flt = instance_id.rpartition("_")
            if not sep or flt not in ("strict-match", "flexible-extract"):
                raise ValueError(f"logiqa id {instance_id!r} is not <doc>_strict-match|flexible-extract")
            return "", doc
        if self.kind == "metric_subdir":
            return "", instance_id
        if self.kind == "subtask":
            if self.subtasks is not None and subdir not in self.subtasks:
                raise ValueError(f"{self.name} subdir {subdir!r} is unknown")
            return subdir, instance_id
        return subdir, instance_id

    def requirements(self, call_subdir: str, targets: Iterable[Target] = ()) -> list[Requirements]:
        out = [self.requires]
        for prefix, req in self.subtask_requires.items():
            if call_subdir == prefix or call_subdir.startswith(prefix):
                out.append(req)
        targets = list(targets)
        if self.kind == "repobench" and any(t.subdir.endswith("_codebleu") for t in targets):
            out.append(Requirements(modules=("codebleu", "tree_sitter_python")))
        if self.other_ids_require is not None:
            for t in targets:
                hit = [r for prefix, r in self.id_requires if t.instance_id.startswith(prefix)]
                out += hit or [self.other_ids_require]
        return out

    # ---- instance -> request --------------------------------------------------------------
    def request(self, instance: dict) -> tuple[list, dict]:
        gen = dict(instance.get("generation") or {})
        params = {"max_tokens": int(gen.pop("max_tokens", self.max_tokens))}
        for k in ("temperature", "top_p", "stop", "seed"):
            if k in gen:
                params[k] = gen[k]
        return instance["messages"], params

    def instance_unmet(self, instance: dict) -> list[str]:
        """Requirements that depend on the instance itself (e.g. ifeval checks not implemented)."""
        if self.kind == "ifeval":
            from eval_runners.graders.ifeval import unsupported
            bad = unsupported((instance.get("reference") or {}).get("instruction_id_list", []))
            if bad:
                return [f"unsupported ifeval instruction(s) {sorted(set(bad))} (need a language detector / not implemented)"]
        if self.name == "debugbench" and instance.get("grader") == "debugbench_python" \
                and not (instance.get("reference") or {}).get("tests"):
            return ["no local tests in the pack for this problem: grading it needs the LeetCode judge"]
        return []

    def grader_for(self, instance: dict):
        return get_grader(instance.get("grader") or self.grader)

    # ---- response -> rows -----------------------------------------------------------------
    def grade(self, instance: dict, response: str, targets: list[Target]) -> list[ScoreRow]:
        g = self.grader_for(instance)
        call_subdir, call_id = instance["subdir"], instance["instance_id"]
        config = {"subtask": call_subdir, "instance_id": call_id, **(instance.get("grader_config") or {})}
        metrics = g(instance.get("reference") or {}, response, config)
        if self.kind == "ifeval":
            return [ScoreRow(m, call_id, m, metrics[m]) for m in IFEVAL_SUBDIRS]
        if self.kind == "repobench":
            return [ScoreRow(f"{call_subdir}_{m}", call_id, m, metrics[m])
                    for m in ("exact_match", "edit_similarity", "codebleu") if m in metrics]
        if self.kind == "logiqa":
            return [ScoreRow("", f"{call_id}_{f}", "exact_match", metrics[f])
                    for f in ("strict-match", "flexible-extract")]
        metric = self.metric or next(iter(metrics))
        value = metrics[metric] if metric in metrics else next(iter(metrics.values()))
        if self.kind == "metric_subdir":
            subdirs = sorted({t.subdir for t in targets}) or [call_subdir]
            return [ScoreRow(s, call_id, metric, value) for s in subdirs]
        return [ScoreRow(call_subdir, call_id, metric, value)]


IFEVAL_SUBDIRS = ("prompt_level_strict_acc", "inst_level_strict_acc",
                  "prompt_level_loose_acc", "inst_level_loose_acc")

PLANNING = Requirements(modules=("unified_planning",))
PLANBENCH_TASKS = ("task_1_plan_generation", "task_2_plan_optimality", "task_3_plan_verification",
                   "task_4_plan_reuse", "task_5_plan_generalization", "task_6_replanning",
                   "task_7_plan_execution", "task_8_1_goal_shuffling", "task_8_2_full_to_partial",
                   "task_8_3_partial_to_full")
LIFBENCH_TASKS = ("list-blur_offset_query_element", "list-blur_offset_query_id", "list-multi_query_id",
                  "list-offset_query_element", "list-offset_query_id", "list-single_query_id",
                  "multidoc-batch_label", "multidoc-find_dup_text", "onedoc-extract", "onedoc-qa",
                  "onedoc-repeat")
ACP_TASKS = ("acp_app_gen", "acp_areach_gen", "acp_just_gen", "acp_land_gen", "acp_nexta_gen",
             "acp_prog_gen", "acp_reach_gen", "acp_val_gen")
LCB_SCENARIOS = ("codegeneration", "selfrepair", "testoutputprediction", "codeexecution")
LEETCODE = Requirements(services=("LeetCode online judge (personal session cookies)",))
BFCL_NEEDS_OFFICIAL = ("Java / JavaScript AST checking needs BFCL's own checkers (bfcl-eval, which pulls "
                       "torch and tree-sitter 0.21; not installed)")

REGISTRY: dict[str, Benchmark] = {b.name: b for b in [
    Benchmark("aime25", "metric_subdir", "exact_number", "exact_match", max_tokens=32768),
    Benchmark("gpqa", "metric_subdir", "choice", "exact_match", max_tokens=16384),
    Benchmark("mmlu_cot", "metric_subdir", "choice", "exact_match", max_tokens=8192),
    Benchmark("logiqa", "logiqa", "choice_filters", "exact_match", max_tokens=8192),
    Benchmark("mmmu", "plain", "mmmu", "mmmu_acc", max_tokens=8192, requires=Requirements(vision=True)),
    Benchmark("visualpuzzles", "plain", "choice", "exact_match", max_tokens=8192,
              requires=Requirements(vision=True)),
    Benchmark("visualwebbench", "plain", "visualwebbench", None, max_tokens=8192,
              requires=Requirements(vision=True, modules=("rouge_score",))),
    Benchmark("ifeval", "ifeval", "ifeval", None, max_tokens=8192),
    Benchmark("repobench", "repobench", "repobench", None, max_tokens=1024),
    Benchmark("humaneval_chat", "metric_subdir", "code_function", "pass@1", max_tokens=8192),
    Benchmark("mbpp_chat", "metric_subdir", "code_function", "pass_at_1", max_tokens=8192),
    Benchmark("livecodebench", "subtask", "code_tests", "pass@1", max_tokens=16384, subtasks=LCB_SCENARIOS),
    Benchmark("planbench", "subtask", "planbench_plan", None, max_tokens=8192, subtasks=PLANBENCH_TASKS,
              subtask_requires={t: PLANNING for t in PLANBENCH_TASKS
                                if t not in ("task_3_plan_verification", "task_7_plan_execution")}),
    Benchmark("acp_gen", "subtask", "acp_gen", "score", max_tokens=8192, subtasks=ACP_TASKS, requires=PLANNING),
    Benchmark("lifbench", "subtask", "lifbench", "total_score", max_tokens=4096, subtasks=LIFBENCH_TASKS),
    Benchmark("bfcl", "subtask", "bfcl_ast", "accuracy", max_tokens=4096,
              subtask_requires={"multi_turn": Requirements(unsupported="needs BFCL's executable API classes "
                                                           "(state-based multi-turn checker)"),
                                "agentic_web_search": Requirements(services=("web search API",)),
                                "agentic_memory": Requirements(unsupported="a multi-step agent loop over BFCL's "
                                                               "memory backends, not a single call"),
                                "java": Requirements(unsupported=BFCL_NEEDS_OFFICIAL),
                                "javascript": Requirements(unsupported=BFCL_NEEDS_OFFICIAL),
                                "simple_java": Requirements(unsupported=BFCL_NEEDS_OFFICIAL),
                                "simple_javascript": Requirements(unsupported=BFCL_NEEDS_OFFICIAL)}),
    Benchmark("debugbench", "plain", "debugbench_python", "debug_accuracy", max_tokens=8192,
              id_requires=(("python", Requirements()),), other_ids_require=LEETCODE),
    Benchmark("infobench", "plain", None, "accuracy",
              requires=Requirements(judge=True, services=("an LLM judge for InfoBench's yes/no questions",))),
    Benchmark("beir_nfcorpus", "plain", None, None,
              requires=Requirements(unsupported="aggregate retrieval metric, not a per-instance score")),
]}


def get(benchmark: str) -> Benchmark:
    try:
        return REGISTRY[benchmark]
    except KeyError:
        raise KeyError(f"unknown benchmark {benchmark!r}") from None


def unmet(reqs: Iterable[Requirements], *, vision: bool, services: Iterable[str] = (),
          judge: bool = False) -> list[str]:
    """Human-readable reasons these requirements are not met here (empty: all met)."""
    out: list[str] = []
    services = set(services)
    for r in reqs:
        if r.unsupported:
            out.append(f"unsupported: {r.unsupported}")
        if r.vision and not vision:
            out.append("needs a vision-capable model (pass --vision if the model accepts images)")
        for b in r.binaries:
            if shutil.which(b) is None:
                out.append(f"needs the `{b}` binary on PATH")
        for m in r.modules:
            if importlib.util.find_spec(m) is None:
                out.append(f"needs the Python package `{m}` (optional extra; not installed)")
        for s in r.services:
            if s not in services:
                out.append(f"needs an outside service: {s}")
        if r.judge and not judge:
            out.append("needs an LLM judge")
    return list(dict.fromkeys(out))


def instance_from_row(row: dict) -> dict:
    """An ``instances`` table row (JSON text columns) as a record dict."""
    rec = dict(row)
    for k in ("messages", "reference", "grader_config", "generation"):
        if isinstance(rec.get(k), str):
            rec[k] = json.loads(rec[k])
    return rec
