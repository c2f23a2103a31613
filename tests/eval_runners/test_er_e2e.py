"""End to end: synthetic warehouse -> (fit) -> plan for a model with no rows -> `pace run`
against the local server -> full coverage of the plan (-> predictions, once they exist)."""
import importlib.util

import pytest

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
    con = connect(tmp_path / "w.duckdb", udfs=False)
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

    missing = []
    if importlib.util.find_spec("warehouse.plan") is None:
        missing.append("plan provider warehouse.plan.plan_rows(con, model)")
    views = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    if "predictions" not in views:
        missing.append("`predictions` view")
    if "proxy_weights" not in views:
        missing.append("fit (proxy_fits / proxy_weights)")
    if missing:
        pytest.skip("prediction assertion pending, missing: " + "; ".join(missing))
    row = con.execute("SELECT * FROM predictions WHERE model = ?", [model]).fetchall()
    assert row
