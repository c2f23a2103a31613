"""SYNTHETIC Pace-shaped results trees, for tests and ingest benchmarks.

Everything this module writes is SYNTHETIC: made-up models, made-up instances and made-up
scores drawn from a seeded random number generator. No real benchmark result is read, copied or
imitated value by value; only the *shape* of the published Pace tree is mimicked:

    <root>/<benchmark>/<Model>.csv            one-leaf benchmarks (gaia, swebench, mmmu, ...)
    <root>/<benchmark>/<subdir>/<Model>.csv   multi-leaf benchmarks (planbench/task_*, ...)

Each CSV has the header ``id,score,metric_name`` and one row per instance, with the real
benchmark/subdir names, metric_name conventions and id styles (``visualpuzzles_125``, plain
integers for planbench/ifeval, ``<org>__<repo>-<n>`` for the SWE-style targets, uuid-like gaia
ids, ...). Ids are written in natural order, so they do not sort as strings (``_10`` < ``_2``).

Scores come from a latent-ability model. Each model has ``K = 4`` abilities (reasoning, coding,
vision, long_context): a shared general factor plus a specific part. Each instance has a loading
vector over abilities (sparse for source benchmarks -- mostly 1-2 abilities --, close to the
benchmark's fixed mix for targets), a difficulty and a discrimination; with
``logit = disc * (loading . ability - difficulty)``:

* binary scores are ``Bernoulli(sigmoid(logit))`` written as ``0.0`` / ``1.0``;
* continuous scores (lifbench, repobench codebleu/edit_similarity, visualwebbench rouge_l/f1)
  are a clipped beta draw with mean about ``sigmoid(logit)``, in ``[0, 1]``;
* ifeval ``inst_level_*`` scores are the fraction of 1-3 instructions followed, so they take
  values in ``{0, 1/3, 1/2, 2/3, 1}``; ``prompt_level_*`` is 1 when all were followed, and
  ``loose >= strict`` instance by instance.

The four agentic targets load on fixed mixes (gaia: reasoning + long context, swebench: coding,
swebench_multimodal: coding + vision, swtbench: coding + reasoning), so source benchmarks carry
real signal about them. The true abilities and the true expected target means (the mean of
``sigmoid(logit)`` over all target instances, before any instance is dropped) are returned in
:class:`SyntheticSummary`.

Imperfections, as in the real tree (all deterministic per seed):

* ``missing_files``: the vision benchmarks (visualwebbench, visualpuzzles, mmmu) exist only for
  about 4/7 of the models, several planbench tasks lack models (task_5/task_6 about half), and
  1-2 further random (model, leaf) files are missing. Targets are always complete.
* ``missing_instances``: some files are shorter -- random instances dropped in the targets
  (gaia up to ~18 %, swebench_multimodal has one model at ~half and one at ~3/4 of the rows),
  prefix truncation in some repobench subtasks / lifbench leaves, a few planbench drops.
* ``crlf_fraction`` of the files (default 1/2) use CRLF line endings, the rest LF.

There are never malformed rows, duplicated ids or non-numeric scores.

A ``README.md`` carrying the marker ``SYNTHETIC``, the seed and the parameters is written at the
tree root (tree walkers ignore non-CSV files).

Command line: ``python -m ingest.synthetic OUT [--seed S] [--scale X] [--n-models N]``.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = [
    "ABILITIES",
    "SYNTHETIC_MARKER",
    "TARGETS",
    "SyntheticSummary",
    "describe",
    "generate_tree",
    "model_names",
]

SYNTHETIC_MARKER = "SYNTHETIC"
ABILITIES = ("reasoning", "coding", "vision", "long_context")
TARGETS = ("gaia", "swebench", "swebench_multimodal", "swtbench")
VISION_BENCHMARKS = ("visualwebbench", "visualpuzzles", "mmmu")
HEADER = "id,score,metric_name"

_R, _C, _V, _L = range(4)

# Invented model names (dots and hyphens like real file names; none is a real model).
_NAMES = (
    "Orrin-4.5-Pro", "Orrin-4.5-Mini", "Orrin-5.0", "Talis-3.2", "Talis-3.2-Coder",
    "Vesper-2.1", "Vesper-2.5-Flash", "Quill-K3", "Quill-K3.5", "Brenna-7.1",
    "Brenna-7.5-Reasoner", "Mistle-1.2", "Corvid-9B-Instruct", "Halvard-480B-A35B",
    "Solenne-4", "Tamsin-0.9", "Ixora-2.2-Vision", "Pellam-6.0", "Ravel-3.3", "Wyck-1.8",
)


def model_names(n_models: int) -> list[str]:
    """Deterministic synthetic model names (independent of the seed)."""
    if n_models < 1:
        raise ValueError("n_models must be >= 1")
    names = list(_NAMES[:n_models])
    names += [f"Model-{i:02d}" for i in range(len(names) + 1, n_models + 1)]
    return names


@dataclass
class SyntheticSummary:
    """What :func:`generate_tree` wrote, plus the ground truth behind it (SYNTHETIC)."""

    root: Path
    seed: int
    scale: float
    models: list[str]
    ability_names: tuple[str, ...]
    abilities: np.ndarray                     # (n_models, K), rows aligned with ``models``
    expected_target_means: dict[str, dict[str, float]]   # target -> model -> E[score]
    n_files: int
    n_rows: int
    leaves: list[str]                         # "bench" or "bench/subdir", sorted
    params: dict = field(default_factory=dict)
    multimodal_models: list[str] = field(default_factory=list)
    missing_files: list[str] = field(default_factory=list)     # rel paths not written
    short_files: dict[str, tuple[int, int]] = field(default_factory=dict)  # rel -> (rows, full)
    crlf_files: list[str] = field(default_factory=list)
    rows_per_leaf: dict[str, int] = field(default_factory=dict)  # full instance count per leaf


# --------------------------------------------------------------------------------------------
# random helpers


def _rng(seed: int, *key: str | int) -> np.random.Generator:
    """Independent stream per (seed, key...), stable whatever else is generated."""
    parts = [int(seed) & 0xFFFFFFFF]
    for k in key:
        parts.append(zlib.crc32(k.encode()) if isinstance(k, str) else int(k) & 0xFFFFFFFF)
    return np.random.default_rng(parts)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _n(base: int, scale: float) -> int:
    return max(2, int(round(base * scale)))


def _instances(rng, n, mix, diff_mu, diff_sd=1.0, alpha=0.5):
    """Loadings (n, K), difficulty (n,), discrimination (n,) for one leaf.

    ``alpha`` small -> sparse loadings (mostly 1-2 abilities); large -> close to ``mix``.
    """
    mix = np.asarray(mix, dtype=float)
    mix = mix / mix.sum()
    active = mix > 0
    raw = np.zeros((n, len(mix)))
    raw[:, active] = rng.gamma(alpha * len(mix) * mix[active], 1.0, size=(n, int(active.sum())))
    raw[:, active] += 1e-9
    load = raw / raw.sum(axis=1, keepdims=True)
    diff = rng.normal(diff_mu, diff_sd, size=n)
    disc = np.exp(rng.normal(np.log(1.4), 0.3, size=n))
    return load, diff, disc


def _logit(theta, inst):
    load, diff, disc = inst
    return disc[None, :] * (theta @ load.T - diff[None, :])


def _binary(rng, logit):
    return (rng.random(logit.shape) < _sigmoid(logit)).astype(float)


def _continuous(rng, logit, conc=6.0):
    p = _sigmoid(logit)
    x = rng.beta(p * conc + 1e-3, (1.0 - p) * conc + 1e-3)
    return np.clip(1.16 * x - 0.08, 0.0, 1.0)


# --------------------------------------------------------------------------------------------
# id styles

_SWE_REPOS = ("acme__widgets", "borealis__parser", "cinder__orm", "dapple__plotkit",
              "ember__httpx2", "fjord__schemas", "gantry__build", "helix__numeric",
              "ingot__cli", "juno__templating", "kestrel__lint", "lumen__docs")
_MM_REPOS = ("Arbor__ui-kit", "Bracken__charts", "Cresset__editor", "Dorado__maps",
             "Elder__canvas")
_MMMU_SUBJECTS = ("Accounting", "Agriculture", "Architecture_and_Engineering", "Art",
                  "Art_Theory", "Basic_Medical_Science", "Biology", "Chemistry",
                  "Clinical_Medicine", "Computer_Science", "Design",
                  "Diagnostics_and_Laboratory_Medicine", "Economics", "Electronics",
                  "Energy_and_Power", "Finance", "Geography", "History", "Literature",
                  "Manage", "Marketing", "Materials", "Math", "Mechanical_Engineering",
                  "Music", "Pharmacy", "Physics", "Psychology", "Public_Health", "Sociology")
_VWB_SUBTASKS = (  # (subtask, share of 1536, metric, continuous?)
    ("web_caption", 134, "rouge_l", True), ("heading_ocr", 46, "rouge_l", True),
    ("element_ocr", 245, "rouge_l", True), ("element_ground", 413, "correct", False),
    ("action_prediction", 281, "correct", False), ("action_ground", 103, "correct", False),
    ("webqa", 314, "f1", True),
)


def _repo_ids(rng, n, repos):
    """Sorted ``<org>__<repo>-<number>`` ids, unique, numbers not zero padded."""
    owner = np.sort(rng.integers(0, len(repos), size=n))
    steps = rng.integers(1, 400, size=n)
    ids = []
    last = {}
    for r, s in zip(owner.tolist(), steps.tolist()):
        v = last.get(r, 1000 + 37 * r) + s
        last[r] = v
        ids.append(f"{repos[r]}-{v}")
    return ids


def _uuid_ids(rng, n):
    raw = rng.integers(0, 256, size=(n, 16), dtype=np.uint8)
    out = []
    for row in raw:
        h = row.tobytes().hex()
        out.append(f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{h[16:20]}-{h[20:]}")
    return out


def _lif_ids(n):
    return [f"{i // 30}_{(i // 3) % 10}_{(3, 6, 9)[i % 3]}" for i in range(n)]


# --------------------------------------------------------------------------------------------
# leaves: each builder returns [(subdir, ids, metric (str or per-row list), scores (M, n))]


@dataclass
class _Ctx:
    seed: int
    scale: float
    theta: np.ndarray
    swe_ids: list[str] | None = None
    expected: dict = field(default_factory=dict)


def _target(ctx, name, base, mix, diff_mu, ids_fn):
    rng = _rng(ctx.seed, "leaf", name)
    n = _n(base, ctx.scale)
    inst = _instances(rng, n, mix, diff_mu, diff_sd=1.1, alpha=8.0)
    logit = _logit(ctx.theta, inst)
    ctx.expected[name] = _sigmoid(logit).mean(axis=1)
    ids = ids_fn(_rng(ctx.seed, "ids", name), n)
    return [("", ids, "resolved", _binary(rng, logit))]


def _b_gaia(ctx):
    return _target(ctx, "gaia", 165, [0.5, 0, 0, 0.5], 0.0, _uuid_ids)


def _b_swebench(ctx):
    out = _target(ctx, "swebench", 500, [0, 0.8, 0, 0.2], -0.6,
                  lambda r, n: _repo_ids(r, n, _SWE_REPOS))
    ctx.swe_ids = out[0][1]
    return out


def _b_swebench_mm(ctx):
    return _target(ctx, "swebench_multimodal", 100, [0, 0.6, 0.4, 0], 0.3,
                   lambda r, n: _repo_ids(r, n, _MM_REPOS))


def _b_swtbench(ctx):
    def ids(r, n):
        pool = ctx.swe_ids or []
        if n <= len(pool):   # like upstream: a subset of the swebench ids
            pick = np.sort(r.choice(len(pool), size=n, replace=False))
            return [pool[i] for i in pick.tolist()]
        return _repo_ids(r, n, _SWE_REPOS)
    return _target(ctx, "swtbench", 430, [0.3, 0.7, 0, 0], -0.2, ids)


_PLAN_TASKS = ("task_1_plan_generation", "task_2_plan_optimality", "task_3_plan_verification",
               "task_4_plan_reuse", "task_5_plan_generalization", "task_6_replanning",
               "task_7_plan_execution", "task_8_1_goal_shuffling", "task_8_2_full_to_partial",
               "task_8_3_partial_to_full")
_PLAN_DIFF = (0.8, 1.2, -0.3, 0.2, 0.6, 1.0, 0.0, 0.4, 0.9, 1.1)


def _b_planbench(ctx):
    out = []
    n = _n(500, ctx.scale)
    ids = [str(i) for i in range(1, n + 1)]
    for task, mu in zip(_PLAN_TASKS, _PLAN_DIFF):
        rng = _rng(ctx.seed, "leaf", "planbench", task)
        logit = _logit(ctx.theta, _instances(rng, n, [0.85, 0.05, 0, 0.1], mu))
        metric = "llm_correct_binary" if task.startswith("task_3") else "llm_correct"
        out.append((task, ids, metric, _binary(rng, logit)))
    return out


def _b_visualwebbench(ctx):
    rng = _rng(ctx.seed, "leaf", "visualwebbench")
    ids, metrics, cont = [], [], []
    for sub, base, metric, is_cont in _VWB_SUBTASKS:
        k = _n(base, ctx.scale)
        ids += [f"{sub}_{j}" for j in range(k)]
        metrics += [metric] * k
        cont += [is_cont] * k
    n = len(ids)
    logit = _logit(ctx.theta, _instances(rng, n, [0.3, 0, 0.7, 0], -0.2))
    cont = np.array(cont)
    scores = np.where(cont[None, :], _continuous(rng, logit), _binary(rng, logit))
    return [("", ids, metrics, scores)]


def _b_visualpuzzles(ctx):
    rng = _rng(ctx.seed, "leaf", "visualpuzzles")
    n = _n(1168, ctx.scale)
    logit = _logit(ctx.theta, _instances(rng, n, [0.5, 0, 0.5, 0], 0.9))
    return [("", [f"visualpuzzles_{i}" for i in range(n)], "exact_match", _binary(rng, logit))]


def _b_mmmu(ctx):
    rng = _rng(ctx.seed, "leaf", "mmmu")
    n = _n(900, ctx.scale)
    s = len(_MMMU_SUBJECTS)
    per = -(-n // s)
    ids = [f"validation_{_MMMU_SUBJECTS[i // per]}_{i % per + 1}" for i in range(n)]
    logit = _logit(ctx.theta, _instances(rng, n, [0.5, 0, 0.5, 0], -0.4))
    return [("", ids, "mmmu_acc", _binary(rng, logit))]


_REPO_SUBTASKS = (("if", 318, 0.6), ("xff", 312, 0.2), ("xfr", 307, 0.0))


def _b_repobench(ctx):
    out = []
    for sub, base, mu in _REPO_SUBTASKS:
        rng = _rng(ctx.seed, "leaf", "repobench", sub)
        n = _n(base, ctx.scale)
        ids = [f"repobench_{i}" for i in range(n)]
        logit = _logit(ctx.theta, _instances(rng, n, [0.05, 0.7, 0, 0.25], mu))
        em = _binary(rng, logit)
        es = np.where(em == 1.0, 1.0, _continuous(rng, logit + 1.5))
        cb = np.where(em == 1.0, 1.0, _continuous(rng, logit + 0.8))
        for metric, sc in (("codebleu", cb), ("edit_similarity", es), ("exact_match", em)):
            out.append((f"repobench_{sub}_python_{metric}", ids, metric, sc))
    return out


_LIF_LEAVES = (("list-blur_offset_query_element", 432, 0.8), ("list-blur_offset_query_id", 396, 0.6),
               ("list-multi_query_id", 150, 0.4), ("list-offset_query_element", 432, 0.3),
               ("list-offset_query_id", 432, 0.1), ("list-single_query_id", 180, -0.8),
               ("multidoc-batch_label", 150, 0.2), ("multidoc-find_dup_text", 150, 0.5),
               ("onedoc-extract", 150, -0.6), ("onedoc-qa", 180, -1.0), ("onedoc-repeat", 150, -0.3))


def _b_lifbench(ctx):
    out = []
    for leaf, base, mu in _LIF_LEAVES:
        rng = _rng(ctx.seed, "leaf", "lifbench", leaf)
        n = _n(base, ctx.scale)
        logit = _logit(ctx.theta, _instances(rng, n, [0.25, 0, 0, 0.75], mu))
        out.append((leaf, _lif_ids(n), "total_score", _continuous(rng, logit)))
    return out


_BFCL_LEAVES = (("agentic_memory_kv", "memory_kv", 155, [0.3, 0.2, 0, 0.5], 0.4),
                ("agentic_memory_rec_sum", "memory_rec_sum", 155, [0.3, 0.2, 0, 0.5], 0.7),
                ("agentic_memory_vector", "memory_vector", 155, [0.3, 0.2, 0, 0.5], 0.5),
                ("agentic_web_search_base", "web_search_base", 100, [0.6, 0.1, 0, 0.3], 0.2),
                ("agentic_web_search_no_snippet", "web_search_no_snippet", 100,
                 [0.6, 0.1, 0, 0.3], 0.6))


def _b_bfcl(ctx):
    out = []
    for leaf, prefix, base, mix, mu in _BFCL_LEAVES:
        rng = _rng(ctx.seed, "leaf", "bfcl", leaf)
        n = _n(base, ctx.scale)
        logit = _logit(ctx.theta, _instances(rng, n, mix, mu))
        out.append((leaf, [f"{prefix}_{i}" for i in range(n)], "accuracy", _binary(rng, logit)))
    return out


def _b_ifeval(ctx):
    rng = _rng(ctx.seed, "leaf", "ifeval")
    n = _n(541, ctx.scale)
    logit = _logit(ctx.theta, _instances(rng, n, [0.6, 0.2, 0, 0.2], -1.6))
    m = logit.shape[0]
    k = rng.choice([1, 2, 3], size=n, p=[0.45, 0.35, 0.20])           # instructions per prompt
    mask = np.arange(3)[None, :] < k[:, None]                           # (n, 3)
    jitter = rng.normal(0.0, 0.8, size=(n, 3))
    p = _sigmoid(logit[:, :, None] + jitter[None, :, :])                # (M, n, 3)
    strict = rng.random((m, n, 3)) < p
    loose = strict | (rng.random((m, n, 3)) < 0.35)
    out = []
    for kind, passed in (("strict", strict), ("loose", loose)):
        ok = (passed & mask[None]).sum(axis=2)
        out.append((f"inst_level_{kind}_acc", ok / k[None, :]))
        out.append((f"prompt_level_{kind}_acc", (ok == k[None, :]).astype(float)))
    ids = [str(i) for i in range(n)]
    order = ("inst_level_loose_acc", "inst_level_strict_acc",
             "prompt_level_loose_acc", "prompt_level_strict_acc")
    d = dict(out)
    return [(leaf, ids, leaf, d[leaf]) for leaf in order]


_BUILDERS = (
    ("gaia", _b_gaia), ("swebench", _b_swebench), ("swebench_multimodal", _b_swebench_mm),
    ("swtbench", _b_swtbench), ("planbench", _b_planbench), ("visualwebbench", _b_visualwebbench),
    ("repobench", _b_repobench), ("lifbench", _b_lifbench), ("visualpuzzles", _b_visualpuzzles),
    ("mmmu", _b_mmmu), ("bfcl", _b_bfcl), ("ifeval", _b_ifeval),
)

# share of models that have each planbench task file when missing_files is on
_PLAN_COVERAGE = dict(zip(_PLAN_TASKS, (0.93, 0.93, 0.93, 0.8, 0.45, 0.38, 0.93, 1.0, 0.86, 0.86)))


# --------------------------------------------------------------------------------------------
# imperfections


def _missing_file_plan(seed, models, leaves, multimodal):
    """Set of (model, leaf) pairs whose file is not written."""
    rng = _rng(seed, "missing_files")
    missing = set()
    for leaf in leaves:
        bench, _, sub = leaf.partition("/")
        if bench in VISION_BENCHMARKS:
            missing |= {(m, leaf) for m in models if m not in multimodal}
        elif bench == "planbench":
            have = rng.random(len(models)) < _PLAN_COVERAGE[sub]
            need = min(2, len(models))
            if have.sum() < need:
                have[rng.choice(np.flatnonzero(~have), need - int(have.sum()), replace=False)] = True
            missing |= {(m, leaf) for m, h in zip(models, have) if not h}
    # 1-2 extra random gaps among non-target, non-vision leaves that are otherwise complete
    cand = [(m, leaf) for leaf in leaves for m in models
            if leaf.split("/")[0] not in TARGETS + VISION_BENCHMARKS + ("planbench",)]
    if len(models) > 1 and cand:
        for i in rng.choice(len(cand), size=min(len(cand), int(rng.integers(1, 3))), replace=False):
            missing.add(cand[int(i)])
    return missing


def _row_plan(seed, models, leaf_sizes):
    """(model, leaf) -> boolean keep-mask for the files that lose instances."""
    rng = _rng(seed, "missing_instances")
    nm = len(models)
    plan = {}

    def drop_random(m, leaf, frac):
        n = leaf_sizes[leaf]
        k = min(n - 1, int(round(frac * n)))
        if k <= 0:
            return
        keep = np.ones(n, dtype=bool)
        keep[rng.choice(n, size=k, replace=False)] = False
        plan[(m, leaf)] = keep

    def truncate(m, leaf, frac_keep):
        n = leaf_sizes[leaf]
        keep = np.zeros(n, dtype=bool)
        keep[:max(1, min(n - 1, int(round(frac_keep * n))))] = True
        plan[(m, leaf)] = keep

    for m in models:
        if rng.random() < 0.6:
            drop_random(m, "gaia", rng.uniform(0.0, 0.18))
        if rng.random() < 0.3:
            drop_random(m, "swebench", rng.uniform(0.0, 0.01))
        if rng.random() < 0.6:
            drop_random(m, "swtbench", rng.uniform(0.0, 0.075))
        if rng.random() < 0.8:
            drop_random(m, "swebench_multimodal", rng.uniform(0.0, 0.06))
    # swebench_multimodal: one model at about half the rows, one at about three quarters
    big = rng.choice(nm, size=min(2, nm), replace=False)
    for i, frac in zip(big.tolist(), (0.52, 0.27)):
        drop_random(models[i], "swebench_multimodal", frac)
    for sub, _, _ in _REPO_SUBTASKS:   # truncation shared by the 3 metric leaves of a subtask
        for i in rng.choice(nm, size=min(nm, int(rng.integers(1, 3))), replace=False).tolist():
            frac = rng.uniform(0.15, 0.97)
            for metric in ("codebleu", "edit_similarity", "exact_match"):
                truncate(models[i], f"repobench/repobench_{sub}_python_{metric}", frac)
    lif = [leaf for leaf, _, _ in _LIF_LEAVES]
    for j in rng.choice(len(lif), size=3, replace=False).tolist():
        for i in rng.choice(nm, size=min(nm, int(rng.integers(1, 3))), replace=False).tolist():
            truncate(models[i], f"lifbench/{lif[j]}", rng.uniform(0.6, 0.95))
    who = models[int(rng.integers(nm))]
    for j in rng.choice(len(_PLAN_TASKS), size=3, replace=False).tolist():
        drop_random(who, f"planbench/{_PLAN_TASKS[j]}", rng.uniform(0.002, 0.12))
    return plan


# --------------------------------------------------------------------------------------------
# writing

_BIN_TXT = np.array(["0.0", "1.0"])


def _score_strings(row: np.ndarray) -> list[str]:
    if np.all((row == 0.0) | (row == 1.0)):
        return _BIN_TXT[row.astype(np.intp)].tolist()
    return list(map(repr, row.tolist()))


def _file_text(ids, metric, scores, keep, newline):
    sc = _score_strings(scores)
    if isinstance(metric, str):
        tail = "," + metric
        lines = [f"{i},{s}{tail}" for i, s in zip(ids, sc)] if keep is None else \
                [f"{i},{s}{tail}" for i, s, k in zip(ids, sc, keep) if k]
    else:
        lines = [f"{i},{s},{m}" for i, s, m in zip(ids, sc, metric)] if keep is None else \
                [f"{i},{s},{m}" for i, s, m, k in zip(ids, sc, metric, keep) if k]
    return HEADER + newline + newline.join(lines) + newline, len(lines)


def _not_generated(out: Path, readme: str) -> list[str]:
    """Paths under ``out`` (a synthetic tree) that :func:`generate_tree` did not write: anything but its
    README and ``<benchmark>/[<subdir>/]<Model>.csv`` of its benchmarks and the models its README lists."""
    listed = next((line.split(":", 1)[1] for line in readme.splitlines() if line.startswith("- models (")), "")
    models = {name.strip() for name in listed.split(",") if name.strip()}
    benchmarks = {bench for bench, _ in _BUILDERS}
    foreign = []
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out)
        if path.is_dir() and not path.is_symlink():
            if rel.parts[0] in benchmarks and len(rel.parts) <= 2:
                continue
        elif rel.as_posix() == "README.md":
            continue
        elif (path.is_file() and not path.is_symlink() and rel.parts[0] in benchmarks and 2 <= len(rel.parts) <= 3
              and path.suffix == ".csv" and path.stem in models):
            continue
        foreign.append(rel.as_posix())
    return foreign


def _prepare_out(out: Path, overwrite: bool) -> None:
    if out.exists():
        if not out.is_dir():
            raise FileExistsError(f"{out} exists and is not a directory")
        if any(out.iterdir()):
            readme = out / "README.md"
            synthetic = readme.is_file() and SYNTHETIC_MARKER in readme.read_text(errors="replace")
            if not overwrite:
                raise FileExistsError(f"{out} is not empty (pass overwrite=True to replace a "
                                      "previously generated synthetic tree)")
            if not synthetic:
                raise FileExistsError(f"{out} is not empty and is not a synthetic tree; "
                                      "refusing to delete it")
            foreign = _not_generated(out, readme.read_text(errors="replace"))
            if foreign:
                more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
                raise FileExistsError(f"{out} is a synthetic tree that also holds files the generator did not write "
                                      f"({', '.join(foreign[:3])}{more}); refusing to delete them: move them away "
                                      "or write the tree to another folder")
            shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)


def generate_tree(out: Path, *, n_models: int = 14, seed: int = 0, scale: float = 1.0,
                  missing_files: bool = True, missing_instances: bool = True,
                  crlf_fraction: float = 0.5, overwrite: bool = False,
                  weak_tail: int = 0, weak_shift: float = 2.5) -> SyntheticSummary:
    """Write a SYNTHETIC Pace-shaped results tree under ``out`` and return its summary.

    Same arguments -> byte-identical tree. ``scale`` multiplies every leaf's instance count
    (scale 1: about 200k rows for 14 models, like the real tree). ``out`` must be absent or
    empty, unless ``overwrite`` and it holds a previously generated synthetic tree.

    ``weak_tail`` > 0 makes the last ``weak_tail`` of the ``n_models`` models a weak tail: their
    general ability is shifted down by ``weak_shift`` standard deviations, below every other model,
    so that evaluations can measure extrapolation (the stress case of the new-models protocols;
    their true expected target means are in the summary like every model's).
    """
    out = Path(out)
    if scale <= 0:
        raise ValueError("scale must be > 0")
    if not 0.0 <= crlf_fraction <= 1.0:
        raise ValueError("crlf_fraction must be in [0, 1]")
    models = model_names(n_models)
    rng = _rng(seed, "models")
    g = rng.normal(size=(n_models, 1))
    if not 0 <= weak_tail < n_models:
        raise ValueError("weak_tail must be in [0, n_models)")
    if weak_tail:
        # below the weakest of the others whatever the draws: min(g) of the rest, minus the shift
        g[n_models - weak_tail:] = g[: n_models - weak_tail].min() - weak_shift + 0.3 * g[n_models - weak_tail:]
    theta = 0.8 * g + 0.6 * rng.normal(size=(n_models, len(ABILITIES))) + 0.3
    n_mm = max(1, int(round(n_models * 4 / 7)))
    multimodal = sorted(models[i] for i in rng.choice(n_models, size=n_mm, replace=False))

    ctx = _Ctx(seed=seed, scale=scale, theta=theta)
    generated = []          # (leaf, ids, metric, scores)
    for bench, builder in _BUILDERS:
        for sub, ids, metric, scores in builder(ctx):
            generated.append((f"{bench}/{sub}" if sub else bench, ids, metric, scores))
    leaves = sorted(leaf for leaf, *_ in generated)
    sizes = {leaf: len(ids) for leaf, ids, _, _ in generated}

    gone = _missing_file_plan(seed, models, leaves, multimodal) if missing_files else set()
    rows_plan = _row_plan(seed, models, sizes) if missing_instances else {}

    _prepare_out(out, overwrite)
    crlf_rng = _rng(seed, "crlf")
    n_files = n_rows = 0
    missing_list, crlf_files, short = [], [], {}
    for leaf, ids, metric, scores in sorted(generated, key=lambda t: t[0]):
        d = out.joinpath(*leaf.split("/"))
        d.mkdir(parents=True, exist_ok=True)
        crlf = crlf_rng.random(n_models) < crlf_fraction
        for mi, m in enumerate(models):
            rel = f"{leaf}/{m}.csv"
            if (m, leaf) in gone:
                missing_list.append(rel)
                continue
            keep = rows_plan.get((m, leaf))
            text, k = _file_text(ids, metric, scores[mi], keep, "\r\n" if crlf[mi] else "\n")
            (d / f"{m}.csv").write_bytes(text.encode("utf-8"))
            n_files += 1
            n_rows += k
            if crlf[mi]:
                crlf_files.append(rel)
            if k < len(ids):
                short[rel] = (k, len(ids))

    expected = {t: {m: float(v) for m, v in zip(models, ctx.expected[t])} for t in TARGETS}
    params = dict(n_models=n_models, seed=seed, scale=scale, missing_files=missing_files,
                  missing_instances=missing_instances, crlf_fraction=crlf_fraction,
                  **({"weak_tail": weak_tail, "weak_shift": weak_shift} if weak_tail else {}))
    summary = SyntheticSummary(
        root=out, seed=seed, scale=scale, models=models, ability_names=ABILITIES,
        abilities=theta, expected_target_means=expected, n_files=n_files, n_rows=n_rows,
        leaves=leaves, params=params, multimodal_models=multimodal,
        missing_files=sorted(missing_list), short_files=short, crlf_files=crlf_files,
        rows_per_leaf=sizes)
    (out / "README.md").write_text(_readme(summary), encoding="utf-8")
    return summary


def _readme(s: SyntheticSummary) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in s.params.items())
    lines = [
        f"# {SYNTHETIC_MARKER} Pace-shaped results tree",
        "",
        f"{SYNTHETIC_MARKER}: every model, instance and score in this folder is made up by",
        "`ingest/synthetic.py` from a latent-ability model and a seeded random generator.",
        "These are NOT real benchmark results and must never be reported as such.",
        "",
        f"- generator: `ingest.synthetic.generate_tree(out, {args})`",
        f"- seed: {s.seed}",
        f"- scale: {s.scale}",
        f"- models ({len(s.models)}): {', '.join(s.models)}",
        f"- files: {s.n_files}; data rows: {s.n_rows}; leaves: {len(s.leaves)}",
        f"- missing files: {len(s.missing_files)}; short files: {len(s.short_files)}; "
        f"CRLF files: {len(s.crlf_files)}",
        "",
        "Layout: `<benchmark>/<Model>.csv` or `<benchmark>/<subdir>/<Model>.csv`, header "
        "`id,score,metric_name`.",
        "",
    ]
    return "\n".join(lines)


def describe(summary: SyntheticSummary) -> str:
    """Human-readable multi-line description of a generated tree (for CLIs and logs)."""
    s = summary
    out = [f"{SYNTHETIC_MARKER} Pace-shaped tree at {s.root}",
           f"  seed={s.seed} scale={s.scale} models={len(s.models)} files={s.n_files} "
           f"rows={s.n_rows} leaves={len(s.leaves)}",
           f"  missing files={len(s.missing_files)} short files={len(s.short_files)} "
           f"CRLF files={len(s.crlf_files)}"]
    per_bench: dict[str, int] = {}
    for leaf in s.leaves:
        b = leaf.split("/")[0]
        per_bench[b] = per_bench.get(b, 0) + 1
    out.append("  benchmarks: " + ", ".join(f"{b}({n})" for b, n in per_bench.items()))
    w = max(len(m) for m in s.models)
    head = " ".join(f"{a[:8]:>8}" for a in s.ability_names)
    tgt = " ".join(f"{t[:8]:>8}" for t in TARGETS)
    out.append(f"  {'model':<{w}} {head} | E[target]: {tgt}")
    for i, m in enumerate(s.models):
        ab = " ".join(f"{v:8.2f}" for v in s.abilities[i])
        tv = " ".join(f"{s.expected_target_means[t][m]:8.3f}" for t in TARGETS)
        mm = " (mm)" if m in s.multimodal_models else ""
        out.append(f"  {m:<{w}} {ab} | {' ' * 11}{tv}{mm}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ingest.synthetic",
                                description="Write a SYNTHETIC Pace-shaped results tree.")
    p.add_argument("out", type=Path)
    p.add_argument("--n-models", type=int, default=14)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--no-missing-files", action="store_true")
    p.add_argument("--no-missing-instances", action="store_true")
    p.add_argument("--crlf-fraction", type=float, default=0.5)
    p.add_argument("--overwrite", action="store_true")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    s = generate_tree(a.out, n_models=a.n_models, seed=a.seed, scale=a.scale,
                      missing_files=not a.no_missing_files,
                      missing_instances=not a.no_missing_instances,
                      crlf_fraction=a.crlf_fraction, overwrite=a.overwrite)
    print(describe(s))
    print(f"  generated in {time.perf_counter() - t0:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
