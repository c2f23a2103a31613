"""Run a model's plan: plan rows -> calls -> requirement check -> (dry-run estimate) -> execute
with resume -> grade -> append rows.

Writes: given a warehouse path, the run holds no lock while it calls the endpoint. It opens the file
for a moment at the start (plan, run row), then for each batch of answers, and at the end; between
them other processes read and write (:mod:`eval_runners.writes`). Every batch commits its responses,
their grades, the heartbeat, the stored collapsed cells and the lake together, so the warehouse is
complete after each one.

Resumability: each response is committed to ``responses`` as soon as the writer can (a batch is
written the moment the previous one is done); a call's ``scores`` rows and its ``runner_calls``
marker are written in the same transaction as, or one after, its response. A rerun skips calls whose
rows exist, grades stored-but-ungraded responses without paying, and pays only for calls with no
stored response. Exactly one ``scores`` row per (model, benchmark, subdir, instance_id): a runner
row is replaced, an ingested row is never overwritten.

Outcome: a call is *answered* (paid, then graded), *failed* (stored with its error and kind, no
score row, retried by the next run) or *not run* (the run stopped first: ``--max-cost`` reached,
credentials refused, too many failures in a row). The run's status follows: ``done`` when nothing
failed, ``partial`` when some calls failed or were not run, ``failed`` when none succeeded,
``stopped_budget`` when only the budget stopped it. A run whose process died (kill -9, power loss)
is marked ``interrupted`` by the next run, which finds its pid gone (same host) or its heartbeat
stale (another host), and resumes where it stopped.
"""
from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from dataclasses import dataclass, field, asdict
from datetime import datetime, timezone

from eval_runners import registry
from eval_runners.cache import DuckDBStore
from eval_runners.client import (ERROR_KINDS, CallResult, ChatClient, EndpointConfig, normalize_base_url,
                                 request_hash, safe_text)
from eval_runners.packs import estimate_prompt_tokens, resolve_messages
from eval_runners.plan import normalize
from eval_runners.pricing import PriceTable
from eval_runners.registry import Target
from eval_runners.secrets import Credentials, public_url, redact
from eval_runners.writes import STORE_WAIT_S, Batches, Grade, RunTarget
from ingest import score_store
from ingest.lake import claim_before_writing, sync_lake


class RunBlocked(RuntimeError):
    """The plan cannot run here; nothing was paid. The message lists every reason."""


@dataclass
class RunOptions:
    dry_run: bool = False
    max_cost: float | None = None
    concurrency: int = 8
    rate_limit: float | None = None
    timeout: float = 300.0
    max_retries: int = 6
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    vision: bool = False
    skip_unavailable: bool = False
    prices: PriceTable = field(default_factory=PriceTable)
    progress: bool = True
    max_consecutive_failures: int | None = 10   # stop after this many failed calls in a row (None: never)
    heartbeat_s: float = 30.0                    # how often a running run says it is alive
    stale_after_s: float = 180.0                 # a run on another host silent this long is interrupted
    store_wait_s: float = STORE_WAIT_S           # how long a batch waits for a warehouse another process holds


@dataclass
class CallUnit:
    benchmark: str
    subdir: str
    instance_id: str
    targets: list[Target]
    instance: dict | None = None
    messages: list | None = None
    params: dict | None = None
    key: str | None = None
    state: str = "todo"              # done | stored | todo | failed | not_run
    est_prompt: int = 0
    grader: str | None = None
    grader_version: str | None = None
    stored_text: str | None = None   # the stored answer of a 'stored' unit (graded without a call)

    @property
    def label(self):
        return f"{self.benchmark}/{self.subdir or '-'}/{self.instance_id}"


@dataclass
class RunSummary:
    run_id: str | None
    model: str
    status: str
    plan_rows: int = 0
    calls: int = 0
    already_scored: int = 0
    from_stored: int = 0
    paid_calls: int = 0          # calls the endpoint answered in this run
    failed_calls: int = 0        # calls that ended in an error (stored with it; the next run retries)
    failures: dict = field(default_factory=dict)     # error kind -> failed calls
    unscorable: int = 0
    grader_errors: int = 0
    rows_written: int = 0
    not_run: int = 0             # calls left because the run stopped (see stop_kind)
    stop_kind: str | None = None     # budget | endpoint (401/403/404) | failures | None
    stop_reason: str | None = None   # one line
    detail: str | None = None        # one line: what failed and why (also in runs.detail)
    stale_runs: list = field(default_factory=list)   # runs found dead at start and marked interrupted
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cost_known: bool = True
    est_prompt_tokens: int = 0
    est_max_completion_tokens: int = 0
    est_max_cost_usd: float | None = None
    skipped: dict = field(default_factory=dict)       # reason -> calls
    skipped_calls: int = 0
    error_samples: list = field(default_factory=list)
    calls_planned: list = field(default_factory=list)

    def to_dict(self):
        return asdict(self)


def _now():
    return datetime.now(timezone.utc).replace(tzinfo=None)


def plan_calls(plan_rows) -> tuple[list[CallUnit], list[str]]:
    """Group plan rows into call units (runners.md §5 dedup) ; returns (units, problems)."""
    groups: dict[tuple, list[Target]] = defaultdict(list)
    problems = []
    for b, s, i in normalize(plan_rows):
        try:
            spec = registry.get(b)
            cs, cid = spec.call_key(s, i)
        except (KeyError, ValueError) as exc:
            problems.append(f"{b}/{s or '-'}/{i}: {exc.args[0]}")
            continue
        groups[(b, cs, cid)].append(Target(s, i))
    return [CallUnit(b, cs, cid, t) for (b, cs, cid), t in groups.items()], problems


def _load_instances(con, units: list[CallUnit]) -> None:
    if not units:
        return
    keys = [[u.benchmark, u.subdir, u.instance_id] for u in units]
    con.execute("CREATE OR REPLACE TEMP TABLE _er_keys (benchmark VARCHAR, subdir VARCHAR, instance_id VARCHAR)")
    con.executemany("INSERT INTO _er_keys VALUES (?, ?, ?)", keys)
    cur = con.execute("""SELECT i.* FROM instances i JOIN _er_keys k USING (benchmark, subdir, instance_id)""")
    cols = [d[0] for d in cur.description]
    found = {(r["benchmark"], r["subdir"], r["instance_id"]): r for r in (dict(zip(cols, row)) for row in cur.fetchall())}
    for u in units:
        row = found.get((u.benchmark, u.subdir, u.instance_id))
        if row is not None:
            u.instance = registry.instance_from_row(row)


def _scored_keys(con, model, units) -> set:
    con.execute("CREATE OR REPLACE TEMP TABLE _er_targets (benchmark VARCHAR, subdir VARCHAR, instance_id VARCHAR)")
    con.executemany("INSERT INTO _er_targets VALUES (?, ?, ?)",
                    [[u.benchmark, t.subdir, t.instance_id] for u in units for t in u.targets])
    rows = con.execute("""SELECT DISTINCT s.benchmark, s.subdir, s.instance_id FROM scores s
                          JOIN _er_targets t USING (benchmark, subdir, instance_id)
                          WHERE s.model = ? AND s.score IS NOT NULL""", [model]).fetchall()
    return set(rows)


def prepare(con, model: str, plan_rows, opts: RunOptions, creds: Credentials | None = None):
    """Plan -> call units with state, and the list of unmet requirements (all of them)."""
    units, problems = plan_calls(plan_rows)
    _load_instances(con, units)
    scored = _scored_keys(con, model, units) if units else set()
    reasons: dict[str, list[str]] = defaultdict(list)
    for p in problems:
        reasons["plan rows the registry cannot map"].append(p)
    dropped = len(problems)
    keep = []
    for u in units:
        spec = registry.get(u.benchmark)
        if all((u.benchmark, t.subdir, t.instance_id) in scored for t in u.targets):
            u.state = "done"
            keep.append(u)
            continue
        why = registry.unmet(spec.requirements(u.subdir, u.targets), vision=opts.vision)
        if u.instance is None:
            why.append("no instance record: import its pack (`pace instances import PACK`)")
        else:
            why += spec.instance_unmet(u.instance)
            try:
                g = spec.grader_for(u.instance)
                u.grader, u.grader_version = g.name, g.version
            except KeyError as exc:
                why.append(str(exc.args[0]))
        if why:
            for w in why:
                reasons[f"{u.benchmark}: {w}"].append(u.label)
            dropped += 1
            continue
        u.messages, u.params = spec.request(u.instance)
        u.key = request_hash(model, u.messages, u.params)
        u.est_prompt = estimate_prompt_tokens(u.messages)
        keep.append(u)
    return keep, dict(reasons), dropped


def _format_reasons(reasons: dict[str, list[str]]) -> str:
    lines = []
    for why, labels in sorted(reasons.items()):
        more = f" (+{len(labels) - 3} more)" if len(labels) > 3 else ""
        lines.append(f"  - {why}: {len(labels)} call(s), e.g. {', '.join(labels[:3])}{more}")
    return "\n".join(lines)


def write_grades(con, model: str, run_id: str, unit: CallUnit, rows, status: str, detail: str | None) -> int:
    """Score rows + the call's grading marker, inside the caller's transaction. Returns rows written."""
    now = _now()
    written = 0
    for r in rows:
        if r.score is None:
            continue
        key = [model, unit.benchmark, r.subdir, r.instance_id]
        score_store.execute(con, """DELETE FROM scores WHERE model = ? AND benchmark = ? AND subdir = ?
                                    AND instance_id = ? AND origin = 'runner'""", key)
        n = con.execute("""SELECT count(*) FROM scores WHERE model = ? AND benchmark = ? AND subdir = ?
                           AND instance_id = ?""", key).fetchone()[0]
        if n:
            continue                                   # an ingested row is never overwritten
        score_store.execute(con, "INSERT INTO scores VALUES (?, ?, ?, ?, ?, ?, 'runner', ?, ?)",
                    key + [float(r.score), r.metric_name, f"run:{run_id}", now])
        written += 1
    con.execute("INSERT OR REPLACE INTO runner_calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [model, unit.benchmark, unit.subdir, unit.instance_id, unit.key, run_id,
                 unit.grader, unit.grader_version, status, detail and redact(detail), written, now])
    return written


def grade_unit(unit: CallUnit, text: str):
    """Pure: (rows, status, detail)."""
    spec = registry.get(unit.benchmark)
    try:
        rows = spec.grade(unit.instance, text, unit.targets)
    except Exception as exc:  # noqa: BLE001 - reported, never a silent 0
        return [], "grader_error", f"{type(exc).__name__}: {exc}"[:500]
    wanted = {(t.subdir, t.instance_id) for t in unit.targets}
    missing = [r for r in rows if r.score is None and (r.subdir, r.instance_id) in wanted]
    if missing or not any(r.score is not None for r in rows):
        return rows, "unscorable", "grader could not parse the response or reference"
    return rows, "ok", None


# ------------------------------------------------------------------------------ run bookkeeping
def process_start_tick(pid: int) -> str | None:
    """The start tick of a live process (Linux ``/proc``), None if it is gone, a zombie, or unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    rest = stat.rsplit(")", 1)[-1].split()
    if len(rest) < 20 or rest[0] in ("Z", "X"):
        return None
    return rest[19]


def _alive(pid: int, started: str | None) -> bool:
    """Is process ``pid`` (started at tick ``started``, when known) still running on this host?"""
    if Path("/proc/self/stat").exists():
        now = process_start_tick(pid)
        return now is not None and (started is None or now == started)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def mark_stale_runs(con, model: str, found_by: str, stale_after_s: float = 180.0) -> list[dict]:
    """Mark ``running`` runs whose process is gone as ``interrupted``; returns what was marked.

    Gone means: on this host, the recorded pid no longer runs (or is another process now); on
    another host, no heartbeat for ``stale_after_s``; a row from before pids were recorded (the old
    runner held the write lock for its whole life, so a process that could open the file proves it
    ended). A run of ``model`` that is still alive blocks this one (it would pay for the same calls).
    """
    here, now = socket.gethostname(), _now()
    rows = con.execute("""SELECT run_id, model, pid, host, pid_started, heartbeat_at FROM runs
                          WHERE status = 'running' ORDER BY started_at""").fetchall()
    marked = []
    for run_id, rmodel, pid, host, pid_started, beat in rows:
        fresh = beat is not None and (now - beat).total_seconds() < stale_after_s
        if pid is None:
            alive = False
        elif host == here:
            # the start tick tells a reused pid (e.g. a new container) from the run's own process;
            # where it is unknown, a silent heartbeat does
            alive = _alive(pid, pid_started) and (pid_started is not None or fresh)
        else:
            alive = fresh
        if alive:
            if rmodel == model:
                seen = f"last heartbeat {beat:%Y-%m-%d %H:%M:%S} UTC" if beat else "no heartbeat yet"
                raise RunBlocked(f"run {run_id} of model {model!r} is still in progress (pid {pid} on {host}, "
                                 f"{seen}); wait for it to end or stop it, then rerun")
            continue
        where = f"process {pid} on {host}" if pid is not None else "its process (not recorded)"
        detail = f"{where} ended without finishing (killed or crashed); found by run {found_by}"
        con.execute("""UPDATE runs SET status = 'interrupted', finished_at = coalesce(heartbeat_at, started_at),
                              n_paid = (SELECT count(*) FROM responses r WHERE r.run_id = runs.run_id
                                        AND r.error IS NULL),
                              n_failed = (SELECT count(*) FROM responses r WHERE r.run_id = runs.run_id
                                          AND r.error IS NOT NULL),
                              cost_usd = (SELECT sum(cost_usd) FROM responses r WHERE r.run_id = runs.run_id),
                              detail = ?
                       WHERE run_id = ? AND status = 'running'""", [detail, run_id])
        marked.append({"run_id": run_id, "model": rmodel, "pid": pid, "host": host, "detail": detail})
    return marked


def _start_run(con, run_id, model, creds, opts, summary):
    con.execute("""INSERT INTO runs (run_id, model, base_url, started_at, finished_at, status, n_planned, n_calls,
                                     n_paid, n_failed, n_not_run, cost_usd, options, pid, host, pid_started,
                                     heartbeat_at)
                   VALUES (?, ?, ?, ?, NULL, 'running', ?, ?, 0, 0, 0, 0, ?, ?, ?, ?, ?)""",
                [run_id, model, public_url(creds.base_url) if creds else None, _now(), summary.plan_rows,
                 summary.calls, json.dumps({"concurrency": opts.concurrency, "rate_limit": opts.rate_limit,
                                            "max_cost": opts.max_cost, "vision": opts.vision,
                                            "prices": opts.prices.as_dict()}),
                 os.getpid(), socket.gethostname(), process_start_tick(os.getpid()), _now()])


def _finish_run(con, run_id, summary):
    con.execute("""UPDATE runs SET finished_at = ?, status = ?, n_paid = ?, n_failed = ?, n_not_run = ?,
                                   cost_usd = ?, detail = ?, heartbeat_at = ? WHERE run_id = ?""",
                [_now(), summary.status, summary.paid_calls, summary.failed_calls, summary.not_run,
                 summary.cost_usd, summary.detail, _now(), run_id])


def outcome(summary: RunSummary) -> tuple[str, str | None]:
    """(status, one-line detail) of a finished run; see the module doc."""
    parts = []
    attempted = summary.paid_calls + summary.failed_calls
    if summary.failed_calls:
        why = ", ".join(f"{n} {ERROR_KINDS.get(k, k)}" for k, n in sorted(summary.failures.items(),
                                                                           key=lambda kv: -kv[1]))
        parts.append(f"{summary.failed_calls} of {attempted} call(s) failed: {why}")
    if summary.grader_errors:
        parts.append(f"{summary.grader_errors} grader error(s)")
    if summary.not_run:
        parts.append(f"{summary.not_run} call(s) not run: {summary.stop_reason}")
    detail = "; ".join(parts) or None
    problems = summary.failed_calls + summary.grader_errors
    if summary.stop_kind == "budget" and not problems:
        return "stopped_budget", detail
    if not problems and not summary.not_run:
        return "done", detail
    succeeded = summary.paid_calls + summary.from_stored - summary.grader_errors
    return ("partial" if succeeded > 0 else "failed"), detail


def run_plan(warehouse, model: str, plan_rows, *, credentials: Credentials | None = None,
             options: RunOptions | None = None, console=None) -> RunSummary:
    """Run ``model`` on ``plan_rows`` (see module doc). Raises :class:`RunBlocked` before any call
    when a requirement is unmet (unless ``skip_unavailable``, which drops and reports those calls).

    ``warehouse``: the warehouse file (opened for a moment per batch, so other processes read while
    the run works), or an open connection (the run writes through it; whoever holds it holds the file).
    """
    if not isinstance(model, str) or not model.strip() or model != model.strip():
        raise ValueError(f"model name must be non-empty with no surrounding spaces, got {model!r}")
    opts = options or RunOptions()
    creds = credentials or Credentials(None, None)
    plan_rows = normalize(plan_rows)
    target = RunTarget(warehouse)
    with target.session() as con:
        units, reasons, dropped = prepare(con, model, plan_rows, opts, creds)
        todo_units = [u for u in units if u.state != "done"]
        store = DuckDBStore(con, "")
        stored = store.stored_keys([u.key for u in todo_units]) if todo_units else set()
        for u in todo_units:
            if u.key in stored:
                u.state, u.stored_text = "stored", store.get(u.key).text
        summary = _check(model, plan_rows, units, reasons, dropped, creds, opts)
        if opts.dry_run:
            return summary
        claim_before_writing(con)       # its score rows could not follow into a lake that is not its own
        run_id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
        summary.stale_runs = mark_stale_runs(con, model, run_id, opts.stale_after_s)
        summary.run_id = run_id
        summary.status = "running"
        _start_run(con, run_id, model, creds, opts, summary)

    def on_written(rows):
        summary.rows_written += rows

    def write_grade(con, grade):
        return write_grades(con, model, run_id, grade.unit, grade.rows, grade.status, grade.detail)
    batches = Batches(target, run_id, write_grade, on_written, heartbeat_s=opts.heartbeat_s,
                      max_pending=max(32, 4 * opts.concurrency), wait=opts.store_wait_s)
    try:
        asyncio.run(_execute(batches, model, units, creds, opts, summary, console))
    except BaseException as exc:
        interrupted = isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError))
        summary.status = "interrupted" if interrupted else "failed"
        summary.detail = "stopped by the user" if interrupted else \
            safe_text(redact(f"{type(exc).__name__}: {exc}", creds.api_key), 500)
        summary.not_run = sum(1 for u in units if u.state in ("todo", "not_run"))
        try:                    # keep every answer received, then say how the run ended
            batches.drain()
            with target.session(opts.store_wait_s) as con:
                _finish_run(con, run_id, summary)
        except Exception:  # noqa: BLE001 - the first error is the one to report; the next run marks this one
            pass
        raise
    summary.not_run = sum(1 for u in units if u.state in ("todo", "not_run"))
    summary.status, summary.detail = outcome(summary)
    with target.session(opts.store_wait_s) as con:       # (answers are stored: wait as a batch does)
        _finish_run(con, run_id, summary)
        sync_lake(con)              # (each batch did; this finishes one whose lake step was cut short)
    return summary


def _check(model, plan_rows, units, reasons, dropped, creds, opts) -> RunSummary:
    """The summary of what would run, or :class:`RunBlocked` listing every unmet requirement."""
    summary = RunSummary(None, model, "planned", plan_rows=len(plan_rows), calls=len(units) + dropped)
    price = opts.prices.lookup(model)
    to_pay = [u for u in units if u.state == "todo"]
    if to_pay and opts.max_cost is not None and price is None:
        reasons.setdefault(f"--max-cost needs a price for model {model!r} (--prices FILE)", []).extend(
            u.label for u in to_pay[:3])
    if to_pay and not opts.dry_run:
        if not creds.base_url:
            reasons.setdefault("no endpoint: pass --base-url or set BASE_URL (env or .env)", []).extend(
                u.label for u in to_pay[:3])
        else:
            try:
                normalize_base_url(creds.base_url)
            except ValueError as exc:
                reasons.setdefault(redact(exc, creds.api_key), []).extend(u.label for u in to_pay[:3])
    if reasons and not opts.skip_unavailable:
        raise RunBlocked("cannot run this plan; nothing was called:\n" + _format_reasons(reasons))
    summary.skipped = {k: len(v) for k, v in reasons.items()}
    summary.skipped_calls = dropped
    summary.already_scored = sum(u.state == "done" for u in units)
    summary.est_prompt_tokens = sum(u.est_prompt for u in to_pay)
    summary.est_max_completion_tokens = sum(u.params["max_tokens"] for u in to_pay)
    summary.est_max_cost_usd = (price.cost(summary.est_prompt_tokens, summary.est_max_completion_tokens)
                                if price else None)
    summary.calls_planned = [{"call": u.label, "state": u.state, "est_prompt_tokens": u.est_prompt,
                              "max_tokens": u.params["max_tokens"] if u.params else None,
                              "targets": len(u.targets)} for u in units]
    if opts.dry_run:
        summary.status = "dry_run"
    return summary


async def _execute(batches, model, units, creds, opts, summary, console):
    progress = _Progress(len(units), opts.progress, console)
    progress.advance(summary.already_scored, summary.cost_usd)
    writer = asyncio.create_task(batches.loop())
    try:
        await _work(batches, writer, model, units, creds, opts, summary, progress)
    finally:
        try:
            await batches.stop(writer)
        finally:
            progress.close()


async def _work(batches, writer, model, units, creds, opts, summary, progress):
    failures: Counter = Counter()
    price = opts.prices.lookup(model)
    key = creds.api_key

    async def grade(unit, text):
        rows, status, detail = await asyncio.to_thread(grade_unit, unit, text)
        batches.add_grade(Grade(unit, rows, status, safe_text(redact(detail, key), 500) if detail else None))
        if status == "unscorable":
            summary.unscorable += 1
        elif status == "grader_error":
            summary.grader_errors += 1
            summary.error_samples.append(safe_text(redact(f"{unit.label}: grader error: {detail}", key), 300))
        unit.state = "done"

    # 1. stored but ungraded: free
    for u in [u for u in units if u.state == "stored"]:
        await grade(u, u.stored_text)
        summary.from_stored += 1
        progress.advance(1, summary.cost_usd)

    todo = [u for u in units if u.state == "todo"]
    if not todo:
        return
    cfg = EndpointConfig(creds.base_url, api_key=key, concurrency=opts.concurrency,
                         rate_limit=opts.rate_limit, timeout=opts.timeout, max_retries=opts.max_retries,
                         backoff_base=opts.backoff_base, backoff_max=opts.backoff_max)
    reserved = 0.0
    streak = 0                       # failed calls in a row
    slots = asyncio.Semaphore(opts.concurrency)

    def upper(prompt_tokens, completion_tokens):
        return price.cost(prompt_tokens, completion_tokens) if price else 0.0

    def stop(client, kind, reason):
        if summary.stop_kind is None:
            summary.stop_kind, summary.stop_reason = kind, reason
        client.stop(reason)

    async def one(client, unit, reservation):
        nonlocal reserved, streak
        extra = 0.0

        def allow(prompt_tokens, new_budget):
            nonlocal extra, reserved
            if opts.max_cost is None:
                return True
            more = upper(prompt_tokens, new_budget)
            if summary.cost_usd + reserved + more > opts.max_cost:
                return False
            extra += more
            reserved += more
            return True
        try:
            res = await client.complete(model, resolve_messages(unit.messages, unit.instance.get("asset_root")),
                                        unit.params, key=unit.key, allow_escalation=allow,
                                        meta={"benchmark": unit.benchmark, "subdir": unit.subdir,
                                              "instance_id": unit.instance_id, "grader": unit.grader,
                                              "grader_version": unit.grader_version})
        finally:
            reserved -= reservation + extra
            slots.release()
        summary.prompt_tokens += res.prompt_tokens or 0
        summary.completion_tokens += res.completion_tokens or 0
        if res.cost_usd is None:
            summary.cost_known = False
        else:
            summary.cost_usd = round(summary.cost_usd + res.cost_usd, 12)
        if res.error_kind == "aborted":          # never sent: the run was stopping
            unit.state = "not_run"
        elif not res.ok:
            unit.state = "failed"
            summary.failed_calls += 1
            failures[res.error_kind or "other"] += 1
            summary.failures = dict(failures)
            summary.error_samples.append(safe_text(f"{unit.label}: {redact(res.error, key)}", 300))
            streak += 1
            if client.stopped:
                stop(client, "endpoint", client.stopped)
            elif opts.max_consecutive_failures and streak >= opts.max_consecutive_failures:
                stop(client, "failures", f"{streak} calls in a row failed (last: "
                                         f"{ERROR_KINDS.get(res.error_kind, res.error_kind)}); stopped calling")
        else:
            streak = 0
            summary.paid_calls += 1
            await grade(unit, res.text)
        progress.advance(1, summary.cost_usd)

    tasks = []
    async with ChatClient(cfg, opts.prices, cache=_RunAnswers(batches)) as client:
        for unit in todo:
            await slots.acquire()
            await batches.room()                 # the warehouse is busy: pay for no more than it can keep
            if writer.done():                    # the writer failed: stop calling (its error is raised)
                slots.release()
                break
            if summary.stop_kind is not None:
                slots.release()
                break
            reservation = upper(unit.est_prompt, unit.params.get("max_tokens", 0))
            if opts.max_cost is not None and summary.cost_usd + reserved + reservation > opts.max_cost:
                slots.release()
                summary.stop_kind = "budget"
                summary.stop_reason = f"--max-cost ${opts.max_cost:g} reached"
                break
            reserved += reservation
            tasks.append(asyncio.create_task(one(client, unit, reservation)))
        await asyncio.gather(*tasks)


class _RunAnswers:
    """The client's cache during a run: answers go to the batches to be stored; an answer this run
    already received is reused (a second call with the same request is not paid again)."""

    def __init__(self, batches: Batches):
        self.batches = batches
        self.answers: dict[str, CallResult] = {}

    def get(self, key):
        hit = self.answers.get(key)
        return None if hit is None else CallResult(**{**hit.to_dict(), "cached": True, "cost_usd": 0.0,
                                                      "prompt_tokens": 0, "completion_tokens": 0,
                                                      "reasoning_tokens": 0})

    def put(self, key, model, messages, params, result, meta):
        if result.ok:
            self.answers[key] = result
        self.batches.put(key, model, messages, params, result, meta)


class _Progress:
    """Rich progress bar on stderr: done/total calls and cost so far (never any credential)."""

    def __init__(self, total, enabled, console=None):
        self.bar = None
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        self.bar = Progress(TextColumn("[bold]run"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("${task.fields[cost]:.4f}"), TimeElapsedColumn(),
                            console=console or Console(file=sys.stderr), transient=False)
        self.task = self.bar.add_task("run", total=total, cost=0.0)
        self.bar.start()

    def advance(self, n, cost):
        if self.bar is not None:
            self.bar.update(self.task, advance=n, cost=cost)

    def close(self):
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
