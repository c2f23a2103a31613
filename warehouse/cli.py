"""`pace`: the command line of the warehouse.

Every command takes ``--db PATH`` (env ``PACE_DB``, default ``./pace.duckdb``); commands that print
results take ``--json``. Errors in the input are reported as ``path:line: message`` with exit code 2.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import duckdb
import typer
from typing_extensions import Annotated

from ingest.errors import IngestError
from warehouse import settings
from warehouse.connect import connect
from warehouse.output import console, emit_json, err_console, print_rows

app = typer.Typer(
    help="Pace Warehouse: per-instance benchmark scores in DuckDB; predicts agentic scores "
         "(GAIA, SWE-Bench, ...) from ~100 selected instances of cheap benchmarks.\n\n"
         "Typical flow: pace ingest -> pace loocv abs -> pace fit -> pace plan MODEL -> pace run MODEL "
         "-> pace predict MODEL.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)

DbOpt = Annotated[Optional[Path], typer.Option(
    "--db", envvar="PACE_DB", show_envvar=True,
    help="Warehouse file (default ./pace.duckdb).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of tables.")]


def fail(message: str, code: int = 2) -> None:
    """Print ``error: message`` on stderr (unwrapped, so paths stay whole) and exit."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def _progress_bar(total: int, label: str, enabled: bool = True):
    """A rich progress bar on stderr; returns (context manager, advance callable)."""
    from contextlib import nullcontext

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if not enabled or total < 2:
        return nullcontext(), None
    progress = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=err_console, transient=True)
    task = progress.add_task(label, total=total)
    return progress, lambda n=1: progress.advance(task, n)


# ----------------------------------------------------------------------------------------- ingest
@app.command()
def ingest(
    path: Annotated[Optional[Path], typer.Argument(
        help="Results tree <benchmark>/[<subdir>/]<Model>.csv. Default: results/standardized_results if "
             "it exists, else $PACE_RESULTS_DIR.")] = None,
    db: DbOpt = None,
    lake: Annotated[Optional[Path], typer.Option(
        "--lake", envvar="PACE_LAKE", help="Parquet lake folder (default: lake/ beside the database).")] = None,
    prune: Annotated[bool, typer.Option(help="Remove rows of files that disappeared from the tree.")] = False,
    strict: Annotated[bool, typer.Option(help="Treat every anomaly as an error (nothing is written).")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    json_out: JsonOpt = False,
) -> None:
    """Ingest a score tree into the warehouse and the Parquet lake (idempotent, all or nothing)."""
    from ingest.load import ingest_tree
    from ingest.tree import discover

    root = settings.results_path(path)
    if root is None:
        fail("no results tree: pass PATH, set PACE_RESULTS_DIR, put the Pace project's "
             "results/standardized_results here, or make synthetic data with `pace demo-data`.")
    db_file = settings.db_path(db)
    try:
        total = len(discover(root))
        bar, advance = _progress_bar(total, "ingest", progress and not json_out)
        con = connect(db_file)
        with bar:
            report = ingest_tree(con, root, settings.lake_path(db_file, lake), prune=prune, strict=strict,
                                 progress=advance)
    except IngestError as exc:
        fail(str(exc))
    if json_out:
        emit_json(report.to_dict())
    else:
        typer.echo(report.to_text())


@app.command("demo-data")
def demo_data(
    out: Annotated[Path, typer.Argument(help="Folder to write the synthetic tree to.")] = Path("demo_data"),
    models: Annotated[int, typer.Option("--models", help="Number of synthetic models.")] = 14,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (same seed, same bytes).")] = 0,
    scale: Annotated[float, typer.Option("--scale", help="Multiply instance counts.")] = 1.0,
    db: DbOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Write a SYNTHETIC Pace-shaped score tree (latent-ability model; targets depend on abilities)."""
    from ingest.synthetic import describe, generate_tree

    summary = generate_tree(out, n_models=models, seed=seed, scale=scale)
    if json_out:
        emit_json({"out": str(out), "models": list(summary.models), "files": summary.n_files,
                   "rows": summary.n_rows})
    else:
        typer.echo(describe(summary))
        console.print(f"\nNext: pace ingest {out}", highlight=False, markup=False)


# ------------------------------------------------------------------------------------------ status
@app.command()
def status(db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """What is in the warehouse: rows, models, benchmarks and their roles, leaves, files."""
    con = connect(db)
    totals = con.execute("""
        SELECT (SELECT count(*) FROM scores), (SELECT count(*) FROM score_files),
               (SELECT count(*) FROM models WHERE known), (SELECT count(*) FROM models WHERE NOT known),
               (SELECT count(DISTINCT (benchmark, subdir)) FROM scores)""").fetchone()
    per_benchmark = con.execute("""
        SELECT b.benchmark, b.role, count(DISTINCT s.subdir) AS leaves, count(DISTINCT s.model) AS models,
               count(s.model) AS rows, count(DISTINCT (s.subdir, s.instance_id)) AS instances
        FROM benchmarks b LEFT JOIN scores s USING (benchmark)
        GROUP BY ALL HAVING count(s.model) > 0 OR b.role <> 'excluded'
        ORDER BY b.role DESC, b.benchmark""").fetchall()
    cols = ["benchmark", "role", "leaves", "models", "rows", "instances"]
    fits = con.execute("""SELECT task, method, target, budget, len(trained_on), fit_id, created_at
                          FROM current_fits ORDER BY task, target""").fetchall()
    runs = con.execute("SELECT count(*) FROM loocv_runs").fetchall()[0][0]
    fit_cols = ["task", "method", "target", "budget", "trained_on", "fit_id", "created_at"]
    if json_out:
        emit_json({"db": str(settings.db_path(db)), "rows": totals[0], "files": totals[1],
                   "known_models": totals[2], "other_models": totals[3], "leaves": totals[4],
                   "benchmarks": [dict(zip(cols, r)) for r in per_benchmark],
                   "current_fits": [dict(zip(fit_cols, r)) for r in fits], "evaluation_runs": runs})
        return
    console.print(f"{settings.db_path(db)}: {totals[0]:,} score rows from {totals[1]:,} files; "
                  f"{totals[2]} known models (+{totals[3]} without source rows); {totals[4]} leaves",
                  highlight=False)
    print_rows(cols, per_benchmark)
    if fits:
        print_rows(fit_cols[:6], [r[:6] for r in fits], title="current fits (used by predictions)")
    console.print(f"{runs} evaluation runs in loocv_runs" + ("" if fits else "; no fitted proxy yet (pace fit)"),
                  highlight=False)


# ------------------------------------------------------------------------------------ sql / shell
@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="SQL to run (DuckDB dialect); all views and UDFs are available.")],
    db: DbOpt = None,
    json_out: JsonOpt = False,
    max_rows: Annotated[int, typer.Option(help="Rows to print in table form.")] = 200,
) -> None:
    """Run one SQL statement against the warehouse and print the result."""
    con = connect(db)
    try:
        rel = con.sql(query)
    except duckdb.Error as exc:
        fail(str(exc))
    if rel is None:
        return
    print_rows(rel.columns, rel.fetchall(), as_json=json_out, max_rows=max_rows)


@app.command()
def shell(db: DbOpt = None) -> None:
    """An interactive SQL prompt on the warehouse (statements end with ';', .quit to leave)."""
    from warehouse.shell import run_shell

    run_shell(connect(db))


# ---------------------------------------------------------------------------------- alias / roles
alias_app = typer.Typer(help="Map a file's model name to a model (e.g. DeepSeek-V3.2-Reasoner -> DeepSeek-V3.2).",
                        no_args_is_help=True)
app.add_typer(alias_app, name="alias")


@alias_app.command("add")
def alias_add(alias: str, model: str, db: DbOpt = None) -> None:
    """Ingest files named ALIAS.csv as MODEL; rows already ingested under ALIAS are renamed now."""
    from warehouse.aliases import add_alias

    try:
        moved = add_alias(connect(db), alias, model)
    except ValueError as exc:
        fail(str(exc))
    console.print(f"{alias} -> {model} ({moved:,} existing rows renamed)", highlight=False)


@alias_app.command("list")
def alias_list(db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Show the model aliases."""
    rows = connect(db).execute("SELECT alias, model FROM model_aliases ORDER BY alias").fetchall()
    print_rows(["alias", "model"], rows, as_json=json_out)


@alias_app.command("remove")
def alias_remove(alias: str, db: DbOpt = None) -> None:
    """Forget an alias (re-ingest to rename rows back)."""
    connect(db).execute("DELETE FROM model_aliases WHERE alias = ?", [alias])
    console.print(f"removed {alias}", highlight=False)


bench_app = typer.Typer(help="Benchmark roles: target, source or excluded.", no_args_is_help=True)
app.add_typer(bench_app, name="benchmarks")


@bench_app.command("list")
def benchmarks_list(db: DbOpt = None, json_out: JsonOpt = False) -> None:
    """Show every benchmark and its role."""
    rows = connect(db).execute("SELECT benchmark, role FROM benchmarks ORDER BY role DESC, benchmark").fetchall()
    print_rows(["benchmark", "role"], rows, as_json=json_out)


@bench_app.command("set")
def benchmarks_set(benchmark: str, role: Annotated[str, typer.Argument(help="target | source | excluded")],
                   db: DbOpt = None) -> None:
    """Set a benchmark's role."""
    if role not in ("target", "source", "excluded"):
        fail(f"role must be target, source or excluded, not {role!r}")
    connect(db).execute("INSERT OR REPLACE INTO benchmarks VALUES (?, ?)", [benchmark, role])
    console.print(f"{benchmark}: {role}", highlight=False)


# -------------------------------------------------------------------------------------------- demo
@app.command()
def demo(db: DbOpt = None, seed: int = 0) -> None:
    """The main flow end to end: find (or synthesise) data, ingest it, show what is in the warehouse."""
    from warehouse.demo import run_demo

    run_demo(settings.db_path(db), seed=seed)


def _mount_optional() -> None:
    """Commands of later stages register themselves here when their modules exist."""
    import importlib

    for module in ("warehouse.cli_models", "warehouse.cli_fit", "eval_runners.cli"):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        if hasattr(mod, "mount"):
            mod.mount(app)


_mount_optional()


def main() -> None:
    try:
        app()
    except IngestError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
