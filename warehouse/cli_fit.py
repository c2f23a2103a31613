"""`pace fit`, `pace plan`, `pace predict`, `pace selections`, `pace export` (mounted on the main app)."""
from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Optional

import typer

from warehouse import methods, settings, validate
from warehouse.api import Warehouse
from warehouse.cli_models import Sources, Targets, warehouse_api
from warehouse.errors import pace_command
from warehouse.cli_options import DbOpt, JsonOpt, env_hint, options_given, unless_only_from_environment, with_options
from warehouse.output import console, emit_json, print_rows


FitMethod = Annotated[str, typer.Option("--method", envvar="PACE_METHOD", help="; ".join(
    f"{name}: {methods.REGISTRY[name].summary}" for name in methods.names(fit=True)) + ".")]


@with_options(methods.options(fit=True))
def fit(
    ctx: typer.Context,
    exclude: Annotated[Optional[list[str]], typer.Option(
        "--exclude", help="Models to leave out of the fit (space- or comma-separated, or repeated), e.g. to "
                          "predict them.")] = None,
    level: Annotated[float, typer.Option("--level", envvar="PACE_LEVEL", show_envvar=True,
                                         help="Central coverage of the prediction intervals.")] = 0.8,
    intervals: Annotated[bool, typer.Option(help="Estimate intervals from a LOOCV of the same method.")] = True,
    anchors: Annotated[bool, typer.Option(
        "--anchors/--no-anchors", envvar="PACE_ANCHORS", show_envvar=True,
        help="Also fit each target's item model on every model with rows there, so a new model's agentic "
             "anchors (pace plan --anchors) refine its predictions.")] = True,
    task: Annotated[str, typer.Option("--task", envvar="PACE_TASK", show_envvar=True,
                                      help="abs (Goal A), pair (Goal B) or both.")] = "both",
    method: FitMethod = "default",
    sources: Sources = None,
    targets: Targets = None,
    db: DbOpt = None,
    json_out: JsonOpt = False,
    options: Optional[dict] = None,
) -> None:
    """Fit each target's proxy on all models with target scores and store it as rows
    (proxy_fits, proxy_weights); `predictions` then works for any model with score rows. An option the
    method does not read for --task is refused."""
    with env_hint(ctx):
        validate.choice(method, "--method", methods.names(fit=True))
        tasks = ("abs", "pair") if task == "both" else (task,)
        reads = set().union(*(methods.REGISTRY[method].fit_reads.get(t, ()) for t in tasks))
        report = warehouse_api(db).fit(method=method, task=task, level=level, intervals=intervals, sources=sources,
                                       targets=targets, exclude=exclude, anchors=anchors,
                                       **options_given(ctx, list(options), reads))
    if json_out:
        emit_json(asdict(report))
        return
    if report.view_gap:
        logit = bool(report.oor_lo)
        scale = 1 if logit else 100
        unit = "logit" if logit else "pp"
        rows = [(t, report.n_instances[t], report.resid_lo[t] * scale, report.resid_hi[t] * scale,
                 *((report.oor_lo[t], report.oor_hi[t]) if logit else ()),
                 report.interval_loo_coverage[t], 100 * report.loocv_mae.get(t, float("nan")),
                 f"{report.view_gap[t]:.1e}") for t in report.targets]
        trained = max((len(v) for v in report.trained_on.values()), default=len(report.models))
        print_rows(["target", "instances", f"interval lo ({unit})", f"interval hi ({unit})",
                    *(["out-of-range lo", "out-of-range hi"] if logit else []),
                    f"LOO coverage of {level:.0%}", "LOOCV MAE (pp)", "view vs kernel"], rows,
                   title=f"{report.fit_id}: Goal A {method}, trained on {trained} models with target scores"
                         + (f" (ability scale: {len(report.models)} models)" if logit else ""), digits=3)
    if report.pair_view_gap:
        rows = [(t, a, b, f"{report.pair_view_gap[t]:.1e}") for t, (a, b) in report.pair_calibration.items()]
        print_rows(["target", "Platt a", "Platt b", "view vs kernel (margin)"], rows,
                   title=f"{report.fit_id}: Goal B {method}", digits=3)
    if report.anchors:
        console.print("anchors item models: " + ", ".join(f"{t} ({m} models x {n} instances)"
                                                         for t, (m, n) in report.anchors.items()), highlight=False)
    for w in report.warnings:
        console.print(f"note: {w}", highlight=False)
    console.print(f"{report.seconds:.1f} s. Next: pace plan MODEL [--anchors K], pace predict MODEL", highlight=False)


def plan(
    ctx: typer.Context,
    model: Annotated[str, typer.Argument(help="The model to plan for (it may have no rows yet).")],
    out: Annotated[Optional[Path], typer.Option("--out", help="Write the plan CSV (benchmark,subdir,instance_id).")]
        = None,
    anchors: Annotated[int, typer.Option(
        "--anchors", envvar="PACE_ANCHOR_COUNT", show_envvar=True,
        help="K: also list, per target, the K agentic instances that most narrow MODEL's interval given the "
             "anchors it has (run them with the OpenHands benchmarks, import with `pace import openhands-index`; "
             "`pace run` does not run agents).")] = 0,
    budget: Annotated[Optional[float], typer.Option(
        "--budget", envvar="PACE_BUDGET", show_envvar=True,
        help="USD: keep the best anchors across targets while their expected cost fits.")] = None,
    target_width: Annotated[Optional[float], typer.Option(
        "--target-width", envvar="PACE_TARGET_WIDTH", show_envvar=True,
        help="PP: per target, list only as many of the K anchors as bring its interval to at most this width "
             "(percentage points; none where the interval is that narrow already); says per target when it "
             "cannot be reached.")] = None,
    db: DbOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """The calls MODEL still needs for the current fits (instances with a non-zero weight only),
    deduplicated into API calls, per benchmark, with what each benchmark's calls buy: the
    interval half-width (points) its missing scores leave in each target's prediction. With --anchors K,
    also the agentic anchors to buy per target, with expected costs (USD) and the interval now."""
    budget = unless_only_from_environment(ctx, budget, "budget", bool(anchors))
    target_width = unless_only_from_environment(ctx, target_width, "target_width", bool(anchors))
    with env_hint(ctx):
        result = warehouse_api(db).plan(model, out=out, anchors=anchors, budget=budget, target_width=target_width)
    model, rows, calls = result.model, result.rows, result.calls
    anchor_rows = [{"benchmark": r.target, "subdir": r.subdir, "instance_id": r.instance_id, "kind": "anchor",
                    "rank": r.rank, "expected_cost_usd": r.expected_cost} for r in result.anchor_rows]
    per_target = [{"target": t.target, "anchors_now": t.anchors, "prior": t.prior, "predicted": t.predicted,
                   "low": t.low, "high": t.high, "anchors_listed": len(t.rows), "expected_cost_usd": t.cost,
                   "width_now": t.width_now, "expected_width": t.expected_width, "anchors_needed": t.needed,
                   "anchors_available": t.available}
                  for t in result.anchors]
    if json_out:
        emit_json({"model": model, "instances": len(rows), "calls": len(calls),
                   "zero_weight_left_out": result.zero_weight_left_out,
                   "per_benchmark": result.per_benchmark,
                   "interval_half_width_now": result.interval_half_width_now,
                   "rows": [dict(zip(["benchmark", "subdir", "instance_id"], r), kind="source") for r in rows]
                           + anchor_rows,
                   "anchors": per_target, "anchors_expected_cost_usd": sum(t.cost for t in result.anchors),
                   "anchors_of_unknown_cost": sum(r.expected_cost is None for r in result.anchor_rows),
                   "budget_left_out": result.budget_left_out, "notes": result.notes})
        return
    for note in result.notes:
        console.print(f"note: {note}", highlight=False)
    if result.anchors:
        # the anchors estimate (what the listed anchors refine) beside the width `pace predict` serves now,
        # which for a model with source rows and no anchors is the sources' interval
        print_rows(["target", "anchors now", "prior", "anchors estimate %", "its interval %", "listed",
                    "expected USD", "served width -> after (pp)"],
                   [(t["target"], t["anchors_now"], t["prior"], _pct(t["predicted"]),
                     f"{_pct(t['low'])}-{_pct(t['high'])}", t["anchors_listed"], t["expected_cost_usd"],
                     f"{_pct(t['width_now'])} -> {_pct(t['expected_width'])}")
                    for t in per_target], title=f"agentic anchors for {model}", digits=2)
        unknown = sum(r.expected_cost is None for r in result.anchor_rows)
        console.print(f"anchors: {len(anchor_rows)} instances, expected ${sum(t.cost for t in result.anchors):,.2f}"
                      + (f" ({unknown} of unknown cost, counted as $0)" if unknown else "")
                      + (f"; {result.budget_left_out} left out by --budget" if result.budget_left_out else "")
                      + "; their ids with --json (run them with the OpenHands benchmarks)", highlight=False)
    per, skipped, targets = result.per_benchmark, result.zero_weight_left_out, result.targets
    console.print(f"{model} must be scored on {len(calls)} unique evaluation calls ({len(rows)} instances) "
                  f"across {len(per)} benchmarks; {skipped} selected instance(s) weigh 0 in every current fit "
                  f"and are left out", highlight=False)
    print_rows(["benchmark", "instances", "calls", "subtasks", "share"] + [f"±pp {t}" for t in targets],
               [(r["benchmark"], r["instances"], r["calls"], r["subtasks"], f"{r['share']:.0%}",
                 *(100 * r["half_width"].get(t, 0.0) for t in targets)) for r in per], digits=1)
    _print_restricted_path(model, result.restricted)
    if rows:
        now = result.interval_half_width_now
        console.print("±pp: how much wider each target's interval stays if that benchmark is skipped "
                      "(all outstanding: " + ", ".join(f"{t} ±{100 * now[t]:.1f}" for t in targets) + ")",
                      highlight=False)
        console.print("Cost estimate: " + pace_command("run", model, "--dry-run", *(("--plan", out) if out else ())),
                      highlight=False)


def _pct(share: Optional[float]) -> str:
    return "-" if share is None else f"{100 * share:.1f}"


def _print_restricted_path(model: str, restricted: Optional[dict]) -> None:
    """The other path for a model that lacks whole source benchmarks: what a restricted proxy gives now."""
    if not restricted:
        return
    have, missing = restricted["sources"], restricted["missing"]
    if restricted["fit_id"]:
        detail = "its LOOCV MAE: " + ", ".join(f"{t} {100 * v:.1f} pp" for t, v in restricted["loocv_mae"].items()
                                                if v is not None)
    else:
        detail = f"`{pace_command('predict', model)}` fits it (once) and reports its LOOCV error"
    console.print(f"Or, with what {model} has now: a proxy restricted to its {len(have)} source benchmarks "
                  f"({', '.join(have)}; without {', '.join(missing)}) predicts it without running anything; "
                  f"{detail}.", highlight=False)


def predict(
    ctx: typer.Context,
    model: Annotated[str, typer.Argument(help="The model to predict.")],
    min_coverage: Annotated[float, typer.Option("--min-coverage", envvar="PACE_MIN_COVERAGE", help=(
        "Refuse below this share of the proxy's instances scored (after a restricted fit, if the model "
        "lacks whole source benchmarks).") )] = 0.9,
    allow_partial: Annotated[bool, typer.Option("--allow-partial", help="Predict even below --min-coverage "
                                                "(missing scores count as the training mean).")] = False,
    restrict: Annotated[bool, typer.Option("--restrict/--no-restrict", help=(
        "When MODEL lacks source benchmarks of the current fit, fit (once, then reuse) a proxy on the "
        "benchmarks it has instead of imputing the missing ones."))] = True,
    db: DbOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Predicted agentic scores of MODEL with an interval, coverage, an out-of-range note when its source
    ability or its release date (`pace metadata set`) lies outside the training models' (the interval then
    reaches 1 % or 100 % on that side) or when it has under half of the fit's source benchmarks (both
    sides, unless its release date tells the side), and win probabilities if a pair fit exists."""
    with env_hint(ctx):
        report = warehouse_api(db).predict(model, min_coverage=min_coverage, allow_partial=allow_partial,
                                           restrict=restrict)
    model, missing, pairs = report.model, report.missing_sources, report.pairwise
    if json_out:
        emit_json(asdict(report))
        return
    level = report.interval_level
    table = [(p.target, 100 * p.predicted,
              f"{100 * p.low:.1f}–{100 * p.high:.1f}" if p.low is not None and not math.isnan(p.low) else "",
              "" if p.coverage is None else f"{p.coverage:.0%}", "" if p.loocv_mae is None else f"{100 * p.loocv_mae:.1f}",
              (f"anchors: {p.anchors}, {p.prior} prior" if p.method == "anchors" else
               ("restricted" if p.restricted else "full")
               + (f", out of range ({p.range_reason})" if p.out_of_range else "")))
             for p in report.predictions]
    print_rows(["target", "predicted (%)", f"{level or 0:.0%} interval (%)", "coverage", "LOOCV MAE (pp)",
                "proxy"], table, title=f"predicted agentic scores of {model} ("
               + ", ".join(dict.fromkeys(p.method for p in report.predictions)) + ")",
               digits=1)
    restricted = sorted({b for p in report.predictions if p.restricted for b in p.sources})
    if missing and any(p.method != "anchors" for p in report.predictions):
        console.print(f"{model} has scores for under half of the instances of {', '.join(missing)} (the coverage "
                      "above counts only the proxy's own instances).", highlight=False)
    if restricted:
        how = "fitted now" if report.made_fit else "reused"
        full = any(not p.restricted and p.method != "anchors" for p in report.predictions)
        console.print(f"restricted proxy ({how}, {report.restricted_fit}) on the {len(restricted)} source benchmarks "
                      f"it has: {', '.join(restricted)}"
                      + ("; 'full' rows use the current fit, whose selected instances it covers better." if full
                         else "."), highlight=False)
    for line in report.notes:
        console.print(line, highlight=False)
    if pairs:
        print_rows(["target", "mean P(win)", "opponents", "predicted win rate"], [tuple(p.values()) for p in pairs],
                   digits=3)


selections_app = typer.Typer(help="Selected instances in the published selections CSV schema.",
                             no_args_is_help=True)

@selections_app.command("export")
def selections_export(
    out: Annotated[Path, typer.Argument(help="CSV to write (--format csv), or a new or empty folder "
                                        "(--format pace-bench).")],
    run: Annotated[Optional[str], typer.Option("--run", help="A loocv run_id (default: the current fits; "
                                               "csv only).")] = None,
    fmt: Annotated[str, typer.Option("--format", help="csv: the published selections CSV schema; pace-bench: "
                                     "one <target>.jsonl per target as the PACE-Bench dataset lays it out, "
                                     "plus pace_fit.json (the rest of the predictor).")] = "csv",
    overwrite: Annotated[bool, typer.Option("--overwrite", help="pace-bench: reuse a folder an earlier export "
                                            "wrote (only its own files are replaced).")] = False,
    db: DbOpt = None,
) -> None:
    """Write the selected instances: the published selections CSV (mode,fold,target,benchmark,subdir,
    instance_id,col_idx,weight; H rows first, then D; col_idx is the position in this warehouse's
    source_columns, fragile by nature: key on the ids), or the current abs fits in the PACE-Bench layout."""
    result = Warehouse(db, read_only=True).export_selections(out, run=run, fmt=fmt, overwrite=overwrite)
    if "counts" in result:
        for target, n in result["counts"].items():
            typer.echo(f"{target:<22} {n:>5} instances -> {result['path'] / (target + '.jsonl')}")
        return
    console.print(f"{result['rows']} rows -> {result['path']}", highlight=False)


@selections_app.command("import")
def selections_import(
    path: Annotated[Path, typer.Argument(help="A selections CSV (published schema), e.g. selections_C100.csv, "
                                         "or a PACE-Bench folder of <target>.jsonl files.")],
    name: Annotated[Optional[str], typer.Option("--name", help="run_id (csv) or fit_id (pace-bench) to store "
                                                "it under.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="csv, pace-bench, or auto: a folder is pace-bench, a "
                                     "file csv.")] = "auto",
    allow_unknown: Annotated[bool, typer.Option("--allow-unknown", help=(
        "Import records of benchmarks or instances this warehouse has no rows for (a selection to plan and "
        "run here first); they predict nothing until models are scored on them. Repeated records and "
        "non-finite weights are refused either way."))] = False,
    db: DbOpt = None,
) -> None:
    """Load a selections CSV as a run in loocv_selections (keyed by instance; col_idx is ignored), or a
    PACE-Bench folder as a fit that becomes the current abs fit of its targets (pace plan / run / predict)."""
    result = Warehouse(db).import_selections(path, name=name, fmt=fmt, allow_unknown=allow_unknown)
    if "run_id" in result:
        for note in result["notes"]:
            typer.echo(f"note: {note}")
        console.print(f"{result['rows']} rows -> loocv_selections run {result['run_id']}", highlight=False)
        return
    for target, n in result["targets"].items():
        how = "centers, intercept, clamp from this warehouse" if target in result["derived"] else "as exported"
        typer.echo(f"{target:<22} {n:>5} instances ({how})")
    for note in result["notes"]:
        typer.echo(f"note: {note}")
    typer.echo(f"-> fit {result['fit_id']}, now the current abs fit of these targets. Next: pace plan MODEL")


def export(
    out: Annotated[Path, typer.Argument(help="A new or empty folder to write Parquet files and SCHEMA.md into.")]
        = Path("export"),
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Reuse a folder an earlier `pace export` wrote: "
                                            "only that export's files are replaced; nothing else is touched.")]
        = False,
    fmt: Annotated[str, typer.Option("--format", envvar="PACE_EXPORT_FORMAT", show_envvar=True,
                                     help="parquet: every table and view; eee: per-instance scores and "
                                          "predictions in the Every Eval Ever layout.")] = "parquet",
    db: DbOpt = None,
) -> None:
    """Export tables and views as Parquet for other teams (scores partitioned by benchmark), with SCHEMA.md;
    or the per-instance scores (and the predictions, marked as such) as Every Eval Ever files."""
    out = settings.user_path(out)
    written = warehouse_api(db).export(out, overwrite=overwrite, format=fmt)
    for name, n in written:
        console.print(f"{name:<22} {n:>10,}" + (" rows" if fmt == "parquet" else ""), highlight=False)
    console.print(f"-> {out}/ (see {out}/{'SCHEMA.md' if fmt == 'parquet' else 'README.md'})", highlight=False)

