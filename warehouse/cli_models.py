"""`pace loocv` and `pace sweep`: evaluation commands (mounted on the main app)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from warehouse import methods, validate
from warehouse.api import Warehouse
from warehouse.cli_options import DbOpt, JsonOpt, ListOptionsCommand, env_hint, options_given, with_options
from warehouse.output import console, emit_json, err_console, print_rows

loocv_app = typer.Typer(help="Leave-one-model-out evaluation of the proxy (Goal A: abs, Goal B: pair).",
                        no_args_is_help=True)


def warehouse_api(db):
    """The :class:`warehouse.Warehouse` a command works on, with a spinner for long steps."""
    return Warehouse(db, status=err_console.status)


def method_help(task: str | None = None) -> str:
    return "; ".join(f"{name}: {methods.REGISTRY[name].summary}" for name in methods.names(task)) + "."


def given_options(ctx: typer.Context, task: str, method: str, options: dict) -> dict:
    """The method options given on the command line or by the environment (see cli_options)."""
    return options_given(ctx, list(options), methods.get(method, task).read(task, ctx.params))


Method = Annotated[str, typer.Option("--method", envvar="PACE_METHOD", help=method_help())]
Split = Annotated[str, typer.Option("--split", envvar="PACE_SPLIT", help=(
    "Which models are held out together: loo (each model), family (each model family, see `pace families`), "
    "low-K / high-K (the K models with the lowest / highest source ability: extrapolation), kfold-K (K folds "
    "of the labelled models, dealt in name order)."))]
Sources = Annotated[Optional[list[str]], typer.Option(
    "--sources", envvar="PACE_SOURCES", show_envvar=True,
    help="Source benchmarks to select from (space- or comma-separated, or repeated; default: all).")]
Targets = Annotated[Optional[list[str]], typer.Option(
    "--targets", envvar="PACE_TARGETS", show_envvar=True,
    help="Targets to predict (space- or comma-separated, or repeated; default: every benchmark with role "
         "'target').")]
Plots = Annotated[bool, typer.Option("--plots/--no-plots", envvar="PACE_PLOTS",
                                     help="Also draw the PNG plots into --out (off by default: drawing costs "
                                          "more than a compat evaluation; the table and CSV are always written).")]


def _reads(task: str) -> str:
    return "; ".join(f"{name} reads {', '.join(o.flag for o in methods.options() if o.name in m.reads[task]) or 'none'}"
                     for name, m in methods.REGISTRY.items() if task in m.reads)


@with_options(methods.options("abs"))
def loocv_abs(
    ctx: typer.Context,
    method: Method = "default",
    split: Split = "loo",
    sources: Sources = None,
    targets: Targets = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for abs_predictions.csv and the plots.")] = Path("out"),
    plots: Plots = False,
    db: DbOpt = None,
    json_out: JsonOpt = False,
    options: Optional[dict] = None,
) -> None:
    """Goal A: predict each model's target means with it held out (or its whole fold, see --split); print
    MAE, Spearman and pair accuracy per target. An option the method does not read is refused."""
    with env_hint(ctx):
        given = given_options(ctx, "abs", method, options)
        run = warehouse_api(db).loocv("abs", method=method, split=split, sources=sources, targets=targets, out=out,
                                      plots=plots, **given)
    csv_path, pngs = run.outputs[0], run.outputs[1:]
    if json_out:
        emit_json({"run_id": run.run_id, "seconds": run.seconds, "csv": str(csv_path), "plots": [str(p) for p in pngs],
                   "split": split, "metrics": run.metrics, "configs": run.configs, "notes": run.notes})
        return
    if given.get("auto_tune") and len(run.configs) <= 8:
        console.print("auto-tuned configuration per target:", highlight=False)
        for c in run.configs:
            console.print(f"  {c['target']:<22} m={c['m']:.1f} nc_h={c['nc_h']} nc_d={c['nc_d']} q={c['q']}",
                          highlight=False)
    # the share of truths inside the intervals: only a method whose LOOCV makes intervals (anchors) has one
    with_intervals = any(r["coverage_pct"] is not None for r in run.metrics)
    print_rows(["target", "MAE (pp)", "Spearman", "Pearson", "R²", "pair acc (%)"]
               + (["inside interval (%)"] if with_intervals else []),
               [tuple(v for k, v in r.items() if with_intervals or k != "coverage_pct") for r in run.metrics],
               title=f"{run.title}  [{run.run_id}]", digits=3)
    for note in run.notes:
        console.print(f"note: {note}", highlight=False)
    console.print(f"{run.seconds:.1f} s; predictions -> {csv_path}; "
                  + (f"plots -> {csv_path.parent}/abs_loocv_*.png" if plots else "plots: add --plots"), highlight=False)


@with_options(methods.options("pair"))
def loocv_pair(
    ctx: typer.Context,
    method: Method = "default",
    split: Split = "loo",
    sources: Sources = None,
    targets: Targets = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for pair_predictions.csv and the plot.")] = Path("out"),
    plots: Plots = False,
    db: DbOpt = None,
    json_out: JsonOpt = False,
    options: Optional[dict] = None,
) -> None:
    """Goal B: for each held-out model, predict who wins against every other model; print pair accuracy.
    An option the method does not read is refused."""
    with env_hint(ctx):
        given = given_options(ctx, "pair", method, options)
        run = warehouse_api(db).loocv("pair", method=method, split=split, sources=sources, targets=targets, out=out,
                                      plots=plots, **given)
    csv_path, png = run.outputs[0], (run.outputs[1] if len(run.outputs) > 1 else None)
    if json_out:
        emit_json({"run_id": run.run_id, "seconds": run.seconds, "csv": str(csv_path), "plot": str(png) if png else None,
                   "metrics": run.metrics, "configs": run.configs, "notes": run.notes})
        return
    if len(run.configs) <= 8:
        for c in run.configs:
            platt = f" Platt a={c['platt_a']:.3f} b={c['platt_b']:.3f}" if c["platt_a"] is not None else ""
            console.print(f"  {c['target']:<22} m={c['m']:.1f} nc_h={c['nc_h']} nc_d={c['nc_d']}{platt}",
                          highlight=False)
    print_rows(["target", "accuracy (%)", "pairs"], [tuple(r.values()) for r in run.metrics],
               title=f"{run.title}  [{run.run_id}]", digits=2)
    for note in run.notes:
        console.print(f"note: {note}", highlight=False)
    console.print(f"{run.seconds:.1f} s; predictions -> {csv_path}; " + (f"plot -> {png}" if png else "plot: add --plots"),
                  highlight=False)


loocv_abs.__doc__ += " " + _reads("abs") + "."
loocv_pair.__doc__ += " " + _reads("pair") + "."
loocv_app.command("abs", cls=ListOptionsCommand)(loocv_abs)
loocv_app.command("pair", cls=ListOptionsCommand)(loocv_pair)


def sweep(
    ctx: typer.Context,
    counts: Annotated[str, typer.Option("--counts", help="Budgets C to evaluate, comma-separated.")]
        = "25,50,100,200,300,400,500",
    method_names: Annotated[str, typer.Option("--methods", help="Methods to compare, comma-separated.")]
        = "compat,default",
    sources: Sources = None,
    targets: Targets = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for sweep.png.")] = Path("out"),
    db: DbOpt = None,
    json_out: JsonOpt = False,
    options: Optional[dict] = None,
) -> None:
    """Budget sweep: LOOCV error (Goal A, frozen/nested configs) against the instance budget C, per method."""
    with env_hint(ctx):
        budgets = validate.integer_list(counts, "--counts", 1)
        given = options_given(ctx, list(options))
        typed_counts = options_given(ctx, ["counts"])["counts"] is not None
        result = warehouse_api(db).sweep(budgets, validate.split_list([method_names]) or [], sources=sources,
                                         targets=targets, out=out, counts_given=typed_counts, **given)
    if json_out:
        emit_json({"results": result.results, "plot": str(result.plot)})
        return
    print_rows(["method", "C", "MAE (pp)", "Spearman", "run"],
               [(r["method"], r["count"], r["mae_pp"], r["spearman"], r["run_id"]) for r in result.results], digits=3)
    console.print(f"plot -> {result.plot}", highlight=False)


sweep = with_options([o for o in methods.options("abs") if o.name in ("B", "seed")])(sweep)


families_app = typer.Typer(help="Model families, held out together by `pace loocv --split family`.",
                           no_args_is_help=True)


@families_app.command("list")
def families_list(db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Every known model's family; 'explicit' marks the ones set by hand (the others come from the
    leading letters of the name)."""
    print_rows(["model", "family", "explicit"], Warehouse(db, read_only=True).families(), as_json=json_out)


@families_app.command("set")
def families_set(model: Annotated[str, typer.Argument(help="A model in the warehouse.")],
                 family: Annotated[str, typer.Argument(help="Its family, e.g. OpenAI.")],
                 db: DbOpt = None) -> None:
    """Put MODEL in FAMILY (e.g. `pace families set o4-mini OpenAI`)."""
    Warehouse(db).set_family(model, family)
    console.print(f"{model.strip()}: {family.strip()}", highlight=False)


@families_app.command("reset")
def families_reset(model: Annotated[str, typer.Argument(help="A model set with `pace families set`.")],
                   db: DbOpt = None) -> None:
    """Forget MODEL's explicit family (it falls back to the leading letters of its name)."""
    Warehouse(db).reset_family(model)
    console.print(f"{model.strip()}: family from its name again", highlight=False)


metadata_app = typer.Typer(help="Model metadata a user sets (release dates), beside an index's metadata.json.",
                           no_args_is_help=True)


@metadata_app.command("list")
def metadata_list(db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Every model's release date and where it comes from ('user': set with `pace metadata set`, which wins
    over the index's); models without one last ('unknown': the release-date check cannot place them)."""
    unknown = (None, None) if json_out else ("unknown", "")
    rows = [(m, str(d), s) if d else (m, *unknown) for m, d, s in Warehouse(db, read_only=True).metadata()]
    print_rows(["model", "released", "source"], rows, as_json=json_out)


@metadata_app.command("set")
def metadata_set(model: Annotated[str, typer.Argument(help="A model in the warehouse.")],
                 released: Annotated[Optional[str], typer.Option(
                     "--released", help="Its release date, YYYY-MM-DD (e.g. 2024-05-13).")] = None,
                 db: DbOpt = None) -> None:
    """Set MODEL's release date (e.g. `pace metadata set GPT-4o --released 2024-05-13`): the out-of-range
    check compares it with the fit's training models' dates. It wins over an index's date and survives a
    re-import; `pace metadata reset MODEL` forgets it."""
    done = Warehouse(db).set_metadata(model, released=released)
    was = f" (was {done['replaced']})" if done["replaced"] and done["replaced"] != done["released"] else ""
    console.print(f"{done['model']}: released {done['released']}{was}", highlight=False)
    if done["note"]:
        console.print(f"note: {done['note']}", highlight=False)


@metadata_app.command("reset")
def metadata_reset(model: Annotated[str, typer.Argument(help="A model set with `pace metadata set`.")],
                   db: DbOpt = None) -> None:
    """Forget what `pace metadata set` set for MODEL (the index's date, if any, applies again)."""
    now = Warehouse(db).reset_metadata(model)
    console.print(f"{model.strip()}: " + (f"released {now} again (the index's date)" if now else
                                          "no release date now (no index describes it)"), highlight=False)
