"""`pace import lm-eval|inspect|helm|eee`: per-sample results written by evaluation harnesses (mounted on the
main app)."""
from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated, Optional

import typer

from ingest.openhands_index import model_folders
from warehouse import settings
from warehouse.api import Warehouse
from warehouse.cli_options import DbOpt, JsonOpt, progress_bar
from warehouse.output import emit_json

import_app = typer.Typer(
    help="Import per-sample results written by evaluation harnesses (lm-eval, Inspect, HELM), in the Every "
         "Eval Ever layout, or an agentic results index, with the guarantees of `pace ingest` (idempotent, all or nothing, anomalies reported, "
         "lake kept in step). A TOML map says, per harness task, the Pace benchmark/subdir, the metric that is "
         "the score and the instance id (see README).",
    no_args_is_help=True)

MapOpt = Annotated[Path, typer.Option(
    "--map", envvar="PACE_IMPORT_MAP", show_envvar=True,
    help="TOML map, one table tasks.<task> per harness task: benchmark, metric (or subdir -> metric), "
         "id, ... (see README).")]
ModelOpt = Annotated[Optional[str], typer.Option(
    "--model", help="The model's name in the warehouse (default: the map's `model`, else the harness's own).")]
LakeOpt = Annotated[Optional[Path], typer.Option(
    "--lake", envvar="PACE_LAKE", help="Parquet lake folder (default: the warehouse's, else lake/ beside pace.duckdb, NAME.lake/ beside NAME.duckdb).")]
PruneOpt = Annotated[bool, typer.Option(help="Remove rows of files of THIS path that disappeared from it.")]
StrictOpt = Annotated[bool, typer.Option(help="Treat every anomaly as an error (nothing is written).")]
DupOpt = Annotated[str, typer.Option(
    "--duplicates", help="A repeated instance id keeps its first row, its last row, or is an error.")]


def _run(kind: str, path: Path, map_path: Optional[Path], model, db, lake, prune, strict, duplicates,
         json_out) -> None:
    wh = Warehouse(db, lake=lake)
    total = wh.import_files(kind, path, map_path, model=model, duplicates=duplicates)
    bar, advance = progress_bar(total, f"import {kind}", not json_out)
    with bar:                                       # every file is read and checked before the warehouse opens
        report = wh.import_results(kind, path, map_path, model=model, prune=prune, strict=strict,
                                   duplicates=duplicates, progress=advance)
    _show(report, json_out)


def _show(report, json_out: bool) -> None:
    if json_out:
        emit_json(report.to_dict())
    else:
        typer.echo(report.to_text())


OptionalMapOpt = Annotated[Optional[Path], typer.Option(
    "--map", envvar="PACE_IMPORT_MAP", show_envvar=True,
    help="Optional TOML map, tasks.<evaluation_name> -> benchmark, subdir, metric (score | is_correct), "
         "id (sample_id | metadata.<field>). Without it: the leaf pace wrote, else the evaluation name.")]

#: per format: what PATH is, the command's help, and whether the map is optional
FORMATS = {
    "lm-eval": ("An lm-eval --output_path folder (searched for samples_<task>_<time>.jsonl) or one samples file.",
                "Import lm-evaluation-harness samples (written with --log_samples).", MapOpt),
    "inspect": ("An Inspect log folder (searched for *.eval / *.json) or one log.",
                "Import Inspect AI evaluation logs (read with inspect_ai; extra `inspect`).", MapOpt),
    "helm": ("HELM run folders (searched for per_instance_stats.json beside run_spec.json and scenario_state.json), "
             "e.g. benchmark_output/runs/v1.",
             "Import HELM runs: per instance, the statistic the map names on its split (tasks: scenario names).",
             MapOpt),
    "eee": ("Every Eval Ever aggregates (*.json, searched recursively) with their per-instance *_samples.jsonl, "
            "e.g. a `pace export --format eee`.",
            "Import Every Eval Ever per-instance results (predictions a pace export marked are never imported).",
            OptionalMapOpt),
}


def _register(kind: str, path_help: str, doc: str, map_opt, map_optional: bool) -> None:
    """One `pace import KIND` command (they differ only in what PATH is and whether the map is optional)."""
    def command(path, map_path=None, model=None, db=None, lake=None, prune=False, strict=False, duplicates="first",
                json_out=False) -> None:
        _run(kind, path, map_path, model, db, lake, prune, strict, duplicates, json_out)

    # the signature typer reads, with real objects (not the strings `from __future__ import annotations`
    # leaves) and --map required unless the format may go without it
    params = [("path", Annotated[Path, typer.Argument(help=path_help)], inspect.Parameter.empty),
              ("map_path", map_opt, None if map_optional else inspect.Parameter.empty),
              ("model", ModelOpt, None), ("db", DbOpt, None), ("lake", LakeOpt, None), ("prune", PruneOpt, False),
              ("strict", StrictOpt, False), ("duplicates", DupOpt, "first"), ("json_out", JsonOpt, False)]
    command.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=a, default=d) for n, a, d in params],
        return_annotation=None)
    command.__annotations__ = {n: a for n, a, _ in params} | {"return": None}
    command.__doc__ = doc
    import_app.command(kind)(command)


for _kind, (_path_help, _doc, _map_opt) in FORMATS.items():
    _register(_kind, _path_help, _doc, _map_opt, _map_opt is OptionalMapOpt)


@import_app.command("openhands-index")
def import_openhands_index(
    path: Annotated[Path, typer.Argument(help="An OpenHands Index folder: results/<Model>/{metadata.json, scores.json, "
                                         "instance_results/<bench>.json} and alternative_agents/<agent>/<Model>/...")],
    prefer: Annotated[Optional[list[str]], typer.Option(
        "--prefer", envvar="PACE_PREFER", show_envvar=True,
        help="Where a model has rows of both for one benchmark, which source `scores` (every view and method) "
             "uses: pace (the default: the Pace files stay the truth) or openhands-index, for every model, or "
             "MODEL=SOURCE for one (repeatable). Stored: later imports and ingests keep it.")] = None,
    db: DbOpt = None,
    lake: LakeOpt = None,
    prune: PruneOpt = False,
    strict: StrictOpt = False,
    duplicates: DupOpt = "first",
    json_out: JsonOpt = False,
) -> None:
    """Import the OpenHands Index: per-instance agentic runs (all agent harnesses, with costs), the reported
    scores and model metadata. Benchmarks map to the warehouse's (swe-bench -> swebench, swt-bench ->
    swtbench, swe-bench-multimodal -> swebench_multimodal, gaia, commit0); model names go through the
    alias table (spellings that look like a known model are suggested as `pace alias add` lines)."""
    wh = Warehouse(db, lake=lake)
    root = settings.user_path(path)
    total = len(model_folders(root)) if not json_out else 0
    bar, advance = progress_bar(total, "import openhands-index", not json_out)
    with bar:
        report = wh.import_openhands_index(root, prefer=prefer, prune=prune, strict=strict, duplicates=duplicates,
                                           progress=advance)
    _show(report, json_out)
