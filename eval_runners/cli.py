"""CLI pieces the lead mounts on ``pace``:

* ``instances_app`` -> ``app.add_typer(instances_app, name="instances")``
  (``pace instances import PACK...``, ``pace instances build BENCHMARK --from FILE``, ``pace instances list``)
* ``run_command`` -> ``app.command("run")(run_command)`` (``pace run MODEL``)

``python -m eval_runners ...`` exposes the same commands standalone.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

from eval_runners.secrets import redact, resolve_credentials

instances_app = typer.Typer(help="Instance packs: the prompts and references the runner uses.",
                            no_args_is_help=True)
err = Console(stderr=True)


def _connect(db):
    from warehouse.connect import connect
    from warehouse.settings import db_path
    return connect(db_path(db), udfs=False)


@instances_app.command("import")
def import_command(packs: List[Path] = typer.Argument(..., exists=True, help="pack files (.jsonl)"),
                   db: Optional[Path] = typer.Option(None, "--db", help="warehouse file (env PACE_DB)")):
    """Load instance packs into the `instances` table (unchanged records are a no-op)."""
    from eval_runners.packs import PackError, import_pack
    con = _connect(db)
    try:
        for p in packs:
            try:
                c = import_pack(con, p)
            except PackError as exc:
                err.print(f"[red]error:[/] {exc}")
                raise typer.Exit(2)
            typer.echo(f"{p}: {c['new']} new, {c['updated']} updated, {c['unchanged']} unchanged")
    finally:
        con.close()


@instances_app.command("build")
def build_command(benchmark: str = typer.Argument(..., help="benchmark name, e.g. gpqa"),
                  source: Path = typer.Option(..., "--from", exists=True,
                                              help="local copy of the dataset rows (.jsonl/.json/.csv/.parquet)"),
                  out: Optional[Path] = typer.Option(None, "--out", help="pack file to write"),
                  version: str = typer.Option("1", "--version", help="pack version"),
                  subdir: Optional[str] = typer.Option(None, "--subdir", help="subtask (repobench, livecodebench, bfcl, planbench)")):
    """Convert a local copy of a benchmark's public dataset rows into a pack (no download)."""
    from eval_runners.packs import PackError, build_pack
    try:
        path, n = build_pack(benchmark, source, out, version=version, subdir=subdir)
    except (PackError, KeyError, ValueError) as exc:
        err.print(f"[red]error:[/] {exc}")
        raise typer.Exit(2)
    typer.echo(f"wrote {n} records to {path}")


@instances_app.command("list")
def list_command(db: Optional[Path] = typer.Option(None, "--db")):
    """Instances per benchmark / call subdir / pack version."""
    con = _connect(db)
    rows = con.execute("""SELECT benchmark, subdir, pack, pack_version, count(*) FROM instances
                          GROUP BY ALL ORDER BY ALL""").fetchall()
    t = Table("benchmark", "subdir", "pack", "version", "instances")
    for r in rows:
        t.add_row(*[str(x) for x in r])
    Console().print(t)


def run_command(
    model: str = typer.Argument(..., help="model id as the endpoint knows it"),
    db: Optional[Path] = typer.Option(None, "--db", help="warehouse file (env PACE_DB, default ./pace.duckdb)"),
    plan: Optional[Path] = typer.Option(None, "--plan", exists=True,
                                        help="CSV with benchmark,subdir,instance_id (default: the warehouse plan)"),
    dry_run: bool = typer.Option(False, "--dry-run", help="print calls, estimated tokens and cost; call nothing"),
    max_cost: Optional[float] = typer.Option(None, "--max-cost", help="USD cap; stops before exceeding it"),
    concurrency: int = typer.Option(8, "--concurrency", min=1),
    rate_limit: Optional[float] = typer.Option(None, "--rate-limit", help="max requests per second"),
    api_key: Optional[str] = typer.Option(None, "--api-key", help="> $API_KEY > .env", show_default=False),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="> $BASE_URL > .env"),
    prices: Optional[Path] = typer.Option(None, "--prices", exists=True, help="price table (JSON/TOML)"),
    vision: bool = typer.Option(False, "--vision", help="the model accepts images"),
    skip_unavailable: bool = typer.Option(False, "--skip-unavailable",
                                          help="drop (and report) calls whose requirements are unmet"),
    timeout: float = typer.Option(300.0, "--timeout", help="seconds per attempt"),
    max_retries: int = typer.Option(6, "--max-retries"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable summary on stdout"),
):
    """Run MODEL on its plan through an OpenAI-compatible endpoint and append the rows."""
    from eval_runners.plan import load_plan_csv, plan_from_warehouse
    from eval_runners.pricing import PriceTable
    from eval_runners.run import RunBlocked, RunOptions, run_plan
    creds = resolve_credentials(api_key, base_url)
    key = creds.api_key
    try:
        con = _connect(db)
        rows = load_plan_csv(plan) if plan else plan_from_warehouse(con, model)
        opts = RunOptions(dry_run=dry_run, max_cost=max_cost, concurrency=concurrency,
                          rate_limit=rate_limit, vision=vision, skip_unavailable=skip_unavailable,
                          prices=PriceTable.load(prices), timeout=timeout, max_retries=max_retries,
                          progress=not dry_run)
        summary = run_plan(con, model, rows, credentials=creds, options=opts)
    except RunBlocked as exc:
        err.print(redact(str(exc), key), markup=False)
        raise typer.Exit(2)
    except (LookupError, ValueError, OSError) as exc:
        err.print(f"error: {redact(exc, key)}", markup=False)
        raise typer.Exit(2)
    d = summary.to_dict()
    if as_json:
        typer.echo(redact(json.dumps(d, default=str), key))
        return
    out = Console()
    if dry_run:
        t = Table("call", "state", "est. prompt tok", "max completion tok")
        for c in d["calls_planned"]:
            t.add_row(c["call"], c["state"], str(c["est_prompt_tokens"]), str(c["max_tokens"]))
        out.print(t)
        cost = "unknown (no price; pass --prices)" if d["est_max_cost_usd"] is None else f"${d['est_max_cost_usd']:.4f}"
        paid = sum(1 for c in d["calls_planned"] if c["state"] == "todo")
        out.print(f"{paid} paid call(s), {d['est_prompt_tokens']} prompt tokens (est.), "
                  f"<= {d['est_max_completion_tokens']} completion tokens; max cost {cost}")
    else:
        out.print(f"run {d['run_id']}: {d['status']}; {d['paid_calls']} paid, {d['from_stored']} from stored, "
                  f"{d['already_scored']} already scored; {d['rows_written']} rows; "
                  f"{d['prompt_tokens']}+{d['completion_tokens']} tokens; "
                  f"${d['cost_usd']:.4f}{'' if d['cost_known'] else ' (+ unpriced)'}")
        if d["errors"] or d["unscorable"] or d["grader_errors"] or d["not_run"]:
            out.print(f"errors {d['errors']}, unscorable {d['unscorable']}, grader errors {d['grader_errors']}, "
                      f"not run (budget) {d['not_run']} — rerun to retry; nothing was counted as 0")
        for s in d["error_samples"][:5]:
            out.print("  " + redact(s, key), markup=False)
    if d["skipped"]:
        err.print("skipped (requirements unmet): " + redact(json.dumps(d["skipped"]), key), markup=False)
    if summary.status in ("stopped_budget",):
        raise typer.Exit(3)


def standalone_app() -> typer.Typer:
    app = typer.Typer(no_args_is_help=True, add_completion=False)
    app.add_typer(instances_app, name="instances")
    app.command("run")(run_command)
    return app


def main():
    standalone_app()()


def mount(app: typer.Typer) -> None:
    """Attach `pace instances ...` and `pace run MODEL` to the main CLI."""
    app.add_typer(instances_app, name="instances")
    app.command("run")(run_command)
