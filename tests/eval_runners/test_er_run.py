import json
import os
import socket
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import duckdb
import pytest
from typer.testing import CliRunner

from er_chat_server import MODES, Reply, error
from er_helpers import KEY, aime_pack, aime_plan, aime_script
from eval_runners.client import MAX_REPLY_CHARS
from eval_runners.packs import import_pack
from eval_runners.plan import write_plan_csv
from eval_runners.pricing import PriceTable
from eval_runners.run import RunBlocked, RunOptions, process_start_tick, run_plan
from eval_runners.secrets import Credentials
from warehouse.connect import connect
from ingest import score_store

PRICES = PriceTable.from_mapping({"models": {"m1": {"input": 3.0, "output": 15.0}}})


@pytest.fixture
def con(tmp_path):
    c = connect(tmp_path / "w.duckdb")
    import_pack(c, aime_pack(tmp_path))
    yield c
    c.close()


def opts(**kw):
    base = dict(prices=PRICES, progress=False, backoff_base=0.01, backoff_max=0.02, timeout=5, max_retries=2)
    base.update(kw)
    return RunOptions(**base)


def creds(srv):
    return Credentials(srv.url, KEY, "flag")


def test_run_appends_rows_tokens_costs(con, chat_server):
    srv = chat_server(aime_script(wrong={3}, prompt_tokens=100, completion_tokens=20))
    s = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts())
    assert s.status == "done" and s.paid_calls == 4 and s.rows_written == 4 and s.failed_calls == 0
    assert (s.prompt_tokens, s.completion_tokens) == (400, 80)
    assert s.cost_usd == pytest.approx(4 * (100 * 3e-6 + 20 * 15e-6), abs=1e-12)   # 0.0024
    rows = con.execute("""SELECT instance_id, score, metric_name, origin, source_ref FROM scores
                          WHERE model='m1' ORDER BY instance_id""").fetchall()
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        ("0", 1.0, "exact_match", "runner"), ("1", 1.0, "exact_match", "runner"),
        ("2", 1.0, "exact_match", "runner"), ("3", 0.0, "exact_match", "runner")]
    assert {r[4] for r in rows} == {f"run:{s.run_id}"}
    resp = con.execute("""SELECT count(*), sum(prompt_tokens), sum(completion_tokens), sum(cost_usd),
                                 count(*) FILTER (error IS NULL), min(grader_version) FROM responses""").fetchone()
    assert resp[:3] == (4, 400, 80) and resp[3] == pytest.approx(0.0024, abs=1e-12) and resp[4] == 4
    assert resp[5] == "1"
    run = con.execute("SELECT status, n_paid, cost_usd, base_url, n_failed, n_not_run, detail FROM runs").fetchone()
    assert run[:2] == ("done", 4) and run[2] == pytest.approx(0.0024) and run[3] == srv.url
    assert run[4:] == (0, 0, None)
    assert con.execute("SELECT count(*) FROM runner_calls WHERE status='ok'").fetchone()[0] == 4


def test_rerun_pays_nothing_and_keeps_one_row_per_key(con, chat_server):
    srv = chat_server(aime_script())
    run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts())
    n = len(srv.requests)
    s2 = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts())
    assert len(srv.requests) == n == 4 and s2.paid_calls == 0 and s2.already_scored == 4
    # the same instances under a second metric subdir: graded from stored responses, no call
    s3 = run_plan(con, "m1", aime_plan(subdir="other_variant"), credentials=creds(srv), options=opts())
    assert len(srv.requests) == 4 and s3.from_stored == 4 and s3.rows_written == 4
    dup = con.execute("""SELECT count(*) FROM (SELECT model, benchmark, subdir, instance_id FROM scores
                         GROUP BY ALL HAVING count(*) > 1)""").fetchone()[0]
    assert dup == 0 and con.execute("SELECT count(*) FROM scores").fetchone()[0] == 8


def test_dry_run_estimates_and_calls_nothing(con, chat_server):
    srv = chat_server(aime_script())
    s = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts(dry_run=True))
    assert s.status == "dry_run" and len(srv.requests) == 0
    assert len(s.calls_planned) == 4 and all(c["state"] == "todo" for c in s.calls_planned)
    assert s.est_max_completion_tokens == 4000
    assert s.est_max_cost_usd == pytest.approx((s.est_prompt_tokens * 3 + 4000 * 15) / 1e6)
    assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0


def test_max_cost_stops_before_exceeding(con, chat_server):
    srv = chat_server(aime_script(prompt_tokens=20, completion_tokens=900))
    # each call costs 0.01356; the guard reserves est_prompt*3e-6 + 1000*15e-6 ~= 0.0151 before it:
    # call 1 (0 + 0.0151), call 2 (0.01356 + 0.0151) fit under 0.031, call 3 would not
    s = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts(max_cost=0.031, concurrency=1))
    assert s.status == "stopped_budget" and s.cost_usd <= 0.031
    assert len(srv.requests) == s.paid_calls == 2 and s.not_run == 2 and s.failed_calls == 0
    assert s.stop_kind == "budget" and "--max-cost" in s.stop_reason
    assert s.cost_usd == pytest.approx(2 * (20 * 3e-6 + 900 * 15e-6))
    assert con.execute("SELECT status FROM runs").fetchone()[0] == "stopped_budget"


def test_max_cost_without_price_is_refused(con, chat_server):
    srv = chat_server(aime_script())
    with pytest.raises(RunBlocked, match="needs a price"):
        run_plan(con, "unpriced", aime_plan(), credentials=creds(srv), options=opts(max_cost=1.0))
    assert len(srv.requests) == 0


def test_requirements_checked_up_front(con, chat_server):
    srv = chat_server(aime_script())
    plan = aime_plan() + [("planbench", "task_1_plan_generation", "3"), ("debugbench", "", "x"),
                          ("mmmu", "", "validation_Art_1"), ("nosuch", "", "1"), ("aime25", "exact_match", "99")]
    with pytest.raises(RunBlocked) as ei:
        run_plan(con, "m1", plan, credentials=creds(srv), options=opts())
    msg = str(ei.value)
    for needle in ("LeetCode", "vision", "unknown benchmark 'nosuch'", "no instance record"):
        assert needle in msg
    assert len(srv.requests) == 0 and con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    s = run_plan(con, "m1", plan, credentials=creds(srv), options=opts(skip_unavailable=True))
    assert s.paid_calls == 4 and s.skipped_calls == 5 and s.calls == 9


def test_failed_call_stored_no_row_then_retried(con, chat_server):
    state = {"broken": True}

    def script(body, srv):
        if state["broken"] and "question 2" in body["messages"][-1]["content"]:
            return error(500, "down")
        return aime_script()(body, srv)
    srv = chat_server(script)
    s = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts())
    assert s.failed_calls == 1 and s.rows_written == 3 and s.paid_calls == 3 and s.status == "partial"
    assert s.failures == {"server": 1} and s.not_run == 0 and s.stop_kind is None
    assert con.execute("SELECT count(*) FROM scores WHERE instance_id='2'").fetchone()[0] == 0
    err = con.execute("SELECT error, attempts FROM responses WHERE instance_id='2'").fetchone()
    assert "InternalServerError" in err[0] and err[1] == 3
    state["broken"] = False
    n = len(srv.requests)
    s2 = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts())
    assert s2.paid_calls == 1 and len(srv.requests) == n + 1 and s2.rows_written == 1 and s2.status == "done"
    assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 4


def test_ingested_row_never_overwritten(con, chat_server):
    score_store.execute(con, """INSERT INTO scores VALUES ('m1','aime25','exact_match','0',0.5,'exact_match','ingest','f.csv',now())""")
    srv = chat_server(aime_script())
    s = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts())
    assert s.already_scored == 1 and s.paid_calls == 3
    assert con.execute("SELECT score, origin FROM scores WHERE instance_id='0'").fetchall() == [(0.5, "ingest")]


def test_key_never_stored_or_shown(con, chat_server, capsys):
    srv = chat_server(lambda b, s: error(500, f"echo {s.requests[-1]['headers']['authorization']}"))
    s = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts(progress=True))
    assert s.failed_calls == 4 and s.status == "failed"
    assert all(KEY not in e for e in s.error_samples)
    assert KEY not in repr(creds(srv))
    out = capsys.readouterr()
    assert KEY not in out.out and KEY not in out.err
    for table in ("responses", "runs", "runner_calls", "scores", "instances"):
        dump = str(con.execute(f"SELECT * FROM {table}").fetchall())
        assert KEY not in dump


# ------------------------------------------------------------------------------ hostile replies
def _surrogates(text):
    return [c for c in text if "\ud800" <= c <= "\udfff"]


@pytest.mark.parametrize("mode", ["surrogate", "nul", "invalid-utf8", "huge"])
def test_unsafe_reply_stored_cleaned_graded_and_never_paid_again(con, chat_server, mode):
    """The reply that used to crash the run (and every rerun, paying again) is stored safely and graded."""
    srv = chat_server(MODES[mode])
    s = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts())
    assert s.status == "done" and s.paid_calls == 4 and s.failed_calls == 0 and s.rows_written == 4
    assert con.execute("SELECT count(*), sum(score) FROM scores WHERE model = 'm1'").fetchone() == (4, 4.0)
    stored = con.execute("SELECT response_text, note, error FROM responses ORDER BY instance_id").fetchall()
    assert len(stored) == 4
    for text, note, err in stored:
        assert err is None and note                               # what cleaning changed is recorded
        assert not _surrogates(text) and "\x00" not in text and len(text) <= MAX_REPLY_CHARS
        assert text.endswith("}") and "\\boxed{1" in text[-20:]      # the final answer survived
    n = len(srv.requests)
    s2 = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts())
    assert len(srv.requests) == n == 4 and s2.paid_calls == 0 and s2.already_scored == 4 and s2.status == "done"


def test_surrogate_in_error_text_and_grader_detail_is_stored(con, chat_server):
    """A provider error echoing a lone surrogate is stored as a failure, not a crash."""
    srv = chat_server(lambda b, s: error(500, "upstream choked on \ud800"))
    s = run_plan(con, "m1", aime_plan(2), credentials=creds(srv), options=opts(max_retries=0))
    assert s.status == "failed" and s.failed_calls == 2
    errors = [r[0] for r in con.execute("SELECT error FROM responses").fetchall()]
    assert len(errors) == 2 and all("\ufffd" in e and not _surrogates(e) for e in errors)


@pytest.mark.parametrize("mode,kind,words", [("429", "rate_limit", "rate limited"), ("hang", "timeout", "timed out"),
                                             ("garbage", "bad_reply", "not a chat completion"),
                                             ("500", "server", "server error")])
def test_every_call_fails_run_failed_nothing_paid_nothing_budget(con, chat_server, mode, kind, words):
    script = {"garbage": lambda b, s: Reply(200, b"<html>bad gateway</html>"),
              "500": lambda b, s: error(500, "down")}.get(mode) or MODES[mode]
    srv = chat_server(script)
    s = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts(timeout=0.3, max_retries=1))
    assert s.status == "failed" and s.paid_calls == 0 and s.failed_calls == 4 and s.failures == {kind: 4}
    assert s.not_run == 0 and s.stop_kind is None and s.rows_written == 0       # no budget was involved
    assert s.detail.startswith("4 of 4 call(s) failed: 4 ") and words in s.detail
    run = con.execute("SELECT status, n_paid, n_failed, n_not_run, detail FROM runs").fetchone()
    assert run == ("failed", 0, 4, 0, s.detail)
    assert con.execute("SELECT count(*), min(error_kind), max(error_kind) FROM responses WHERE error IS NOT NULL"
                       ).fetchone() == (4, kind, kind)
    assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 0


@pytest.mark.parametrize("mode", ["401", "403"])
def test_refused_credentials_stop_the_run_at_once(con, chat_server, mode):
    srv = chat_server(lambda b, s: error(int(mode), f"key {s.requests[-1]['headers']['authorization']} refused"))
    s = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts(concurrency=1))
    assert len(srv.requests) == 1                                 # no further call after the refusal
    assert s.status == "failed" and s.failed_calls == 1 and s.paid_calls == 0 and s.not_run == 3
    assert s.stop_kind == "endpoint" and s.failures == {"auth": 1}
    assert f"{srv.url}/v1/chat/completions" in s.stop_reason and "'m1'" in s.stop_reason
    assert f"HTTP {mode}" in s.stop_reason and KEY not in s.stop_reason and "\n" not in s.stop_reason
    assert con.execute("SELECT status, n_failed, n_not_run FROM runs").fetchone() == ("failed", 1, 3)
    assert con.execute("SELECT count(*) FROM responses").fetchone()[0] == 1     # calls never sent: no row


def test_refusal_midway_keeps_answers_run_partial(con, chat_server):
    ok = MODES["ok"]
    srv = chat_server(lambda b, s: ok(b, s) if len(s.requests) <= 2 else error(401, "key revoked"))
    s = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts(concurrency=1))
    assert (s.status, s.paid_calls, s.failed_calls, s.not_run, len(srv.requests)) == ("partial", 2, 1, 1, 3)
    assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 2
    s2 = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts(concurrency=1))
    assert s2.already_scored == 2 and len(srv.requests) == 4 and s2.status == "failed"   # only the 2 left


def test_consecutive_failures_stop_calling(con, chat_server):
    srv = chat_server(MODES["429"])
    s = run_plan(con, "m1", aime_plan(), credentials=creds(srv),
                 options=opts(concurrency=1, max_retries=0, max_consecutive_failures=2))
    assert len(srv.requests) == 2 and s.failed_calls == 2 and s.not_run == 2
    assert s.stop_kind == "failures" and "2 calls in a row failed" in s.stop_reason and s.status == "failed"


def test_budget_label_only_when_budget_stopped(con, chat_server):
    """Failures under a generous --max-cost are failures, not 'not run (budget)'."""
    srv = chat_server(lambda b, s: error(500, "down") if "question 1" in b["messages"][-1]["content"]
                      else aime_script()(b, s))
    s = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts(max_cost=100.0, max_retries=0))
    assert s.status == "partial" and s.failed_calls == 1 and s.not_run == 0 and s.stop_kind is None


# ------------------------------------------------------------------------------ stale runs
def _insert_run(con, run_id, model, pid, host, started=None, beat=None, pid_started=None):
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    con.execute("""INSERT INTO runs (run_id, model, started_at, status, pid, host, pid_started, heartbeat_at)
                   VALUES (?, ?, ?, 'running', ?, ?, ?, ?)""",
                [run_id, model, started or now - timedelta(minutes=5), pid, host, pid_started, beat or now])


def test_stale_runs_marked_interrupted_and_live_one_blocks(con, chat_server):
    here, now = socket.gethostname(), datetime.now(timezone.utc).replace(tzinfo=None)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        _insert_run(con, "r-dead", "m1", dead.pid, here)
        _insert_run(con, "r-legacy", "m1", None, None)            # a row written before pids were recorded
        _insert_run(con, "r-far-silent", "m2", 4242, "elsewhere", beat=now - timedelta(hours=1))
        _insert_run(con, "r-far-alive", "m2", 4242, "elsewhere", beat=now)
        _insert_run(con, "r-live", "m3", live.pid, here, pid_started=process_start_tick(live.pid))
        con.execute("""INSERT INTO responses (request_hash, run_id, model, benchmark, subdir, instance_id,
                       response_text, cost_usd, created_at) VALUES ('h', 'r-dead', 'm1', 'aime25', '', '9', 'x', 0.5, now())""")
        srv = chat_server(aime_script())
        s = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts())
        assert s.status == "done"
        assert sorted(r["run_id"] for r in s.stale_runs) == ["r-dead", "r-far-silent", "r-legacy"]
        rows = dict(con.execute("SELECT run_id, status FROM runs").fetchall())
        assert rows == {"r-dead": "interrupted", "r-legacy": "interrupted", "r-far-silent": "interrupted",
                        "r-far-alive": "running", "r-live": "running", s.run_id: "done"}
        dead_row = con.execute("SELECT n_paid, cost_usd, detail FROM runs WHERE run_id = 'r-dead'").fetchone()
        assert dead_row[:2] == (1, 0.5) and f"process {dead.pid} on {here}" in dead_row[2] and s.run_id in dead_row[2]
        for model, blocker in (("m2", "r-far-alive"), ("m3", "r-live")):     # same model still running: refused
            with pytest.raises(RunBlocked, match=f"run {blocker} of model '{model}' is still in progress"):
                run_plan(con, model, aime_plan(), credentials=creds(srv), options=opts())
        if process_start_tick(live.pid) is not None:              # Linux: a reused pid is not the old run
            con.execute("UPDATE runs SET pid_started = 'not-this-process' WHERE run_id = 'r-live'")
            s3 = run_plan(con, "m3", aime_plan(1), credentials=creds(srv), options=opts())
            assert [r["run_id"] for r in s3.stale_runs] == ["r-live"] and s3.status == "done"
    finally:
        live.kill()
        live.wait()


def test_running_run_records_pid_host_and_keeps_a_heartbeat(con, chat_server):
    """While a run works, its row names its process and its heartbeat moves (what stale detection reads)."""
    import threading
    import time
    ok = MODES["ok"]
    srv = chat_server(lambda b, s: Reply(200, ok(b, s).body, delay=0.5))
    worker = threading.Thread(target=run_plan, args=(con, "m1", aime_plan(3)),
                              kwargs={"credentials": creds(srv), "options": opts(concurrency=1, heartbeat_s=0.05)})
    worker.start()
    watch = con.cursor()
    beats, seen = set(), []
    while worker.is_alive():
        row = watch.execute("SELECT status, pid, host, heartbeat_at FROM runs").fetchone()
        if row and row[0] == "running":
            seen.append(row[1:3])
            beats.add(row[3])
        time.sleep(0.02)
    worker.join()
    assert seen and set(seen) == {(os.getpid(), socket.gethostname())}
    assert len(beats) >= 3                                        # fresh while the calls were in flight
    assert watch.execute("SELECT status FROM runs").fetchone()[0] == "done"


OLD_RUNS = """CREATE TABLE runs (run_id VARCHAR PRIMARY KEY, model VARCHAR NOT NULL, base_url VARCHAR,
    started_at TIMESTAMP NOT NULL, finished_at TIMESTAMP, status VARCHAR NOT NULL, n_planned INTEGER,
    n_calls INTEGER, n_paid INTEGER, cost_usd DOUBLE, options VARCHAR)"""
OLD_RESPONSES = """CREATE TABLE responses (request_hash VARCHAR PRIMARY KEY, run_id VARCHAR NOT NULL,
    model VARCHAR NOT NULL, benchmark VARCHAR NOT NULL, subdir VARCHAR NOT NULL, instance_id VARCHAR NOT NULL,
    params VARCHAR, params_sent VARCHAR, response_text VARCHAR, finish_reason VARCHAR, prompt_tokens BIGINT,
    completion_tokens BIGINT, reasoning_tokens BIGINT, latency_s DOUBLE, cost_usd DOUBLE, attempts INTEGER,
    error VARCHAR, grader VARCHAR, grader_version VARCHAR, created_at TIMESTAMP NOT NULL)"""


def test_old_warehouse_migrated_forward(tmp_path, chat_server):
    """A warehouse written by the first runner (old runs/responses, a run left 'running') opens, gains
    the new columns with its rows intact, and the next run marks the old one interrupted."""
    db = tmp_path / "old.duckdb"
    old = duckdb.connect(str(db))
    old.execute(OLD_RUNS)
    old.execute(OLD_RESPONSES)
    old.execute("INSERT INTO runs VALUES ('old-1', 'm1', NULL, now(), NULL, 'running', 4, 4, 0, 0, '{}')")
    old.execute("INSERT INTO responses VALUES ('h0', 'old-1', 'm1', 'aime25', '', '0', '{}', NULL, 'x', 'stop', "
                "1, 1, 0, 0.1, 0.0, 1, NULL, 'exact_number', '1', now())")
    old.close()
    for _ in range(2):                                            # re-applying the schema is a no-op
        c = connect(db)
        cols = {r[0] for r in c.execute("DESCRIBE runs").fetchall()}
        assert {"n_failed", "n_not_run", "detail", "pid", "host", "pid_started", "heartbeat_at"} <= cols
        assert {"error_kind", "note"} <= {r[0] for r in c.execute("DESCRIBE responses").fetchall()}
        assert c.execute("SELECT count(*) FROM responses WHERE request_hash = 'h0'").fetchone()[0] == 1
        c.close()
    c = connect(db)
    import_pack(c, aime_pack(tmp_path, 2))
    srv = chat_server(aime_script())
    s = run_plan(c, "m1", aime_plan(2), credentials=creds(srv), options=opts())
    assert s.status == "done" and [r["run_id"] for r in s.stale_runs] == ["old-1"]
    assert dict(c.execute("SELECT run_id, status FROM runs").fetchall()) == {"old-1": "interrupted", s.run_id: "done"}
    c.close()


# ------------------------------------------------------------------------------ CLI validation
def _cli(args, env=None):
    from warehouse.cli import app
    from warehouse.errors import audience

    speaking = audience.set("cli")              # as warehouse.cli.main does: errors name the flags
    try:
        return CliRunner().invoke(app, args, env={"PACE_DB": None, "API_KEY": None, "BASE_URL": None, **(env or {})})
    finally:
        audience.reset(speaking)


@pytest.fixture
def cli_db(tmp_path):
    db = tmp_path / "w.duckdb"
    c = connect(db)
    import_pack(c, aime_pack(tmp_path, 2))
    c.close()
    write_plan_csv(tmp_path / "plan.csv", aime_plan(2))
    return db


def _db_counts(db):
    c = connect(db)
    try:
        return [c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("runs", "responses", "scores")]
    finally:
        c.close()


def test_model_name_trimmed_and_empty_refused(cli_db, tmp_path, chat_server):
    srv = chat_server(aime_script())
    base = ["--db", str(cli_db), "--plan", str(tmp_path / "plan.csv"), "--base-url", srv.url, "--api-key", KEY]
    for bad in ("", "   ", "m\n1"):
        r = _cli(["run", bad, *base])
        assert r.exit_code == 2 and r.stderr.startswith("error: MODEL") and r.stderr.count("\n") == 1
    assert _db_counts(cli_db) == [0, 0, 0] and not srv.requests
    r = _cli(["run", " Kimi-K2.5 ", *base])
    assert r.exit_code == 0, r.output
    r = _cli(["run", "Kimi-K2.5", *base])                         # the same model: nothing left to do
    assert r.exit_code == 0 and len(srv.requests) == 2
    c = connect(cli_db)
    assert c.execute("SELECT DISTINCT model FROM scores").fetchall() == [("Kimi-K2.5",)]
    assert {m for (m,) in c.execute("SELECT model FROM runs").fetchall()} == {"Kimi-K2.5"}
    for bad in ("", " Kimi-K2.5 "):                               # the API refuses rather than guesses
        with pytest.raises(ValueError, match="model name"):
            run_plan(c, bad, aime_plan(2), credentials=creds(srv), options=opts())
    c.close()


RUN_FLAGS = [
    (["--max-cost", "abc"], "--max-cost must be a number >= 0, got 'abc'"),
    (["--max-cost", "-1"], "got '-1'"),
    (["--max-cost", "nan"], "got 'nan'"),
    (["--concurrency", "0"], "--concurrency must be an integer >= 1"),
    (["--concurrency", "two"], "got 'two'"),
    (["--rate-limit", "0"], "--rate-limit must be a number > 0, got '0'"),
    (["--timeout", "-5"], "--timeout must be a number > 0"),
    (["--timeout", "inf"], "got 'inf'"),
    (["--max-retries", "-1"], "--max-retries must be an integer >= 0"),
    (["--max-retries", "1.5"], "got '1.5'"),
    (["--max-consecutive-failures", "-2"], "--max-consecutive-failures must be an integer >= 0"),
    (["--plan", "nosuch.csv"], "--plan: no such file: nosuch.csv"),
    (["--prices", "nosuch.json"], "--prices: no such file: nosuch.json"),
    (["--prices", "{bad_prices}"], "--prices {bad_prices}:"),
    (["--plan", "{bad_plan}"], "{bad_plan}"),
    (["--base-url", "localhost:8000"], "base URL must look like"),
    (["--db", "{missing_db}"], "no warehouse at"),
    (["--db", "{not_duckdb}"], "is not a DuckDB database file"),
]


@pytest.mark.parametrize("flags,needle", RUN_FLAGS, ids=[" ".join(f) for f, _ in RUN_FLAGS])
def test_run_flags_validated_one_line_exit_2(cli_db, tmp_path, chat_server, flags, needle):
    srv = chat_server(aime_script())
    (tmp_path / "bad_prices.json").write_text("{not json")
    (tmp_path / "bad_plan.csv").write_bytes(b"benchmark,instance_id\naime25,0\n")
    (tmp_path / "not_duckdb.duckdb").write_text("hello")
    paths = {k: str(tmp_path / v) for k, v in (("bad_prices", "bad_prices.json"), ("bad_plan", "bad_plan.csv"),
                                               ("missing_db", "nope/w.duckdb"), ("not_duckdb", "not_duckdb.duckdb"))}
    flags = [f.format(**paths) for f in flags]
    args = ["run", "m1", "--db", str(cli_db), "--plan", str(tmp_path / "plan.csv"), "--base-url", srv.url,
            "--api-key", KEY, *flags]
    r = _cli(args)
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr
    assert needle.format(**paths) in r.stderr and "Traceback" not in r.output and KEY not in r.output
    assert not srv.requests and _db_counts(cli_db) == [0, 0, 0]
    assert not (tmp_path / "nope").exists()                       # a typo'd --db creates nothing


def test_instances_flags_validated_one_line_exit_2(tmp_path):
    db = tmp_path / "w.duckdb"
    good = aime_pack(tmp_path, 1)
    (tmp_path / "bad.jsonl").write_text("[1, 2]\n")
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\x00garbage")
    (tmp_path / "rows.jsonl").write_text(json.dumps({"id": 0, "problem": "x?", "answer": "1"}) + "\n")
    (tmp_path / "taken.pack.jsonl").write_text("mine\n")
    cases = [
        (["instances", "import", str(tmp_path / "nosuch.jsonl"), "--db", str(db)], "no such file"),
        (["instances", "import", str(good), str(tmp_path / "bad.jsonl"), "--db", str(db)], "bad.jsonl"),
        (["instances", "import", str(tmp_path / "bin.jsonl"), "--db", str(db)], "bin.jsonl"),
        (["instances", "import", str(good), "--db", str(tmp_path / "nope" / "w.duckdb")], "does not exist"),
        (["instances", "build", "nosuch", "--from", str(tmp_path / "rows.jsonl")], "no pack builder for benchmark 'nosuch'"),
        (["instances", "build", "aime25", "--from", str(tmp_path / "nosuch.jsonl")], "--from: no such file"),
        (["instances", "build", "aime25", "--from", str(tmp_path / "rows.jsonl"), "--out",
          str(tmp_path / "taken.pack.jsonl")], "exists; pass --overwrite"),
        (["instances", "build", "aime25", "--from", str(tmp_path / "rows.jsonl"), "--version", " "], "--version"),
        (["instances", "build", "aime25", "--from", str(tmp_path / "rows.jsonl"), "--subdir", ""], "--subdir"),
        (["instances", "list", "--db", str(tmp_path / "missing.duckdb")], "no warehouse at"),
    ]
    for args, needle in cases:
        r = _cli(args)
        assert r.exit_code == 2, (args, r.output)
        assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1 and needle in r.stderr, (args, r.stderr)
    assert not db.exists()                                        # the half-good import wrote nothing
    assert (tmp_path / "taken.pack.jsonl").read_text() == "mine\n"
    assert not (tmp_path / "missing.duckdb").exists() and not (tmp_path / "nope").exists()
    r = _cli(["instances", "build", "aime25", "--from", str(tmp_path / "rows.jsonl"), "--out",
              str(tmp_path / "taken.pack.jsonl"), "--overwrite"])
    assert r.exit_code == 0 and "wrote 1 records" in r.stdout
