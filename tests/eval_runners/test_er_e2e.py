"""End to end: synthetic warehouse -> (fit) -> plan for a model with no rows -> `pace run`
against the local server -> full coverage of the plan (-> predictions, once they exist)."""
from er_chat_server import completion
from er_helpers import KEY
from eval_runners.packs import make_record, write_pack, import_pack
from eval_runners.run import RunOptions, run_plan
from eval_runners.secrets import Credentials
from warehouse.connect import connect


def test_synthetic_warehouse_to_full_coverage(tmp_path, chat_server):
    from ingest.load import ingest_tree
    from ingest.synthetic import generate_tree
    generate_tree(tmp_path / "tree", n_models=4, seed=1, scale=0.02)
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, tmp_path / "tree", tmp_path / "lake")
    ids = [r[0] for r in con.execute("""SELECT DISTINCT instance_id FROM scores WHERE benchmark = 'ifeval'
                                        ORDER BY instance_id LIMIT 3""").fetchall()]
    pb = [r[0] for r in con.execute("""SELECT DISTINCT instance_id FROM scores WHERE benchmark = 'planbench'
                                       AND subdir = 'task_7_plan_execution' ORDER BY instance_id LIMIT 3""").fetchall()]
    assert ids and pb
    # The plan the lead's `pace plan` will compute; passed explicitly until it exists.
    plan = [("ifeval", s, i) for i in ids for s in ("prompt_level_strict_acc", "inst_level_loose_acc")]
    plan += [("planbench", "task_7_plan_execution", i) for i in pb]
    recs = [make_record("syn", "1", "ifeval", "", i, [{"role": "user", "content": f"ifeval {i}: no commas"}],
                        {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}, "ifeval") for i in ids]
    recs += [make_record("syn", "1", "planbench", "task_7_plan_execution", i,
                         [{"role": "user", "content": f"planbench {i}: final state?"}],
                         {"ground_truth": "the hand is empty, the red block is clear"}, "planbench_execution")
             for i in pb]
    write_pack(tmp_path / "syn.pack.jsonl", recs)
    import_pack(con, tmp_path / "syn.pack.jsonl")

    def script(body, srv):
        p = body["messages"][-1]["content"]
        return completion("the hand is empty and the red block is clear" if p.startswith("planbench")
                          else "no commas here")
    srv = chat_server(script)
    model = "NewModel-E2E"
    assert con.execute("SELECT count(*) FROM scores WHERE model = ?", [model]).fetchone()[0] == 0
    s = run_plan(con, model, plan, credentials=Credentials(srv.url, KEY), options=RunOptions(progress=False))
    assert s.status == "done" and s.paid_calls == len(ids) + len(pb)
    covered = con.execute("""SELECT count(*) FROM scores WHERE model = ? AND origin = 'runner'
                             AND (benchmark, subdir, instance_id) IN (SELECT * FROM (VALUES {}))""".format(
        ", ".join(f"('{b}', '{sd}', '{i}')" for b, sd, i in plan)), [model]).fetchone()[0]
    assert covered == len(plan)                                   # full coverage of the plan

    # The warehouse's side (fit, plan, predictions) is covered end to end in test_fit_plan_run_predict.


def test_fit_plan_run_predict(tmp_path, chat_server):
    """synthetic warehouse -> fit -> plan for a model with no rows -> `pace run` against the local server
    -> `predictions` shows the model with full coverage."""
    import json

    from typer.testing import CliRunner

    from ingest.load import ingest_tree
    from ingest.synthetic import generate_tree
    from warehouse.cli import app
    from warehouse.fit import FitRequest, fit_and_store
    from warehouse.plan import plan_rows

    generate_tree(tmp_path / "tree", n_models=8, seed=2, scale=0.2)
    db = tmp_path / "w.duckdb"
    con = connect(db)
    ingest_tree(con, tmp_path / "tree", tmp_path / "lake")
    # ifeval only: its rule-based grader runs offline for any synthetic instance
    fit_and_store(con, FitRequest(method="default", count=12, B=10, seed=1, sources=["ifeval"], intervals=False))
    model = "NewModel-E2E"
    plan = plan_rows(con, model)
    assert plan and {b for b, _, _ in plan} == {"ifeval"}
    ids = sorted({i for _, _, i in plan})
    write_pack(tmp_path / "ifeval.pack.jsonl", [
        make_record("syn", "1", "ifeval", "", i, [{"role": "user", "content": f"ifeval {i}: answer without commas"}],
                    {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}, "ifeval") for i in ids])
    import_pack(con, tmp_path / "ifeval.pack.jsonl")
    con.close()

    srv = chat_server(lambda body, srv: completion("no commas here"))
    result = CliRunner().invoke(app, ["run", model, "--db", str(db), "--base-url", srv.url, "--api-key", KEY,
                                      "--json"])
    assert result.exit_code == 0, result.output
    assert KEY not in result.output
    con = connect(db)
    assert plan_rows(con, model) == []                            # nothing left to run
    rows = con.execute("SELECT target, predicted, coverage FROM predictions WHERE model = ?", [model]).fetchall()
    assert len(rows) == 4 and all(c == 1.0 for _, _, c in rows)
    # every ifeval instruction passed, so the new model scores 1 on its planned instances
    assert con.execute("SELECT min(score) FROM scores WHERE model = ?", [model]).fetchall()[0][0] == 1.0
    predicted = CliRunner().invoke(app, ["predict", model, "--db", str(db), "--json"])
    assert predicted.exit_code == 0 and len(json.loads(predicted.stdout)["predictions"]) == 4


# ---- a new model from plan to prediction, graded by every benchmark the fit selects -----------

def _drive_new_model(tmp_path, db, model, chat_server):
    """plan -> packs built from synthetic rows for exactly the planned ids -> dry run -> run
    against the local server (some answers right, some wrong) -> predict. Returns what the
    assertions need."""
    import json

    from typer.testing import CliRunner

    from er_rows import build_and_import, cases_for_plan, expected_scores, script_for, wants_wrong
    from warehouse.cli import app
    from warehouse.plan import plan_rows

    runner = CliRunner()
    con = connect(db)
    plan = plan_rows(con, model)
    con.close()
    assert plan
    cases, targets = cases_for_plan(plan)
    build_and_import(tmp_path, db, cases)
    wrong = {k for k in cases if wants_wrong(k)}
    assert wrong and len(wrong) < len(cases)

    dry = runner.invoke(app, ["run", model, "--db", str(db), "--dry-run", "--json"])
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.stdout)["skipped"] == {}               # nothing unsupported, nothing refused

    srv = chat_server(script_for(cases, wrong))
    res = runner.invoke(app, ["run", model, "--db", str(db), "--base-url", srv.url, "--api-key", KEY, "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["status"] == "done" and summary["paid_calls"] == len(cases)
    assert summary["failed_calls"] == summary["grader_errors"] == summary["unscorable"] == 0, summary["error_samples"]

    con = connect(db)
    got = {(b, s, i): v for b, s, i, v in con.execute(
        "SELECT benchmark, subdir, instance_id, score FROM scores WHERE model = ? AND origin = 'runner'",
        [model]).fetchall()}
    con.close()
    expected = expected_scores(cases, targets, wrong)
    pred = runner.invoke(app, ["predict", model, "--db", str(db), "--json"])
    return plan, got, expected, pred


def _assert_graded_and_predicted(plan, got, expected, pred):
    import json

    import pytest

    assert set(expected) == set(plan)
    missing = [k for k in plan if k not in got]
    assert not missing, missing[:5]
    bad = {k: (got[k], v) for k, v in expected.items() if got[k] != pytest.approx(v, abs=1e-9)}
    assert not bad, list(bad.items())[:5]
    assert {v for v in got.values()} - {0.0, 1.0}          # not all binary: continuous grades went through
    assert pred.exit_code == 0, pred.output                  # the default --min-coverage 0.9 is met
    rows = json.loads(pred.stdout)["predictions"]
    assert len(rows) == 4 and all(r["coverage"] >= 0.9 for r in rows)


def test_real_fit_new_model_plan_to_prediction(tmp_path, chat_server, real_tree):
    """On the real fit (all sources): every selected benchmark is graded offline and the new model
    gets a prediction with full coverage; its scores are exactly the grades the answers deserve."""
    from warehouse.aliases import add_alias
    from ingest.load import ingest_tree
    from warehouse.fit import FitRequest, fit_and_store

    db = tmp_path / "real.duckdb"
    con = connect(db)
    ingest_tree(con, real_tree, tmp_path / "lake")
    add_alias(con, "DeepSeek-V3.2-Reasoner", "DeepSeek-V3.2")
    # intervals and the pairwise proxies are not what this test is about, and they are most of the fit's time
    fit_and_store(con, FitRequest(method="default", count=100, seed=42, intervals=False, tasks=("abs",)))
    con.close()
    _assert_graded_and_predicted(*_drive_new_model(tmp_path, db, "NewModel", chat_server))


def test_synthetic_fit_new_model_plan_to_prediction(tmp_path, chat_server):
    """The same path on the synthetic tree (runs everywhere): text benchmarks with offline graders."""
    from ingest.load import ingest_tree
    from ingest.synthetic import generate_tree
    from warehouse.fit import FitRequest, fit_and_store

    generate_tree(tmp_path / "tree", n_models=8, seed=3, scale=0.2)
    db = tmp_path / "syn.duckdb"
    con = connect(db)
    ingest_tree(con, tmp_path / "tree", tmp_path / "lake")
    fit_and_store(con, FitRequest(method="default", count=40, B=20, seed=1, intervals=False,
                                  sources=["planbench", "lifbench", "repobench", "ifeval"]))
    con.close()
    plan, got, expected, pred = _drive_new_model(tmp_path, db, "NewModel-Syn", chat_server)
    assert {b for b, _, _ in plan} >= {"planbench", "lifbench"}
    _assert_graded_and_predicted(plan, got, expected, pred)
