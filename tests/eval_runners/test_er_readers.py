"""`pace run` does not lock other processes out: it opens the warehouse only to store a batch of
answers, so status, predict, sql and plan work while it waits for the endpoint; and a command that
meets a lock another process holds waits for it (`--wait [SECONDS]`, `PACE_WAIT`, else 5 s)."""
import json
import subprocess
import sys
import time

import pytest

from er_chat_server import Reply
from er_helpers import KEY, aime_pack, aime_plan, aime_script
from eval_runners.packs import import_pack
from eval_runners.plan import write_plan_csv
from ingest import collapsed
from ingest.lake import lake_drift
from tests.helpers import run_pace, synthetic_warehouse
from warehouse.api import Warehouse
from warehouse.connect import connect
from warehouse.errors import UserError


def _committed(db):
    """(answers stored, runner score rows) as a reader sees them, or None while the file is held."""
    try:
        con = connect(db, read_only=True, wait=0)
    except UserError:
        return None
    try:
        return con.execute("""SELECT (SELECT count(*) FROM responses WHERE error IS NULL),
                                     (SELECT count(*) FROM scores WHERE origin = 'runner')""").fetchone()
    finally:
        con.close()


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("readers")
    db, summary = synthetic_warehouse(folder, n_models=6, seed=3, scale=0.1)
    Warehouse(db).fit(method="instance", task="abs", sources="planbench ifeval", count=10, B=5, intervals=False)
    con = connect(db, )
    import_pack(con, aime_pack(folder, 5))
    con.close()
    write_plan_csv(folder / "plan.csv", aime_plan(5))
    return folder, db, summary.models


def test_status_predict_sql_plan_work_while_a_run_waits_for_the_endpoint(fitted, chat_server):
    folder, db, models = fitted
    fast = 2
    base = aime_script()
    srv = chat_server(lambda body, s: Reply(hang=True) if len(s.requests) > fast else base(body, s))
    run = subprocess.Popen([sys.executable, "-m", "eval_runners", "run", "m1", "--db", str(db),
                            "--plan", str(folder / "plan.csv"), "--base-url", srv.url, "--api-key", KEY,
                            "--concurrency", "1", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and _committed(db) != (fast, fast):
            time.sleep(0.25)                     # (a reader polling hard would hold the run's writes up)
        assert _committed(db) == (fast, fast) and run.poll() is None     # mid-run, answers already stored
        status = run_pace("status", "--db", db, "--json")
        assert status.exit_code == 0, status
        assert json.loads(status.stdout)["lake_drift"] == []               # the lake follows each batch
        predict = run_pace("predict", models[0], "--db", db, "--json")
        assert predict.exit_code == 0, predict
        assert len(json.loads(predict.stdout)["predictions"]) == 4
        sql = run_pace("sql", "SELECT count(*) AS n FROM runner_calls", "--db", db, "--json")
        assert sql.exit_code == 0 and json.loads(sql.stdout) == [{"n": fast}], sql
        plan = run_pace("plan", "m1", "--db", db)
        assert plan.exit_code == 0, plan
        with connect(db, read_only=True) as con:               # every batch leaves the cells right
            assert collapsed.drift(con) == {} and not collapsed.is_stale(con)
        assert run.poll() is None                                           # the run went on meanwhile
    finally:
        srv.release.set()
        srv.script = base
        out, err = run.communicate(timeout=60)
    assert run.returncode == 0, err.decode()
    summary = json.loads(out)
    assert summary["status"] == "done" and summary["paid_calls"] == 5 and summary["rows_written"] == 5
    con = connect(db, read_only=True)
    try:
        assert con.execute("SELECT status, n_paid FROM runs WHERE model = 'm1'").fetchall() == [("done", 5)]
        assert con.execute("SELECT count(*) FROM scores WHERE model = 'm1'").fetchone()[0] == 5
        assert collapsed.drift(con) == {} and lake_drift(con) == {}
    finally:
        con.close()


def _hold(db, seconds):
    """A process holding the warehouse's write lock for ``seconds`` (returns once it holds it)."""
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('held', flush=True); time.sleep(float(sys.argv[2]))", str(db), str(seconds)],
                              stdout=subprocess.PIPE)
    assert holder.stdout.readline() == b"held\n"
    return holder


def test_a_writer_meeting_a_lock_waits_when_asked(tmp_path):
    db, _ = synthetic_warehouse(tmp_path, n_models=3, seed=1, scale=0.05)
    holder = _hold(db, 30)
    try:
        r = run_pace("alias", "add", "A", "B", "--db", db, "--wait", "0")
        assert r.exit_code == 2 and f"(PID {holder.pid}" in r.stderr and "waited" not in r.stderr
        started = time.monotonic()
        r = run_pace("alias", "add", "A", "B", "--db", db, env={"PACE_WAIT": "1.5"})
        assert r.exit_code == 2 and time.monotonic() - started >= 1.5
        assert r.stderr.count("\n") <= 2 and "waited 2 s" in r.stderr and f"(PID {holder.pid}" in r.stderr
    finally:
        holder.kill()
        holder.wait()
    holder = _hold(db, 6)       # long enough for a loaded machine to start pace and wait past 1 s
    try:
        r = run_pace("alias", "add", "A", "B", "--db", db, "--wait=30")          # the holder lets go first
        assert r.exit_code == 0, r
        assert "waiting up to 30 s" in r.stderr and "A -> B" in r.stdout
    finally:
        holder.wait()
    holder = _hold(db, 1.0)
    try:
        assert run_pace("status", "--db", db).exit_code == 0                   # the default wait covers it
    finally:
        holder.wait()


@pytest.mark.parametrize("args,env,shown", [(["--wait=soon"], {}, "--wait='soon'"),
                                            ([], {"PACE_WAIT": "-3"}, "PACE_WAIT='-3'")])
def test_a_bad_wait_is_one_line(tmp_path, args, env, shown):
    r = run_pace("status", "--db", tmp_path / "none.duckdb", *args, env=env)
    assert r.exit_code == 2 and r.stderr.startswith(f"error: {shown} is not a number of seconds")
