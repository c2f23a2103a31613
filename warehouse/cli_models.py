"""`pace loocv` and `pace sweep`: evaluation commands (mounted on the main app)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from warehouse import settings, validate
from warehouse.cli import DbOpt, JsonOpt, fail, open_read, open_write
from warehouse.cli_options import ListOptionsCommand, env_hint, options_given
from warehouse.errors import UserError
from warehouse.output import console, emit_json, err_console, print_rows

loocv_app = typer.Typer(help="Leave-one-model-out evaluation of the proxy (Goal A: abs).", no_args_is_help=True)


def check_budget_flags(*, count: int, B: int, seed: int, q: Optional[float] = None, m: Optional[float] = None,
                       nc_h: Optional[int] = None, nc_d: Optional[int] = None, nc_max: int = 10) -> None:
    """The numeric flags shared by loocv, sweep and fit, checked before anything runs."""
    from warehouse.api import check_budget

    check_budget(count=count, B=B, seed=seed, q=q, m=m, nc_h=nc_h, nc_d=nc_d, nc_max=nc_max)


def checked_benchmarks(con, sources: Optional[list[str]], targets: Optional[list[str]]):
    """--sources / --targets split, and each name checked against the warehouse's roles."""
    from warehouse.api import checked_benchmarks

    return checked_benchmarks(con, validate.split_list(sources), validate.split_list(targets))


def warehouse_api(db):
    """The :class:`warehouse.Warehouse` a command works on, with a spinner for long steps."""
    from warehouse.api import Warehouse

    return Warehouse(db, status=err_console.status)


#: options whose value a method may ignore (see warehouse.method_flags)
TUNING = ("count", "B", "seed", "q", "m", "nc_h", "nc_d", "nc_max", "missing")


def loocv_options(ctx: typer.Context, task: str, method: str) -> dict:
    """The tuning options given on the command line or by the environment (see cli_options)."""
    from warehouse.kernels import abs_methods, pair_methods
    from warehouse.method_flags import reads

    validate.choice(method, "--method", (abs_methods() if task == "abs" else pair_methods()))
    names = [n for n in TUNING if n in ctx.params]
    return options_given(ctx, names, reads(task, method, ctx.params))


Method = Annotated[str, typer.Option("--method", envvar="PACE_METHOD", help=(
    "default: the Pace proxy shrunk toward a source-ability link (extrapolates to models unlike the training "
    "set); instance: the Pace proxy alone with the published flaws fixed; compat: the published pipeline as "
    "published; baselines: mean, random-c, bench-ridge."))]
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
Count = Annotated[int, typer.Option("--count", envvar="PACE_COUNT", show_envvar=True,
                                    help="Instance budget C per target.")]
Boot = Annotated[int, typer.Option("--B", envvar="PACE_B", show_envvar=True,
                                   help="Bootstrap replicates of the target instances.")]
Seed = Annotated[int, typer.Option("--seed", envvar="PACE_SEED", show_envvar=True, help="Base random seed.")]
AutoTune = Annotated[bool, typer.Option("--auto-tune", help="Tune the configuration per target "
                                        "(compat: on the evaluation predictions, as published).")]
StrictBudget = Annotated[bool, typer.Option("--strict-budget", help="Joint budget |H ∪ D| = C.")]
MixM = Annotated[Optional[float], typer.Option("--m", help="Mixing weight of the Local (H) side.")]
NcH = Annotated[Optional[int], typer.Option("--nc-h", help="Rank of the Local embedding.")]
NcD = Annotated[Optional[int], typer.Option("--nc-d", help="Rank of the Global embedding.")]
NcMax = Annotated[int, typer.Option("--nc-max", help="Upper end of the nc grids (auto-tune).")]
Plots = Annotated[bool, typer.Option("--plots/--no-plots", envvar="PACE_PLOTS",
                                     help="Also draw the PNG plots into --out (off by default: drawing costs "
                                          "more than a compat evaluation; the table and CSV are always written).")]


@loocv_app.command("abs", cls=ListOptionsCommand)
def loocv_abs(
    ctx: typer.Context,
    count: Count = 100,
    B: Boot = 300,
    seed: Seed = 42,
    auto_tune: AutoTune = False,
    strict_budget: StrictBudget = False,
    q: Annotated[Optional[float], typer.Option("--q", help="Share of the budget for Local (H) selection.")] = None,
    m: MixM = None,
    nc_h: NcH = None,
    nc_d: NcD = None,
    nc_max: NcMax = 10,
    fit_all: Annotated[bool, typer.Option("--fit-all", help="In-sample fit on all models (like the "
                                          "published fit-abs; analysis only, not out-of-sample).")] = False,
    missing: Annotated[str, typer.Option("--missing", help="instance only: mask missing source scores, treat "
                                         "them as 0 (as compat), or auto: choose per fold by inner LOOCV.")]
        = "mask",
    method: Method = "default",
    split: Split = "loo",
    sources: Sources = None,
    targets: Targets = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for abs_predictions.csv and the plots.")] = Path("out"),
    plots: Plots = False,
    db: DbOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Goal A: predict each model's target means with it held out (or its whole fold, see --split); print
    MAE, Spearman and pair accuracy per target. An option the method does not read is refused (default
    reads --count and --seed; instance also --B, --fit-all, --missing; compat the rest; mean and
    bench-ridge none, random-c --count and --seed)."""
    from warehouse.evaluate import plot_predictions, write_predictions_csv
    from warehouse.outputs import check_names, output_run

    with env_hint(ctx):
        given = loocv_options(ctx, "abs", method)
        out = settings.user_path(out)
        check_names(out, "loocv-abs", ["abs_predictions.csv"])
        run = warehouse_api(db).loocv("abs", method=method, split=split, auto_tune=auto_tune,
                                      strict_budget=strict_budget, fit_all=fit_all, sources=sources, targets=targets,
                                      **given)
    run_id, seconds = run.run_id, run.seconds
    rows = [tuple(r.values()) for r in run.metrics]
    configs = [tuple(c.values()) for c in run.configs]
    con = open_read(db)
    knobs = _knobs("abs", method, {**given, "auto_tune": auto_tune, "fit_all": fit_all})
    title = f"Goal A {method} split={split} {knobs}{' auto-tune' if auto_tune else ''}"
    with output_run(out, "loocv-abs", note=run_id) as staging:
        write_predictions_csv(con, run_id, staging / "abs_predictions.csv")
        pngs = [out / p.name for p in plot_predictions(con, run_id, staging, title)] if plots else []
    csv_path = out / "abs_predictions.csv"
    if json_out:
        emit_json({"run_id": run_id, "seconds": seconds, "csv": str(csv_path), "plots": [str(p) for p in pngs],
                   "split": split,
                   "metrics": [dict(zip(["target", "mae_pp", "spearman", "pearson", "r2", "pair_accuracy_pct"], r))
                               for r in rows],
                   "configs": [dict(zip(["target", "fold", "m", "nc_h", "nc_d", "q"], c)) for c in configs],
                   "notes": run.notes})
        return
    if auto_tune and len(configs) <= 8:
        console.print("auto-tuned configuration per target:", highlight=False)
        for target, fold, m_, h, d, q_ in configs:
            console.print(f"  {target:<22} m={m_:.1f} nc_h={h} nc_d={d} q={q_}", highlight=False)
    print_rows(["target", "MAE (pp)", "Spearman", "Pearson", "R²", "pair acc (%)"], rows,
               title=f"{title}  [{run_id}]", digits=3)
    for note in run.notes:
        console.print(f"note: {note}", highlight=False)
    console.print(f"{seconds:.1f} s; predictions -> {csv_path}; "
                  + (f"plots -> {out}/abs_loocv_*.png" if plots else "plots: add --plots"), highlight=False)




@loocv_app.command("pair", cls=ListOptionsCommand)
def loocv_pair(
    ctx: typer.Context,
    count: Count = 100,
    B: Boot = 300,
    seed: Seed = 42,
    auto_tune: AutoTune = False,
    strict_budget: StrictBudget = False,
    pin_task_a_selection: Annotated[bool, typer.Option(
        "--pin-task-a-selection", help="Reuse Goal A's selected instances (required by compat's strict path).")]
        = False,
    m: MixM = None,
    nc_h: NcH = None,
    nc_d: NcD = None,
    nc_max: NcMax = 10,
    method: Method = "default",
    split: Split = "loo",
    sources: Sources = None,
    targets: Targets = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for pair_predictions.csv and the plot.")] = Path("out"),
    plots: Plots = False,
    db: DbOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Goal B: for each held-out model, predict who wins against every other model; print pair accuracy.
    An option the method does not read is refused (default reads --count, --B and --seed)."""
    from warehouse.evaluate import plot_pair_margins, write_pair_predictions_csv
    from warehouse.outputs import check_names, output_run

    with env_hint(ctx):
        given = loocv_options(ctx, "pair", method)
        out = settings.user_path(out)
        check_names(out, "loocv-pair", ["pair_predictions.csv"] + (["pair_loocv_scatter.png"] if plots else []))
        run = warehouse_api(db).loocv("pair", method=method, split=split, auto_tune=auto_tune,
                                      strict_budget=strict_budget, pin_task_a_selection=pin_task_a_selection,
                                      sources=sources, targets=targets, **given)
    run_id, seconds = run.run_id, run.seconds
    rows = [tuple(r.values()) for r in run.metrics]
    configs = [tuple(c.values()) for c in run.configs]
    con = open_read(db)
    knobs = _knobs("pair", method, {**given, "auto_tune": auto_tune})
    title = f"Goal B {method} split={split} {knobs}{' auto-tune' if auto_tune else ''}"
    with output_run(out, "loocv-pair", note=run_id) as staging:
        write_pair_predictions_csv(con, run_id, staging / "pair_predictions.csv")
        if plots:
            plot_pair_margins(con, run_id, staging / "pair_loocv_scatter.png", title)
    csv_path, png = out / "pair_predictions.csv", out / "pair_loocv_scatter.png" if plots else None
    if json_out:
        emit_json({"run_id": run_id, "seconds": seconds, "csv": str(csv_path), "plot": str(png) if png else None,
                   "metrics": [dict(zip(["target", "accuracy_pct", "pairs"], r)) for r in rows],
                   "configs": [dict(zip(["target", "fold", "m", "nc_h", "nc_d", "platt_a", "platt_b"], c))
                               for c in configs], "notes": run.notes})
        return
    if len(configs) <= 8:
        for target, _, m_, h, d, a, b in configs:
            platt = f" Platt a={a:.3f} b={b:.3f}" if a is not None else ""
            console.print(f"  {target:<22} m={m_:.1f} nc_h={h} nc_d={d}{platt}", highlight=False)
    print_rows(["target", "accuracy (%)", "pairs"], rows, title=f"{title}  [{run_id}]", digits=2)
    for note in run.notes:
        console.print(f"note: {note}", highlight=False)
    console.print(f"{seconds:.1f} s; predictions -> {csv_path}; " + (f"plot -> {png}" if png else "plot: add --plots"),
                  highlight=False)


def _refuse_unread(ctx: typer.Context, names: list[str], options: dict[str, str]) -> None:
    """sweep: an option typed on the line that none of --methods reads is refused."""
    from warehouse.method_flags import FLAG, reads

    for param, option in options.items():
        if options_given(ctx, [param])[param] is not None and not any(option in reads("abs", n, {}) for n in names):
            flag = "--counts" if param == "counts" else FLAG[option]
            raise UserError(f"none of --methods {','.join(names)} uses {flag}; drop it")


def _knobs(task: str, method: str, given: dict) -> str:
    """'C=100 B=300 seed=42' for the budget options the run used (defaults filled in)."""
    from warehouse.api import DEFAULTS
    from warehouse.method_flags import reads

    read = reads(task, method, given)
    used = {k: given[k] if given.get(k) is not None else DEFAULTS[k] for k in ("count", "B", "seed") if k in read}
    return " ".join(f"{'C' if k == 'count' else k}={v}" for k, v in used.items())


def sweep(
    ctx: typer.Context,
    counts: Annotated[str, typer.Option("--counts", help="Budgets C to evaluate, comma-separated.")]
        = "25,50,100,200,300,400,500",
    methods: Annotated[str, typer.Option("--methods", help="Methods to compare, comma-separated.")]
        = "compat,default",
    B: Boot = 300,
    seed: Seed = 42,
    sources: Sources = None,
    targets: Targets = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for sweep.png.")] = Path("out"),
    db: DbOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Budget sweep: LOOCV error (Goal A, frozen/nested configs) against the instance budget C, per method."""
    from warehouse.evaluate import EvalRequest, compute_eval, store_eval
    from warehouse.kernels import abs_methods
    from warehouse.outputs import check_names, output_run

    budgets = validate.integer_list(counts, "--counts", 1)
    names = validate.split_list([methods]) or []
    for name in names:
        validate.choice(name, "--methods", abs_methods())
    check_budget_flags(count=1, B=B, seed=seed)
    _refuse_unread(ctx, names, {"counts": "count", "B": "B", "seed": "seed"})
    out = settings.user_path(out)
    check_names(out, "sweep", ["sweep.png"])
    con = open_read(db)
    sources, targets = checked_benchmarks(con, sources, targets)
    computed = []
    with err_console.status("sweeping ...") as status:
        for name in names:
            for count in budgets:
                status.update(f"sweeping: {name} C={count}")
                try:
                    result = compute_eval(con, EvalRequest(method=name, count=count, B=B, seed=seed,
                                                           sources=sources, targets=targets), "abs")
                except Exception as exc:  # kernel errors arrive wrapped by DuckDB
                    raise UserError(f"{name} C={count} failed: {str(exc).splitlines()[0]}") from exc
                if not result.n_predictions():
                    raise UserError(f"{name} C={count} produced no predictions; nothing was written")
                computed.append((name, count, result))
    con.close()
    con = open_write(db)
    results = []
    for name, count, result in computed:
        run_id = store_eval(con, result)
        mae, sp = con.execute("SELECT mae * 100, spearman FROM loocv_metrics WHERE run_id = ? "
                              "AND target = 'AVERAGE'", [run_id]).fetchone()
        results.append({"method": name, "count": count, "mae_pp": mae, "spearman": sp, "run_id": run_id})
    with output_run(out, "sweep", note=", ".join(r["run_id"] for r in results)) as staging:
        _plot_sweep(results, staging / "sweep.png")
    png = out / "sweep.png"
    if json_out:
        emit_json({"results": results, "plot": str(png)})
        return
    print_rows(["method", "C", "MAE (pp)", "Spearman", "run"],
               [(r["method"], r["count"], r["mae_pp"], r["spearman"], r["run_id"]) for r in results], digits=3)
    console.print(f"plot -> {png}", highlight=False)


def _plot_sweep(results: list[dict], path: Path) -> Path:
    from warehouse.plotting import pyplot

    plt = pyplot()

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for name in dict.fromkeys(r["method"] for r in results):
        rows = [r for r in results if r["method"] == name]
        ax1.plot([r["count"] for r in rows], [r["mae_pp"] for r in rows], marker="o", label=name)
        ax2.plot([r["count"] for r in rows], [r["spearman"] for r in rows], marker="o", label=name)
    ax1.set(xlabel="instance budget C", ylabel="average MAE (pp)", title="LOOCV error vs budget")
    ax2.set(xlabel="instance budget C", ylabel="average Spearman", title="LOOCV rank agreement vs budget")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


families_app = typer.Typer(help="Model families, held out together by `pace loocv --split family`.",
                           no_args_is_help=True)


@families_app.command("list")
def families_list(db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Every known model's family; 'explicit' marks the ones set by hand (the others come from the
    leading letters of the name)."""
    rows = open_read(db).execute("SELECT model, family, explicit FROM model_family ORDER BY family, model").fetchall()
    print_rows(["model", "family", "explicit"], rows, as_json=json_out)


@families_app.command("set")
def families_set(model: Annotated[str, typer.Argument(help="A model in the warehouse.")],
                 family: Annotated[str, typer.Argument(help="Its family, e.g. OpenAI.")],
                 db: DbOpt = None) -> None:
    """Put MODEL in FAMILY (e.g. `pace families set o4-mini OpenAI`)."""
    model, family = validate.model_name(model), validate.model_name(family, "FAMILY")
    con = open_write(db)
    validate.models_in_warehouse(con, [model], "MODEL")
    con.execute("INSERT OR REPLACE INTO model_families VALUES (?, ?)", [model, family])
    console.print(f"{model}: {family}", highlight=False)


@families_app.command("reset")
def families_reset(model: Annotated[str, typer.Argument(help="A model set with `pace families set`.")],
                   db: DbOpt = None) -> None:
    """Forget MODEL's explicit family (it falls back to the leading letters of its name)."""
    model = validate.model_name(model)
    con = open_write(db)
    if not con.execute("SELECT count(*) FROM model_families WHERE model = ?", [model]).fetchall()[0][0]:
        fail(f"{model!r} has no explicit family (see `pace families list`)")
    con.execute("DELETE FROM model_families WHERE model = ?", [model])
    console.print(f"{model}: family from its name again", highlight=False)


def mount(app: typer.Typer) -> None:
    app.add_typer(loocv_app, name="loocv")
    app.command("sweep", cls=ListOptionsCommand)(sweep)
    app.add_typer(families_app, name="families")
