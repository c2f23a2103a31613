"""CLI pieces the lead mounts on ``pace``:

* ``instances_app`` -> ``app.add_typer(instances_app, name="instances")``
  (``pace instances import PACK...``, ``pace instances build BENCHMARK --from FILE``, ``pace instances list``)
* ``run_command`` -> ``app.command("run")(run_command)`` (``pace run MODEL``)

``python -m eval_runners ...`` exposes the same commands standalone.

Every flag value is checked here, before anything is opened or called: a bad one is a one-line
``error: ...`` naming the flag and the value, exit code 2. Numbers are parsed here (not by the
option parser) so that ``--max-cost abc`` gets that same one line.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

from eval_runners.secrets import redact, resolve_credentials
from warehouse.api import Warehouse
from warehouse.errors import UserError

instances_app = typer.Typer(help="Instance packs: the prompts and references the runner uses.",
                            no_args_is_help=True)
err = Console(stderr=True)

#: exit codes of `pace run`
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_BUDGET, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def fail(message: str, code: int = EXIT_USAGE):
    """``error: message`` on one line of stderr, then exit."""
    typer.echo("error: " + " ".join(str(message).split()), err=True)
    raise typer.Exit(code)


def parse_number(flag: str, raw: str | None, *, integer: bool = False, minimum: float | None = None,
                 above: float | None = None, maximum: float | None = None):
    """``raw`` as an int/float within bounds, or a one-line usage error naming ``flag`` and ``raw``."""
    if raw is None:
        return None
    bounds = " and ".join(b for b in (f">= {minimum:g}" if minimum is not None else "",
                                      f"> {above:g}" if above is not None else "",
                                      f"<= {maximum:g}" if maximum is not None else "") if b)
    want = ("an integer" if integer else "a number") + (f" {bounds}" if bounds else "")
    try:
        value = int(raw.strip()) if integer else float(raw.strip())
    except ValueError:
        fail(f"{flag} must be {want}, got {raw!r}")
    if not math.isfinite(value) or (minimum is not None and value < minimum) \
            or (above is not None and value <= above) or (maximum is not None and value > maximum):
        fail(f"{flag} must be {want}, got {raw!r}")
    return value


def existing_file(flag: str, path: Path | None) -> Path | None:
    if path is None:
        return None
    if not path.exists():
        fail(f"{flag}: no such file: {path}")
    if not path.is_file():
        fail(f"{flag}: not a file: {path}")
    return path


def _open(db, *, must_exist: bool, read_only: bool = False):
    """The warehouse connection, or a one-line error (missing file or folder, not DuckDB, locked...)."""
    from warehouse.connect import connect
    from warehouse.errors import UserError
    try:
        return connect(db, read_only=read_only, create=not must_exist)
    except UserError as exc:
        fail(str(exc))


@instances_app.command("import")
def import_command(packs: List[Path] = typer.Argument(..., help="pack files (.jsonl)"),
                   db: Optional[Path] = typer.Option(None, "--db", help="warehouse file (env PACE_DB)")):
    """Load instance packs into the `instances` table (unchanged records are a no-op).

    Every pack is read and checked before anything is written.
    """
    from eval_runners.packs import PackError, import_pack, read_pack
    for p in packs:
        existing_file("PACK", p)
        try:
            read_pack(p)
        except PackError as exc:
            fail(str(exc))
        except (ValueError, TypeError, AttributeError, KeyError, OSError) as exc:
            fail(f"{p}: not a valid pack ({type(exc).__name__}: {exc})")
    con = _open(db, must_exist=False)
    try:
        for p in packs:
            try:
                c = import_pack(con, p)
            except (PackError, OSError) as exc:
                fail(str(exc))
            typer.echo(f"{p}: {c['new']} new, {c['updated']} updated, {c['unchanged']} unchanged")
    finally:
        con.close()


@instances_app.command("build")
def build_command(benchmark: str = typer.Argument(..., help="benchmark name, e.g. gpqa"),
                  source: Path = typer.Option(..., "--from",
                                              help="local copy of the dataset rows (.jsonl/.json/.csv/.parquet)"),
                  out: Optional[Path] = typer.Option(None, "--out", help="pack file to write (must not exist "
                                                     "unless --overwrite)"),
                  version: str = typer.Option("1", "--version", help="pack version"),
                  subdir: Optional[str] = typer.Option(None, "--subdir", help="subtask (repobench, livecodebench, bfcl, planbench)"),
                  overwrite: bool = typer.Option(False, "--overwrite", help="replace an existing --out file")):
    """Convert a local copy of a benchmark's public dataset rows into a pack (no download)."""
    from eval_runners.builders import BUILDERS, build_pack
    from eval_runners.packs import PackError
    benchmark = benchmark.strip()
    if benchmark not in BUILDERS:
        fail(f"no pack builder for benchmark {benchmark!r}; available: {', '.join(sorted(BUILDERS))}")
    existing_file("--from", source)
    version = version.strip()
    if not version or any(ord(c) < 32 for c in version):
        fail(f"--version must be a non-empty single-line string, got {version!r}")
    if subdir is not None:
        subdir = subdir.strip()
        if not subdir:
            fail("--subdir must not be empty (leave it out for the benchmark's default)")
    out = out or source.with_name(f"{benchmark}{'_' + subdir if subdir else ''}.pack.jsonl")
    if out.exists() and not overwrite:
        fail(f"--out {out} exists; pass --overwrite to replace it")
    if out.exists() and not out.is_file():
        fail(f"--out: not a file: {out}")
    if not out.parent.is_dir():
        fail(f"--out: folder {out.parent} does not exist")
    try:
        path, n = build_pack(benchmark, source, out, version=version, subdir=subdir)
    except (PackError, KeyError, ValueError, TypeError, OSError) as exc:
        fail(f"{source}: {exc}")
    typer.echo(f"wrote {n} records to {path}")


@instances_app.command("list")
def list_command(db: Optional[Path] = typer.Option(None, "--db", help="warehouse file (env PACE_DB)")):
    """Instances per benchmark / call subdir / pack version."""
    import duckdb
    con = _open(db, must_exist=True, read_only=True)
    try:
        rows = con.execute("""SELECT benchmark, subdir, pack, pack_version, count(*) FROM instances
                              GROUP BY ALL ORDER BY ALL""").fetchall()
    except duckdb.CatalogException:
        rows = []                          # a warehouse from before packs existed
    finally:
        con.close()
    if not rows:
        typer.echo("no instances yet (pace instances import PACK)")
        return
    t = Table("benchmark", "subdir", "pack", "version", "instances")
    for r in rows:
        t.add_row(*[str(x) for x in r])
    Console().print(t)


def run_command(
    model: str = typer.Argument(..., help="model id as the endpoint knows it (surrounding spaces are trimmed)"),
    db: Optional[Path] = typer.Option(None, "--db", help="warehouse file (env PACE_DB, default ./pace.duckdb)"),
    plan: Optional[Path] = typer.Option(None, "--plan",
                                        help="CSV with benchmark,subdir,instance_id (default: the warehouse plan)"),
    dry_run: bool = typer.Option(False, "--dry-run", help="print calls, estimated tokens and cost; call nothing"),
    max_cost: Optional[str] = typer.Option(None, "--max-cost", metavar="USD", envvar="PACE_MAX_COST",
                                           help="cap in USD (>= 0): no call starts that could exceed it; "
                                                "the calls left are reported as 'not run (budget)'"),
    concurrency: str = typer.Option("8", "--concurrency", metavar="N", envvar="PACE_CONCURRENCY", help="calls in flight (1-1024)"),
    rate_limit: Optional[str] = typer.Option(None, "--rate-limit", metavar="PER_SECOND", envvar="PACE_RATE_LIMIT",
                                             help="max requests per second (> 0)"),
    api_key: Optional[str] = typer.Option(None, "--api-key", help="> $API_KEY > .env", show_default=False),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="> $BASE_URL > .env"),
    prices: Optional[Path] = typer.Option(None, "--prices", envvar="PACE_PRICES",
                                          help="price table (JSON/TOML)"),
    vision: bool = typer.Option(False, "--vision", help="the model accepts images"),
    skip_unavailable: bool = typer.Option(False, "--skip-unavailable",
                                          help="drop (and report) calls whose requirements are unmet"),
    timeout: str = typer.Option("300", "--timeout", metavar="SECONDS", help="seconds per attempt (> 0)"),
    max_retries: str = typer.Option("6", "--max-retries", metavar="N",
                                    help="retries of a call on 429, 5xx, timeouts, garbage replies (0-100)"),
    max_consecutive_failures: str = typer.Option(
        "10", "--max-consecutive-failures", metavar="N",
        help="stop calling after N calls in a row failed (0: never stop)"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable summary on stdout"),
):
    """Run MODEL on its plan through an OpenAI-compatible endpoint and append the rows.

    Every answer is stored as it arrives: a rerun pays only for calls never answered. 401/403/404 stop the run at once.
    The warehouse is opened only for a moment per batch of answers: status, predict, sql and plan work meanwhile.

    Exit codes: 0 all answered; 1 calls failed or not run (rerun retries them); 2 bad input; 3 --max-cost hit.
    """
    from eval_runners.run import RunBlocked      # loads the OpenAI client library (~2 s): `pace run` only

    max_cost_v = parse_number("--max-cost", max_cost, minimum=0)
    concurrency_v = parse_number("--concurrency", concurrency, integer=True, minimum=1, maximum=1024)
    rate_limit_v = parse_number("--rate-limit", rate_limit, above=0)
    timeout_v = parse_number("--timeout", timeout, above=0, maximum=86400)
    max_retries_v = parse_number("--max-retries", max_retries, integer=True, minimum=0, maximum=100)
    streak_v = parse_number("--max-consecutive-failures", max_consecutive_failures, integer=True, minimum=0)
    existing_file("--plan", plan)
    existing_file("--prices", prices)
    key = resolve_credentials(api_key, base_url).api_key
    try:
        summary = Warehouse(db).run(model, plan=plan, dry_run=dry_run, max_cost=max_cost_v,
                                    concurrency=concurrency_v, rate_limit=rate_limit_v, api_key=api_key,
                                    base_url=base_url, prices=prices, vision=vision,
                                    skip_unavailable=skip_unavailable, timeout=timeout_v,
                                    max_retries=max_retries_v, max_consecutive_failures=streak_v,
                                    progress=not dry_run)
    except UserError as exc:
        fail(redact(exc, key))
    except RunBlocked as exc:
        err.print(redact(str(exc), key), markup=False)
        raise typer.Exit(EXIT_USAGE)
    except KeyboardInterrupt:
        fail("interrupted; answers received so far are stored, rerun to resume", EXIT_INTERRUPTED)
    # anything else reaches pace's main(): one line (the traceback with --debug); the run row
    # already says 'failed' and every answer received is stored, so a rerun resumes
    _report(summary, key, as_json, dry_run)


def _report(summary, key, as_json: bool, dry_run: bool) -> None:
    from eval_runners.client import ERROR_KINDS
    d = summary.to_dict()
    for s in d["stale_runs"]:
        err.print(f"marked run {s['run_id']} ({s['model']}) interrupted: {s['detail']}", markup=False)
    if as_json:
        typer.echo(redact(json.dumps(d, default=str), key))
    elif dry_run:
        out = Console()
        t = Table("call", "state", "est. prompt tok", "max completion tok")
        for c in d["calls_planned"]:
            t.add_row(c["call"], c["state"], str(c["est_prompt_tokens"]), str(c["max_tokens"]))
        out.print(t)
        cost = "unknown (no price; pass --prices)" if d["est_max_cost_usd"] is None else f"${d['est_max_cost_usd']:.4f}"
        paid = sum(1 for c in d["calls_planned"] if c["state"] == "todo")
        out.print(f"{paid} paid call(s), {d['est_prompt_tokens']} prompt tokens (est.), "
                  f"<= {d['est_max_completion_tokens']} completion tokens; max cost {cost}")
    else:
        out = Console(highlight=False)
        out.print(f"run {d['run_id']}: {d['status']}; {d['paid_calls']} answered, {d['failed_calls']} failed, "
                  f"{d['not_run']} not run, {d['from_stored']} from stored, {d['already_scored']} already scored; "
                  f"{d['rows_written']} rows; {d['prompt_tokens']}+{d['completion_tokens']} tokens; "
                  f"${d['cost_usd']:.4f}{'' if d['cost_known'] else ' (+ unpriced)'}", markup=False)
        if d["failed_calls"]:
            why = ", ".join(f"{n} {ERROR_KINDS.get(k, k)}" for k, n in sorted(d["failures"].items(),
                                                                               key=lambda kv: -kv[1]))
            out.print(f"failed: {why} (stored with their error, no score row; rerun to retry)", markup=False)
        if d["not_run"]:
            label = "not run (budget)" if d["stop_kind"] == "budget" else "not run"
            why = "the endpoint refused the run (see the error)" if d["stop_kind"] == "endpoint" else d["stop_reason"]
            out.print(f"{label}: {d['not_run']} call(s): {why}; rerun to run them", markup=False)
        if d["unscorable"] or d["grader_errors"]:
            out.print(f"unscorable {d['unscorable']}, grader errors {d['grader_errors']} "
                      "(no score row; nothing was counted as 0)", markup=False)
        for s in d["error_samples"][:5]:
            out.print("  " + redact(s, key), markup=False)
    if d["skipped"]:
        err.print("skipped (requirements unmet): " + redact(json.dumps(d["skipped"]), key), markup=False)
    if d["stop_kind"] == "endpoint":
        err.print("error: " + redact(d["stop_reason"], key) + f"; stopped after {d['paid_calls'] + d['failed_calls']}"
                  f" call(s), {d['not_run']} not run", markup=False, soft_wrap=True)
    code = {"done": EXIT_OK, "dry_run": EXIT_OK, "stopped_budget": EXIT_BUDGET}.get(summary.status, EXIT_FAILED)
    if code:
        raise typer.Exit(code)


def standalone_app() -> typer.Typer:
    app = typer.Typer(no_args_is_help=True, add_completion=False)
    app.add_typer(instances_app, name="instances")
    app.command("run")(run_command)
    return app
