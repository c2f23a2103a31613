"""Real subprocess runs of `python -m eval_runners run` against the local server: SIGKILL and
SIGINT mid-run then rerun (no repeated paid call, the dead run marked), hostile endpoints (lone
surrogates, garbage, 401/403, 429 forever) end to end with their exit codes; the key is nowhere."""
import json
import os
import signal
import subprocess
import sys
import time


from er_chat_server import MODES, Reply, error
from er_helpers import KEY, aime_pack, aime_plan, aime_script
from eval_runners.packs import import_pack
from eval_runners.plan import write_plan_csv
from warehouse.connect import connect
from warehouse.errors import UserError


def _setup(tmp_path, n):
    db = tmp_path / "w.duckdb"
    con = connect(db)
    import_pack(con, aime_pack(tmp_path, n))
    con.close()
    plan = tmp_path / "plan.csv"
    write_plan_csv(plan, aime_plan(n))
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"m1": {"input": 1.0, "output": 2.0}}}))
    return db, plan, prices


def _cmd(db, plan, prices, url, *extra):
    return [sys.executable, "-m", "eval_runners", "run", "m1", "--db", str(db), "--plan", str(plan),
            "--prices", str(prices), "--base-url", url, "--api-key", KEY, "--concurrency", "2",
            "--timeout", "60", *extra]


def _env():
    env = {k: v for k, v in os.environ.items() if k not in ("API_KEY", "BASE_URL", "PACE_DB")}
    env["COLUMNS"] = "200"
    return env


def _stored(db):
    """(answers stored, score rows) as a reader sees them while a run may be working."""
    try:
        con = connect(db, read_only=True)
    except UserError:                        # the run is storing a batch right now
        return None
    try:
        return con.execute("""SELECT (SELECT count(*) FROM responses WHERE error IS NULL),
                                     (SELECT count(*) FROM scores)""").fetchone()
    finally:
        con.close()


def test_kill9_midway_then_resume(tmp_path, chat_server):
    n, fast = 10, 4
    db, plan, prices = _setup(tmp_path, n)
    phase = {"slow": True}
    base = aime_script(prompt_tokens=50, completion_tokens=10)

    def script(body, srv):
        if phase["slow"] and len(srv.requests) > fast:
            return Reply(hang=True)          # answers slowly: never, until the process is killed
        return base(body, srv)
    srv = chat_server(script)
    p = subprocess.Popen(_cmd(db, plan, prices, srv.url), cwd=tmp_path, env=_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while time.time() < deadline and not (sum(srv.answered.values()) == fast and len(srv.requests) >= fast + 2):
        time.sleep(0.05)
    assert sum(srv.answered.values()) == fast
    # the run holds no lock between its batches: watch (read-only) until the answers are committed
    while time.time() < deadline and _stored(db) != (fast, fast):
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    out1, err1 = p.communicate(timeout=10)
    assert p.returncode == -signal.SIGKILL

    con = connect(db)
    stored = con.execute("SELECT count(*) FROM responses WHERE error IS NULL").fetchone()[0]
    scored = con.execute("SELECT count(*) FROM scores").fetchone()[0]
    con.close()
    assert stored == fast and scored == fast            # nothing paid was lost

    phase["slow"] = False
    srv.release.set()
    r = subprocess.run(_cmd(db, plan, prices, srv.url, "--json"), cwd=tmp_path, env=_env(),
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    summary = json.loads(r.stdout)
    assert summary["paid_calls"] == n - fast and summary["already_scored"] == fast
    assert [s["pid"] for s in summary["stale_runs"]] == [p.pid]          # the killed run, found dead
    assert f"marked run {summary['stale_runs'][0]['run_id']} (m1) interrupted" in r.stderr.decode()
    assert set(srv.answered.values()) == {1} and len(srv.answered) == n     # no prompt paid twice

    con = connect(db)
    assert con.execute("SELECT count(*), count(DISTINCT instance_id), sum(score) FROM scores").fetchone() == (n, n, n)
    assert con.execute("""SELECT count(*) FROM (SELECT model, benchmark, subdir, instance_id FROM scores
                          GROUP BY ALL HAVING count(*) > 1)""").fetchone()[0] == 0
    assert con.execute("SELECT sum(prompt_tokens), sum(completion_tokens) FROM responses").fetchone() == (50 * n, 10 * n)
    statuses = sorted(r[0] for r in con.execute("SELECT status FROM runs").fetchall())
    killed = con.execute("SELECT n_paid, detail FROM runs WHERE status = 'interrupted'").fetchone()
    con.close()
    assert statuses == ["done", "interrupted"]         # the killed run is marked, not left 'running'
    assert killed[0] == fast and f"process {p.pid}" in killed[1]
    for blob in (out1, err1, r.stdout, r.stderr, db.read_bytes()):
        assert KEY.encode() not in blob
    wal = db.with_name(db.name + ".wal")
    assert not wal.exists() or KEY.encode() not in wal.read_bytes()


def test_cli_key_from_dotenv_never_leaks(tmp_path, chat_server):
    db, plan, prices = _setup(tmp_path, 2)
    (tmp_path / ".env").write_text(f"API_KEY={KEY}\n")
    # a proxy that echoes the credential back in its error text
    srv = chat_server(lambda b, s: error(503, f"bad gateway for {s.requests[-1]['headers']['authorization']}"))
    cmd = [a for a in _cmd(db, plan, prices, srv.url, "--max-retries", "1") if a not in ("--api-key", KEY)]
    r = subprocess.run(cmd, cwd=tmp_path, env=_env(), capture_output=True, timeout=60)
    assert r.returncode == 1                           # every call failed: the run failed
    assert srv.requests and all(q["headers"]["authorization"] == f"Bearer {KEY}" for q in srv.requests)
    assert b": failed; 0 answered, 2 failed" in r.stdout and b"***" in r.stdout
    for blob in (r.stdout, r.stderr, db.read_bytes()):
        assert KEY.encode() not in blob
    assert "API_KEY" not in os.environ


def _run(tmp_path, srv, n, *extra):
    db, plan, prices = (tmp_path / "w.duckdb", tmp_path / "plan.csv", tmp_path / "prices.json")
    if not db.exists():
        _setup(tmp_path, n)
    r = subprocess.run(_cmd(db, plan, prices, srv.url, *extra), cwd=tmp_path, env=_env(), capture_output=True,
                       timeout=120)
    out, err = r.stdout.decode(), r.stderr.decode()
    assert "Traceback" not in out + err and KEY not in out + err
    return r.returncode, out, err


def _db_rows(tmp_path, sql):
    con = connect(tmp_path / "w.duckdb")
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_cli_lone_surrogate_reply_stored_graded_rerun_pays_nothing(tmp_path, chat_server):
    srv = chat_server(MODES["surrogate"])
    code, out, err = _run(tmp_path, srv, 4)
    assert code == 0 and ": done; 4 answered, 0 failed" in out, out + err
    assert _db_rows(tmp_path, "SELECT count(*), sum(score) FROM scores") == [(4, 4.0)]
    assert _db_rows(tmp_path, "SELECT count(*) FROM responses WHERE response_text LIKE '%\ufffd and \ufffd%'") == [(4,)]
    code, out, err = _run(tmp_path, srv, 4)
    assert code == 0 and "0 answered" in out and "4 already scored" in out
    assert len(srv.requests) == 4 and set(srv.answered.values()) == {1}      # nothing paid twice


def test_cli_every_call_fails_exit_1_status_failed(tmp_path, chat_server):
    """(garbage bodies, timeouts and 5xx take the same path: see test_er_run)"""
    srv = chat_server(MODES["429"])
    code, out, err = _run(tmp_path, srv, 4, "--max-retries", "0")
    assert code == 1 and ": failed; 0 answered, 4 failed, 0 not run" in out, out + err
    assert "failed: 4 rate limited (HTTP 429), retries exhausted" in out
    assert "budget" not in out                                      # no budget was set
    assert _db_rows(tmp_path, "SELECT status, n_paid, n_failed FROM runs") == [("failed", 0, 4)]


def test_cli_refused_key_stops_at_once_one_line(tmp_path, chat_server):
    """(403 takes the same path: see test_er_run and test_er_client)"""
    mode = "401"
    srv = chat_server(lambda b, s: error(int(mode), f"bad key {s.requests[-1]['headers']['authorization']}"))
    code, out, err = _run(tmp_path, srv, 6, "--concurrency", "1")
    assert code == 1 and len(srv.requests) == 1
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and f"{srv.url}/v1/chat/completions" in lines[0] and "'m1'" in lines[0]
    assert f"HTTP {mode}" in lines[0] and "5 not run" in lines[0]
    assert ": failed; 0 answered, 1 failed, 5 not run" in out
    assert _db_rows(tmp_path, "SELECT status, n_failed, n_not_run FROM runs") == [("failed", 1, 5)]


def test_cli_ctrl_c_marks_interrupted_and_rerun_resumes(tmp_path, chat_server):
    n, fast = 6, 2
    db, plan, prices = _setup(tmp_path, n)
    ok, phase = MODES["ok"], {"slow": True}
    srv = chat_server(lambda b, s: Reply(hang=True) if phase["slow"] and len(s.requests) > fast else ok(b, s))
    p = subprocess.Popen(_cmd(db, plan, prices, srv.url, "--concurrency", "1"), cwd=tmp_path, env=_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while time.time() < deadline and len(srv.requests) <= fast:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130, err.decode()
    assert b"interrupted" in err and b"Traceback" not in err + out and err.count(b"error:") == 1
    assert _db_rows(tmp_path, "SELECT status, detail FROM runs") == [("interrupted", "stopped by the user")]
    phase["slow"] = False
    srv.release.set()
    code, out, _ = _run(tmp_path, srv, n)
    assert code == 0 and f"{n - fast} answered" in out and f"{fast} already scored" in out
    assert sorted(srv.answered.values()) == [1] * n                      # no answer paid twice
