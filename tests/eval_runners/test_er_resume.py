"""Real subprocess runs: SIGKILL mid-run, rerun, no repeated paid call; the key is nowhere."""
import json
import os
import signal
import subprocess
import sys
import time

from er_chat_server import Reply
from er_helpers import KEY, aime_pack, aime_plan, aime_script
from eval_runners.packs import import_pack
from eval_runners.plan import write_plan_csv
from warehouse.connect import connect


def _setup(tmp_path, n):
    db = tmp_path / "w.duckdb"
    con = connect(db, udfs=False)
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
    time.sleep(0.8)                          # let the last answers be committed
    p.send_signal(signal.SIGKILL)
    out1, err1 = p.communicate(timeout=10)
    assert p.returncode == -signal.SIGKILL

    con = connect(db, udfs=False)
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
    assert set(srv.answered.values()) == {1} and len(srv.answered) == n     # no prompt paid twice

    con = connect(db, udfs=False)
    assert con.execute("SELECT count(*), count(DISTINCT instance_id), sum(score) FROM scores").fetchone() == (n, n, n)
    assert con.execute("""SELECT count(*) FROM (SELECT model, benchmark, subdir, instance_id FROM scores
                          GROUP BY ALL HAVING count(*) > 1)""").fetchone()[0] == 0
    assert con.execute("SELECT sum(prompt_tokens), sum(completion_tokens) FROM responses").fetchone() == (50 * n, 10 * n)
    statuses = sorted(r[0] for r in con.execute("SELECT status FROM runs").fetchall())
    con.close()
    assert statuses == ["done", "running"]             # the killed run stays visibly unfinished
    for blob in (out1, err1, r.stdout, r.stderr, db.read_bytes()):
        assert KEY.encode() not in blob
    wal = db.with_name(db.name + ".wal")
    assert not wal.exists() or KEY.encode() not in wal.read_bytes()


def test_cli_key_from_dotenv_never_leaks(tmp_path, chat_server):
    db, plan, prices = _setup(tmp_path, 2)
    (tmp_path / ".env").write_text(f"API_KEY={KEY}\n")
    # a proxy that echoes the credential back in its error text
    from er_chat_server import error
    srv = chat_server(lambda b, s: error(503, f"bad gateway for {s.requests[-1]['headers']['authorization']}"))
    cmd = [a for a in _cmd(db, plan, prices, srv.url, "--max-retries", "1") if a not in ("--api-key", KEY)]
    r = subprocess.run(cmd, cwd=tmp_path, env=_env(), capture_output=True, timeout=60)
    assert r.returncode == 0
    assert srv.requests and all(q["headers"]["authorization"] == f"Bearer {KEY}" for q in srv.requests)
    assert b"errors 2" in r.stdout and b"***" in r.stdout
    for blob in (r.stdout, r.stderr, db.read_bytes()):
        assert KEY.encode() not in blob
    assert "API_KEY" not in os.environ
