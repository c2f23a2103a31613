"""`pace`: the command line of the warehouse.

Every command takes ``--db PATH`` (env ``PACE_DB``, default ``./pace.duckdb``); commands that print
results take ``--json``. Every error a user can fix is one line ``error: ...`` with exit code 2
(input files as ``path:line: message``); no traceback reaches a user unless ``--debug`` (or
``PACE_DEBUG=1``) asks for it.

Opening: read commands open the warehouse read-only (a missing file is an error; other readers,
an open ``pace shell``, keep working); only ingest, demo, alias add and benchmarks set create one.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from eval_runners.cli import instances_app, run_command
from ingest.errors import IngestError
from ingest.synthetic import describe, generate_tree
from ingest.tree import discover
from warehouse import settings, validate
from warehouse.api import Warehouse
from warehouse.cli_fit import export, fit, plan, predict, selections_app
from warehouse.cli_import import import_app
from warehouse.cli_models import families_app, loocv_app, metadata_app, sweep
from warehouse.cli_options import DbOpt, JsonOpt, ListOptionsCommand, env_hint, fail, memory_hint, progress_bar
from warehouse.demo import run_demo
from warehouse.aliases import CONFIRM_ROWS
from warehouse.errors import UserError, audience
from warehouse.output import SQL_FORMATS, console, emit_json, err_console, print_result, print_rows

app = typer.Typer(
    help="Pace Warehouse: per-instance benchmark scores in DuckDB; predicts agentic scores "
         "(GAIA, SWE-Bench, ...) from ~100 selected instances of cheap benchmarks.\n\n"
         "Typical flow: pace ingest -> pace loocv abs -> pace fit -> pace plan MODEL -> pace run MODEL "
         "-> pace predict MODEL.\n\nErrors are one line; add --debug (or PACE_DEBUG=1) for a traceback.\n\n"
         "A warehouse another process holds (a run storing answers, an open `pace shell --write`) is waited for "
         "5 s; --wait [SECONDS] (anywhere on the line; bare: 600 s) or PACE_WAIT=SECONDS waits longer.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)

# ----------------------------------------------------------------------------------------- ingest
@app.command()
def ingest(
    path: Annotated[Optional[Path], typer.Argument(
        help="Results tree <benchmark>/[<subdir>/]<Model>.csv. Default: $PACE_RESULTS_DIR, else "
             "results/standardized_results if it exists.")] = None,
    db: DbOpt = None,
    lake: Annotated[Optional[Path], typer.Option(
        "--lake", envvar="PACE_LAKE", help="Parquet lake folder (default: the warehouse's, else lake/ beside pace.duckdb, NAME.lake/ beside NAME.duckdb).")]
        = None,
    prune: Annotated[bool, typer.Option(help="Remove rows of files of THIS tree that disappeared from it "
                                        "(files of other trees are never touched).")] = False,
    strict: Annotated[bool, typer.Option(help="Treat every anomaly as an error (nothing is written).")] = False,
    duplicates: Annotated[str, typer.Option(
        "--duplicates", envvar="PACE_DUPLICATES", show_envvar=True,
        help="A repeated id keeps its first row (as published), its last row, or is an error.")]
        = "first",
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    json_out: JsonOpt = False,
) -> None:
    """Ingest a score tree into the warehouse and the Parquet lake (idempotent, all or nothing)."""
    wh = Warehouse(db, lake=lake)
    root = settings.results_path(path)
    total = len(discover(root)) if root is not None and progress and not json_out else 0
    bar, advance = progress_bar(total, "ingest", progress and not json_out)
    with bar:
        report = wh.ingest(root, prune=prune, strict=strict, duplicates=duplicates, progress=advance)
    if json_out:
        emit_json(report.to_dict())
    else:
        typer.echo(report.to_text())


@app.command("demo-data")
def demo_data(
    out: Annotated[Path, typer.Argument(help="Folder to write the synthetic tree to (new, empty, or an earlier "
                                        "synthetic tree, which is replaced).")] = Path("demo_data"),
    models: Annotated[int, typer.Option("--models", help="Number of synthetic models (2-60).")] = 14,
    seed: Annotated[int, typer.Option("--seed", help="Random seed >= 0 (same seed, same bytes).")] = 0,
    scale: Annotated[float, typer.Option("--scale", help="Multiply instance counts (0 < X <= 20).")] = 1.0,
    json_out: JsonOpt = False,
) -> None:
    """Write a SYNTHETIC Pace-shaped score tree (latent-ability model; targets depend on abilities)."""
    validate.integer(models, "--models", 2, 60)
    validate.integer(seed, "--seed", 0)
    validate.number(scale, "--scale", 0, 20, lo_open=True)
    out = settings.user_path(out)
    try:
        summary = generate_tree(out, n_models=models, seed=seed, scale=scale, overwrite=True)
    except FileExistsError as exc:
        fail(str(exc))
    if json_out:
        emit_json({"out": str(out), "models": list(summary.models), "files": summary.n_files,
                   "rows": summary.n_rows})
    else:
        typer.echo(describe(summary))
        console.print(f"\nNext: pace ingest {out}", highlight=False, markup=False)


# ------------------------------------------------------------------------------------------ status
@app.command()
def status(db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """What is in the warehouse: rows, models, benchmarks and their roles, trees, fits, lake state."""
    st = Warehouse(db, read_only=True).status()
    if json_out:
        emit_json(st.to_dict())
        return
    console.print(f"{st.db}: {st.rows:,} score rows from {st.files:,} files; {st.known_models} known models "
                  f"(+{st.other_models} without source rows or held out of fits); {st.leaves} leaves",
                  highlight=False)
    if st.synthetic:
        console.print("SYNTHETIC data: these scores are made up by `pace demo-data` (not real results)",
                      highlight=False, style="bold yellow")
    print_rows(["benchmark", "role", "leaves", "models", "rows", "instances"],
               [tuple(r.values()) for r in st.benchmarks])
    if st.trees:
        print_rows(["tree", "synthetic", "files", "rows"], [tuple(t.values()) for t in st.trees],
                   title="ingested trees")
    if st.current_fits:
        print_rows(["task", "method", "target", "budget", "trained_on", "fit_id"],
                   [tuple(f.values())[:6] for f in st.current_fits], title="current fits (used by predictions)")
    console.print(f"{st.evaluation_runs} evaluation runs in loocv_runs"
                  + ("" if st.current_fits else "; no fitted proxy yet (pace fit)"), highlight=False)
    lake_state = (f"not this warehouse's: {st.lake_owner} (see `pace doctor`)" if st.lake_owner
                  else "in step with scores" if not st.lake_drift
                  else f"out of step for {', '.join(st.lake_drift)}: run `pace doctor`")
    console.print(f"lake {st.lake}: {lake_state}", highlight=False, markup=False)


# ------------------------------------------------------------------------------------ sql / shell
WriteOpt = Annotated[bool, typer.Option(
    "--write", help="Allow statements that change the warehouse (INSERT, DELETE, DROP, CREATE, ...). Without "
                    "it the warehouse is opened read-only. Either way no file, URL or extension outside the "
                    "warehouse is reachable and settings are locked.")]


@app.command()
def sql(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="SQL to run (DuckDB dialect); all views and UDFs are available.")],
    db: DbOpt = None,
    json_out: Annotated[bool, typer.Option("--json", help="The same as --format json.")] = False,
    fmt: Annotated[Optional[str], typer.Option(
        "--format", envvar="PACE_SQL_FORMAT", show_envvar=True,
        help="table (one record per row when it is too wide for the terminal), line, csv, json or markdown.")]
        = None,
    max_rows: Annotated[int, typer.Option(help="Rows to print as table, line or markdown (csv and json: all).")]
        = 200,
    write: WriteOpt = False,
) -> None:
    """Run SQL against the warehouse and print the result (read-only unless --write)."""
    validate.integer(max_rows, "--max-rows", 0)
    with env_hint(ctx):
        fmt = validate.choice(fmt.strip().lower(), "--format", SQL_FORMATS) if fmt else "table"
    if json_out and fmt not in ("json", "table"):
        fail(f"--json and --format {fmt} ask for two layouts: keep one")
    result = Warehouse(db).sql(query, output="tuples", write=write)
    if result is not None:
        print_result(result[0], result[1], "json" if json_out else fmt, max_rows=max_rows)


@app.command()
def shell(db: DbOpt = None, write: WriteOpt = False) -> None:
    """An interactive SQL prompt on the warehouse (statements end with ';', .quit to leave).
    Read-only unless --write, so other commands keep working while it is open."""
    failed = Warehouse(db).shell(write=write)
    if failed:
        fail(f"{failed} statement{'s' if failed > 1 else ''} failed or {'were' if failed > 1 else 'was'} refused "
             "(see above)")


# ---------------------------------------------------------------------------------------- doctor
@app.command()
def doctor(
    db: DbOpt = None,
    check: Annotated[bool, typer.Option("--check", help="Only report; change nothing (opens read-only). Reads the "
                                        "counts kept at write time, no score row.")] = False,
    scan: Annotated[bool, typer.Option("--scan", help="With --check: also compare every stored summary and lake "
                                       "partition with the score rows themselves (finds writes made outside pace; "
                                       "a repair always does).")] = False,
    from_lake: Annotated[bool, typer.Option(
        "--from-lake", help="Rebuild a lost or damaged warehouse file from its lake (the damaged file is moved "
                            "aside, never deleted).")] = False,
    lake: Annotated[Optional[Path], typer.Option(
        "--lake", envvar="PACE_LAKE", help="The lake to check or rebuild from (default: the warehouse's, else the "
                                           "folder beside it named after it: lake/ for pace.duckdb).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Check the warehouse and repair what can be derived again: migrate the schema, rewrite lake
    partitions that differ from `scores` or are damaged (row counts and a content fingerprint per
    benchmark), recompute the stored collapsed cells and summaries when they differ from their rules, remove what a
    killed writer left in the lake. A lake of another warehouse is reported, never touched. Exit 1 if
    --check finds a problem, or a problem is left unrepaired."""
    report = Warehouse(db, lake=lake).doctor(check=check, scan=scan, from_lake=from_lake)
    if json_out:
        emit_json(report)
    else:
        for line in report["lines"]:
            console.print(line, highlight=False, markup=False, soft_wrap=True)
    if report["problems"] if check or from_lake else report["unrepaired"]:
        raise typer.Exit(1)


# ---------------------------------------------------------------------------------- alias / roles
alias_app = typer.Typer(help="Map a file's model name to a model (e.g. DeepSeek-V3.2-Reasoner -> DeepSeek-V3.2).",
                        no_args_is_help=True)
app.add_typer(alias_app, name="alias")


@alias_app.command("add")
def alias_add(
    alias: str,
    model: str,
    yes: Annotated[bool, typer.Option("--yes", "-y", envvar="PACE_YES", help=(
        f"Rename without asking even when more than {CONFIRM_ROWS:,} score rows move (likely a whole other "
        "model rather than a misnamed file)."))] = False,
    db: DbOpt = None,
) -> None:
    """Ingest files named ALIAS.csv as MODEL; rows already ingested under ALIAS are renamed now
    (in the table and the lake), and the command says how many. Refused: names a file cannot carry,
    chains and cycles with the recorded aliases. Many rows (see --yes) need a confirmation, asked on a
    terminal."""
    wh = Warehouse(db, status=err_console.status)
    plan = wh.alias_preview(alias, model)
    if plan.needs_confirmation and not yes:
        question = f"{plan.alias} -> {plan.model} {plan.describe()}. Go ahead?"
        if not sys.stdin.isatty():
            fail(f"{plan.alias} -> {plan.model} {plan.describe()}, more than {CONFIRM_ROWS:,}: stdin is not a "
                 "terminal to confirm it; pass --yes")
        if not typer.confirm(question, default=False, err=True):
            fail("nothing renamed", code=1)
    done = wh.alias_add(plan.alias, plan.model, yes=True)
    console.print(f"{done.alias} -> {done.model} ({done.rows:,} existing rows renamed"
                  + (f" in {', '.join(done.benchmarks)}" if done.rows and len(done.benchmarks) <= 6 else "")
                  + ")", highlight=False)


@alias_app.command("keep")
def alias_keep(model: str, db: DbOpt = None) -> None:
    """Keep MODEL, which ingest held out of fits as another spelling of a known model, as a model of its
    own (it enters the next fit). To merge it instead: pace alias add MODEL KNOWN."""
    like = Warehouse(db).alias_keep(model)
    console.print(f"{model.strip()}: a model of its own (not {like}); it enters the next fit", highlight=False)


@alias_app.command("list")
def alias_list(db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Show the model aliases."""
    print_rows(["alias", "model"], Warehouse(db, read_only=True).aliases(), as_json=json_out)


@alias_app.command("remove")
def alias_remove(alias: str, db: DbOpt = None) -> None:
    """Forget an alias (re-ingest to rename rows back)."""
    Warehouse(db).remove_alias(alias)
    console.print(f"removed {alias.strip()}", highlight=False)


bench_app = typer.Typer(help="Benchmark roles: target, source or excluded.", no_args_is_help=True)
app.add_typer(bench_app, name="benchmarks")


@bench_app.command("list")
def benchmarks_list(db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Show every benchmark and its role."""
    print_rows(["benchmark", "role"], Warehouse(db, read_only=True).benchmarks(), as_json=json_out)


@bench_app.command("set")
def benchmarks_set(benchmark: str, role: Annotated[str, typer.Argument(help="target | source | excluded")],
                   db: DbOpt = None) -> None:
    """Set a benchmark's role (the benchmark must be known to the warehouse)."""
    benchmark = Warehouse(db).set_role(benchmark, role)
    console.print(f"{benchmark}: {role}", highlight=False)


# -------------------------------------------------------------------------------------------- demo
@app.command()
def demo(
    db: Annotated[Optional[Path], typer.Option(
        "--db", envvar="PACE_DB", show_envvar=True,
        help="Warehouse file. Default: ./pace.duckdb for a real results tree; demo_warehouse/pace.duckdb "
             "for synthetic data (never mixed into a warehouse holding real data).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the synthetic tree (>= 0).")] = 0,
    results: Annotated[Optional[Path], typer.Option(
        "--results", help="Results tree to run on. Default: $PACE_RESULTS_DIR, else results/standardized_results "
                          "if it exists, else a SYNTHETIC tree.")] = None,
) -> None:
    """The main flow end to end: find (or synthesise) data, ingest it, evaluate, fit, predict."""
    validate.integer(seed, "--seed", 0)
    run_demo(db, seed=seed, results=results)


@app.command()
def report(
    out: Annotated[Path, typer.Argument(help="The HTML file to write (new, or one an earlier `pace report` wrote).")],
    model: Annotated[Optional[list[str]], typer.Option(
        "--model", help="A model to predict on the page (repeat for several).")] = None,
    db: DbOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """One self-contained HTML page (no network when viewed): per --model its predictions against the
    training models, coverage, proxy and what its plan buys; the fit and the stored LOOCV runs;
    the most and least informative selected instances."""
    from warehouse.api import Warehouse

    out = settings.user_path(out)
    data = Warehouse(db, status=err_console.status).report(out, model)
    if json_out:
        emit_json({"out": str(out), "models": [s["model"] for s in data["models"]],
                   "loocv_runs": len(data["loocv"]), "targets": data["targets"]})
        return
    console.print(f"-> {out} ({len(data['models'])} models, {len(data['loocv'])} LOOCV runs, "
                  f"{data['instances']['n_selected']} selected instances)", highlight=False, markup=False)


app.add_typer(loocv_app, name="loocv")
app.command("sweep", cls=ListOptionsCommand)(sweep)
app.add_typer(families_app, name="families")
app.add_typer(metadata_app, name="metadata")
app.command("fit", cls=ListOptionsCommand)(fit)
app.command("plan")(plan)
app.command("predict")(predict)
app.add_typer(selections_app, name="selections")
app.command("export")(export)
app.add_typer(import_app, name="import")
app.add_typer(instances_app, name="instances")
app.command("run")(run_command)


# -------------------------------------------------------------------------------------- main
def _debug_requested(argv: list[str]) -> bool:
    return "--debug" in argv or os.environ.get("PACE_DEBUG", "").lower() in ("1", "true", "yes")


def main(argv: Optional[list[str]] = None) -> int:
    """Run ``pace`` with ``argv`` (default ``sys.argv[1:]``) and exit with its code.

    Errors become one line on stderr: exit 2 for what the user can fix (bad flags, bad files, a
    missing or busy warehouse), 1 for anything else, 130 on Ctrl-C. ``--debug`` (anywhere on the
    line) or ``PACE_DEBUG=1`` lets the traceback through instead."""
    click_error = {c.__name__: c for c in typer.BadParameter.__mro__}["ClickException"]

    args = list(sys.argv[1:] if argv is None else argv)
    debug = _debug_requested(args)
    args = [a for a in args if a != "--debug"]
    code = 0
    waiting = None
    speaking = audience.set("cli")                    # errors name options as flags (--write, not write=True)
    try:
        args, wait = _wait_flag(args)
        waiting = settings.wait_flag.set(wait)
        if args and "--help" not in args:
            settings.jobs()                            # a bad PACE_JOBS fails before any work starts
            settings.lock_wait()                       # and so does a bad PACE_WAIT
        result = app(args=args, prog_name="pace", standalone_mode=False)
        code = result if isinstance(result, int) else 0
    except click_error as exc:                         # bad flag, value or argument; or no arguments
        if type(exc).__name__ == "NoArgsIsHelpError":
            typer.echo(exc.format_message())
            code = 0
        else:
            typer.echo(f"error: {_with_value(exc, args)}" + _usage_hint(exc), err=True)
            code = 2
    except (UserError, IngestError) as exc:
        if debug:
            raise
        typer.echo(f"error: {_damage_hint(str(exc), args) or _from_environment(memory_hint(str(exc)), args)}",
                   err=True)
        code = 2
    except typer.Exit as exc:
        code = exc.exit_code
    except (KeyboardInterrupt, typer.Abort):
        typer.echo("aborted", err=True)
        code = 130
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no traceback for users
        if debug:
            raise
        damage = _damage_hint(str(exc), args)           # a damaged block met after the file opened
        first = (str(exc).strip().splitlines() or [""])[0]
        # DuckDB's "Out of Memory Error: ..." says what happened itself; anything else is named by its class
        what = memory_hint(first[first.index("Out of Memory Error"):]) if "Out of Memory Error" in first else \
            f"{type(exc).__name__}: {first}"
        typer.echo(f"error: {damage}" if damage else f"error: {what} (run again with --debug for the traceback)",
                   err=True)
        code = 2 if damage else 1
    finally:
        if waiting is not None:
            settings.wait_flag.reset(waiting)
        audience.reset(speaking)
    sys.exit(code)


def _damage_hint(message: str, args: list[str]) -> Optional[str]:
    """DuckDB's word for a damaged warehouse file, met by a query after it opened, as the one line
    that names the file and the way back (warehouse.connect.describe_open_error)."""
    from warehouse.connect import describe_open_error, is_damage

    if not is_damage(message) or "--from-lake" in message:
        return None
    db = None                                   # the last --db on the line, else PACE_DB / the default
    for i, arg in enumerate(args):
        if arg == "--db" and i + 1 < len(args):
            db = args[i + 1]
        elif arg.startswith("--db="):
            db = arg[len("--db="):]
    return describe_open_error(settings.db_path(db), RuntimeError(message))


def _from_environment(message: str, args: list[str]) -> str:
    """``message`` with the PACE_* variable named when it is about an option of the command on the line that
    took its value from that variable (``--format 'xml' ... (from PACE_EXPORT_FORMAT='xml')``). Commands that
    wrap themselves in :func:`~warehouse.cli_options.env_hint` have said so already."""
    if "(from PACE_" in message or not any(name.startswith("PACE_") for name in os.environ):
        return message
    command = typer.main.get_command(app)
    for word in args:                       # down the groups to the command the line runs
        sub = getattr(command, "commands", {}).get(word)
        if sub is None:
            break
        command = sub
    given = {arg.split("=", 1)[0] for arg in args if arg.startswith("-")}
    for param in command.params:
        var = param.envvar if isinstance(param.envvar, str) else None
        flags = [opt for opt in param.opts if opt.startswith("--")]
        if var and var in os.environ and any(f in message for f in flags) and not given & set(param.opts):
            return f"{message} (from {var}={os.environ[var]!r})"
    return message


def _wait_flag(args: list[str]) -> tuple[list[str], Optional[float]]:
    """``--wait [SECONDS]`` / ``--wait=SECONDS`` anywhere on the line (before a ``--``): removed from
    ``args``, returned as seconds (a bare ``--wait``: :data:`settings.WAIT_FLAG_DEFAULT`), else None."""
    out, wait, i = [], None, 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            out += args[i - 1:]
            break
        if arg.startswith("--wait="):
            wait = settings.seconds(arg[len("--wait="):], "--wait")
        elif arg == "--wait":
            wait = settings.WAIT_FLAG_DEFAULT
            if i < len(args) and re.fullmatch(r"\d+(\.\d*)?", args[i].strip()):
                wait = settings.seconds(args[i], "--wait")
                i += 1
        else:
            out.append(arg)
    return out, wait


def _with_value(exc, args: list[str]) -> str:
    """click's message for a value it could not convert, naming the value and where it came from
    (the flag's last occurrence on the line, else its PACE_* variable); click names neither."""
    message = exc.format_message()
    param = getattr(exc, "param", None)
    if param is None or not message.startswith("Invalid value"):
        return message
    message = re.sub(r" \(env var: '[^']*'\)", "", message)
    raw, origin = None, ""
    for i, arg in enumerate(args):
        for opt in getattr(param, "opts", []):
            if arg == opt and i + 1 < len(args):
                raw = args[i + 1]
            elif arg.startswith(opt + "="):
                raw = arg[len(opt) + 1:]
    envvar = getattr(param, "envvar", None)
    if raw is None and isinstance(envvar, str) and envvar in os.environ:
        raw, origin = os.environ[envvar], f"{envvar}="
    return message if raw is None else f"{message} (got {origin}{raw!r})"


def _usage_hint(exc) -> str:
    ctx = getattr(exc, "ctx", None)
    return f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
