"""Files an ingest keeps out of fits until the user says otherwise, each reported as an anomaly that says
how to take it back:

- **aggregate-only files** (``aggregate_only``): a few rows whose ids are metric names (``NDCG@10``,
  ``MAP@5``, ``accuracy``...), i.e. a benchmark's summary, not per-instance scores (the holdout tree's
  ``beir_nfcorpus``). A benchmark new to the warehouse whose files are all like that gets the role
  ``excluded`` (``pace benchmarks set NAME source`` takes it back); a file of a benchmark the warehouse
  already has is reported only.
- **second spellings of a model** (``second_spelling``): a file name that is a known model's name once
  provider prefixes (``openai_``, ``nvidia-``), size and precision suffixes (``-30b``, ``-a3b``,
  ``-bf16``), case and punctuation are set aside (``openai_nvidia_nvidia-nemotron-3-nano-30b-a3b-bf16``
  is ``Nemotron-3-Nano``). A model new to the warehouse spelled so is held out of fits (table
  ``model_holds``, view ``models.known``) until ``pace alias add NAME MODEL`` merges it or ``pace alias
  keep NAME`` accepts it as a model of its own.

Runs inside the ingest transaction, before the stored collapsed cells are recomputed (a role changes
which cells count), so ``--strict`` rolls it back with everything else.
"""
from __future__ import annotations

import re
from collections import Counter

import duckdb

from ingest.report import Anomaly
from warehouse.errors import pace_command

#: a file of at most this many rows can be an aggregate-only file ...
AGGREGATE_MAX_ROWS = 64
#: ... when at least this share of its ids are metric names
AGGREGATE_SHARE = 0.8
_METRIC = re.compile(
    r"^(?:(?:ndcg|map|mrr|recall|precision|p|r|hit|hits|success|acc|top|pass)(?:@|_cut_|_at_)\d+"
    r"|ndcg|map|mrr|recall|precision|f1|f1_score|accuracy|acc|exact_match|em|bleu|chrf|rouge[-_]?(?:1|2|l|lsum)"
    r"|auc|auroc|mae|mse|rmse|mean|average|overall|total|score)$", re.IGNORECASE)

#: organisations that prefix model names in harness output (``openai_``, ``nvidia-``, ``meta-llama/``)
PROVIDERS = ("openai", "nvidia", "metallama", "meta", "google", "anthropic", "mistralai", "mistral", "qwen",
             "alibaba", "deepseekai", "deepseek", "moonshotai", "moonshot", "zai", "zaiorg", "thudm", "minimaxai",
             "minimax", "xai", "ibm", "microsoft", "allenai", "togethercomputer", "together", "fireworks",
             "accounts", "models", "huggingface", "hf", "azure", "bedrock", "vertexai", "vertex", "openrouter")
#: what may follow a known name in a second spelling: sizes, active parameters, precision, packaging
_SUFFIX = re.compile(r"^(?:\d+(?:\.\d+)?[bm]|a\d+(?:\.\d+)?b|bf16|fp16|fp8|fp32|int4|int8|w4a16|awq|gptq|gguf"
                     r"|hf|instruct|it|chat|latest)*$")


def is_metric_name(instance_id: str) -> bool:
    return bool(_METRIC.match(instance_id.strip()))


def _compact(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _readings(name: str) -> list[str]:
    """The compact forms ``name`` may stand for: itself, without leading ``provider_`` / ``provider/``
    segments, and without a provider word in front."""
    parts = re.split(r"[/_:]", name)
    out = []
    for k in range(len(parts)):
        compact = _compact("".join(parts[k:]))
        out.append(compact)
        out += [compact[len(p):] for p in PROVIDERS if compact.startswith(p) and len(compact) > len(p)]
    return [c for c in dict.fromkeys(out) if c]


def second_spelling_of(name: str, known: list[str]) -> str | None:
    """The model of ``known`` that ``name`` spells another way (the longest such name), or None. A
    different model of a family (``Kimi-K2.5`` against ``Kimi-K2``, ``GPT-5.2-Codex`` against
    ``GPT-5.2``) is not one: only size, precision and packaging may follow the known name."""
    best = None
    by_compact = {_compact(k): k for k in known if k != name and _compact(k)}
    for reading in _readings(name):
        for compact, model in by_compact.items():
            if reading == compact or (reading.startswith(compact) and _SUFFIX.match(reading[len(compact):])):
                if best is None or len(compact) > len(_compact(best)):
                    best = model
    return best


def hold_noise(con: duckdb.DuckDBPyConnection, paths: list[str], models_before: set[str],
               benchmarks_before: set[str]) -> tuple[list[Anomaly], list[str]]:
    """Find aggregate-only files and second spellings among the ingested files ``paths``; exclude the new
    aggregate-only benchmarks and hold the new second spellings. Returns (anomalies, notes)."""
    files = con.execute("""
        SELECT path, model, benchmark, n_rows FROM score_files WHERE path IN (SELECT unnest(?::VARCHAR[]))
        ORDER BY path""", [paths]).fetchall()
    anomalies, notes = _aggregate_only(con, files, benchmarks_before)
    more, held = _second_spellings(con, files, models_before)
    return anomalies + more, notes + held


def _aggregate_only(con, files, benchmarks_before: set[str]) -> tuple[list[Anomaly], list[str]]:
    small = [path for path, _, _, n in files if n <= AGGREGATE_MAX_ROWS]
    ids = dict(con.execute("""SELECT source_ref, list(instance_id ORDER BY instance_id) FROM scores
                              WHERE source_ref IN (SELECT unnest(?::VARCHAR[])) GROUP BY source_ref""",
                           [small]).fetchall()) if small else {}
    aggregate = {path for path, names in ids.items()
                 if names and sum(map(is_metric_name, names)) >= AGGREGATE_SHARE * len(names)}
    per_benchmark: dict[str, list[str]] = {}
    for path, _, benchmark, _ in files:
        per_benchmark.setdefault(benchmark, []).append(path)
    roles = dict(con.execute("SELECT benchmark, role FROM benchmarks").fetchall())
    excluded = sorted(b for b, paths in per_benchmark.items()
                      if b not in benchmarks_before and roles.get(b) == "source" and set(paths) <= aggregate)
    for benchmark in excluded:
        con.execute("UPDATE benchmarks SET role = 'excluded' WHERE benchmark = ?", [benchmark])
    anomalies = []
    for path, _, benchmark, n in files:
        if path not in aggregate:
            continue
        shown = ", ".join(ids[path][:4]) + (", ..." if len(ids[path]) > 4 else "")
        if benchmark in excluded:
            then = (f"benchmark {benchmark} set to excluded, out of fits (`{pace_command('benchmarks', 'set', benchmark, 'source')}` "
                    "takes it back)")
        elif roles.get(benchmark) == "excluded":
            then = f"benchmark {benchmark} is excluded (out of fits)"
        else:
            then = f"its rows count as {roles.get(benchmark)} rows: remove the file, or " \
                   f"`{pace_command('benchmarks', 'set', benchmark, 'excluded')}`"
        anomalies.append(Anomaly("aggregate_only", path, f"{n} rows whose ids are metric names ({shown}): "
                                 f"aggregate metrics, not per-instance scores; {then}"))
    notes = [f"{b}: role excluded (its files hold aggregate metrics only); `{pace_command('benchmarks', 'set', b, 'source')}` "
             "to use it" for b in excluded]
    return anomalies, notes


def _second_spellings(con, files, models_before: set[str]) -> tuple[list[Anomaly], list[str]]:
    """New models whose name spells a known model (or a new model of this ingest with more files) another way."""
    n_files = Counter(model for _, model, _, _ in files)
    held = dict(con.execute("SELECT model, detail FROM model_holds WHERE reason = 'second_spelling'").fetchall())
    notes = []
    for model in sorted((set(n_files) - models_before) - set(held)):
        # against the models the warehouse had, then the other new ones that have more files (the main spelling)
        others = sorted(models_before | {m for m in n_files if m != model and (n_files[m], -len(m)) >
                                          (n_files[model], -len(model))})
        canonical = second_spelling_of(model, others)
        if canonical is not None:
            con.execute("INSERT INTO model_holds VALUES (?, 'second_spelling', ?, current_localtimestamp())",
                        [model, canonical])
            held[model] = canonical
            notes.append(f"{model}: held out of fits (another spelling of {canonical}?)")
    anomalies = []
    for model in sorted(set(n_files) & set(held)):          # every ingest of its files says so again
        paths = [p for p, m, _, _ in files if m == model]
        anomalies.append(Anomaly(
            "second_spelling", paths[0] if len(paths) == 1 else f"{model} ({len(paths)} files)",
            f"file name {model!r} looks like another spelling of {held[model]!r}: held out of fits; "
            f"`{pace_command('alias', 'add', model, held[model])}` merges it, `{pace_command('alias', 'keep', model)}` "
            "keeps it as a model "
            "of its own"))
    return anomalies, notes
