"""`pace export` carries the runner's calls: every response with its grade, the runs and the packs,
so another team can re-grade without paying again; nothing shaped like a credential leaves."""
import duckdb

from er_chat_server import completion
from er_helpers import KEY, aime_pack, aime_plan
from eval_runners.packs import import_pack
from eval_runners.run import RunOptions, run_plan
from eval_runners.secrets import Credentials
from tests.helpers import run_pace
from warehouse.connect import connect


def test_export_holds_responses_and_grades_without_secrets(tmp_path, chat_server):
    db = tmp_path / "w.duckdb"
    con = connect(db)
    import_pack(con, aime_pack(tmp_path))

    def script(body, srv):
        text = body["messages"][-1]["content"]
        i = int(text.split("question ")[1].split(":")[0])
        if i == 3:      # a model that echoes a credential it saw somewhere
            return completion(f"Authorization: Bearer {KEY} ... and {KEY}; so \\boxed{{7}}")
        return completion(f"so \\boxed{{{i + 100}}}")

    srv = chat_server(script)
    # (a base URL holding user:password@ is refused before any call: test_er_safety)
    summary = run_plan(con, "m1", aime_plan(), credentials=Credentials(srv.url, KEY, "flag"),
                       options=RunOptions(progress=False, timeout=5, max_retries=1))
    assert summary.status == "done" and summary.paid_calls == 4
    con.close()
    out = tmp_path / "ex"
    assert run_pace("export", out, "--db", db).exit_code == 0

    ex = duckdb.connect()
    responses = ex.execute(f"""SELECT instance_id, response_text, grader, grader_version
                               FROM '{out}/responses.parquet' ORDER BY instance_id""").fetchall()
    assert [r[0] for r in responses] == ["0", "1", "2", "3"]
    assert responses[0][1] == "so \\boxed{100}" and all(r[2] and r[3] for r in responses)
    assert "Bearer ***" in responses[3][1] and "sk-***" in responses[3][1]
    graded = ex.execute(f"""SELECT c.instance_id, c.status, s.score FROM '{out}/runner_calls.parquet' c
                            JOIN read_parquet('{out}/scores/*/*.parquet', hive_partitioning = true) s
                              ON s.model = c.model AND s.benchmark = c.benchmark AND s.instance_id = c.instance_id
                            ORDER BY 1""").fetchall()
    assert graded == [("0", "ok", 1.0), ("1", "ok", 1.0), ("2", "ok", 1.0), ("3", "ok", 0.0)]
    assert "asset_root" not in [c[0] for c in ex.execute(f"DESCRIBE '{out}/instances.parquet'").fetchall()]
    run_columns = [c[0] for c in ex.execute(f"DESCRIBE '{out}/runs.parquet'").fetchall()]
    assert "status" in run_columns and not {"pid", "host"} & set(run_columns)
    assert ex.execute(f"SELECT count(*) FROM '{out}/instances.parquet'").fetchone()[0] == 4

    # no exported text anywhere holds the key or the URL's password
    for path in sorted(out.rglob("*.parquet")):
        cols = [c for c, t, *_ in ex.execute(f"DESCRIBE '{path}'").fetchall() if t in ("VARCHAR", "JSON")]
        for col in cols:
            hits = ex.execute(f"""SELECT count(*) FROM '{path}' WHERE "{col}"::VARCHAR LIKE '%TOPSECRET%'
                                  OR "{col}"::VARCHAR LIKE '%hunter2%'""").fetchone()[0]
            assert hits == 0, (path.name, col)
    assert "TOPSECRET" not in (out / "SCHEMA.md").read_text() and "## responses (table)" in (out / "SCHEMA.md").read_text()
