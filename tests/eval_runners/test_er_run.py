import pytest

from er_chat_server import error
from er_helpers import KEY, aime_pack, aime_plan, aime_script
from eval_runners.packs import import_pack
from eval_runners.pricing import PriceTable
from eval_runners.run import RunBlocked, RunOptions, run_plan
from eval_runners.secrets import Credentials
from warehouse.connect import connect

PRICES = PriceTable.from_mapping({"models": {"m1": {"input": 3.0, "output": 15.0}}})


@pytest.fixture
def con(tmp_path):
    c = connect(tmp_path / "w.duckdb", udfs=False)
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
    assert s.status == "done" and s.paid_calls == 4 and s.rows_written == 4 and s.errors == 0
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
    run = con.execute("SELECT status, n_paid, cost_usd, base_url FROM runs").fetchone()
    assert run[:2] == ("done", 4) and run[2] == pytest.approx(0.0024) and run[3] == srv.url
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
    assert len(srv.requests) == s.paid_calls == 2 and s.not_run == 2
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
    assert s.errors == 1 and s.rows_written == 3
    assert con.execute("SELECT count(*) FROM scores WHERE instance_id='2'").fetchone()[0] == 0
    err = con.execute("SELECT error, attempts FROM responses WHERE instance_id='2'").fetchone()
    assert "InternalServerError" in err[0] and err[1] == 3
    state["broken"] = False
    n = len(srv.requests)
    s2 = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts())
    assert s2.paid_calls == 1 and len(srv.requests) == n + 1 and s2.rows_written == 1
    assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 4


def test_ingested_row_never_overwritten(con, chat_server):
    con.execute("""INSERT INTO scores VALUES ('m1','aime25','exact_match','0',0.5,'exact_match','ingest','f.csv',now())""")
    srv = chat_server(aime_script())
    s = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts())
    assert s.already_scored == 1 and s.paid_calls == 3
    assert con.execute("SELECT score, origin FROM scores WHERE instance_id='0'").fetchall() == [(0.5, "ingest")]


def test_key_never_stored_or_shown(con, chat_server, capsys):
    srv = chat_server(lambda b, s: error(500, f"echo {s.requests[-1]['headers']['authorization']}"))
    s = run_plan(con, "m1", aime_plan(), credentials=creds(srv), options=opts(progress=True))
    assert s.errors == 4
    assert all(KEY not in e for e in s.error_samples)
    assert KEY not in repr(creds(srv))
    out = capsys.readouterr()
    assert KEY not in out.out and KEY not in out.err
    for table in ("responses", "runs", "runner_calls", "scores", "instances"):
        dump = str(con.execute(f"SELECT * FROM {table}").fetchall())
        assert KEY not in dump
