import json

import pytest
from typer.testing import CliRunner

from er_chat_server import completion
from er_helpers import KEY
from eval_runners.cli import standalone_app
from eval_runners.builders import build_pack
from eval_runners.packs import PackError, import_pack, read_pack
from eval_runners.pricing import PriceTable
from eval_runners.run import RunOptions, run_plan
from eval_runners.secrets import Credentials
from warehouse.connect import connect

PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15"
       b"\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

ROWS = {
    "aime25": [{"id": 0, "problem": "Find x if x + 1 = 71.", "answer": "70"}],
    "gpqa": [{"Question": "Which gas is inert?", "Correct Answer": "Argon", "Incorrect Answer 1": "Oxygen",
              "Incorrect Answer 2": "Chlorine", "Incorrect Answer 3": "Fluorine", "Record ID": "rec1"}],
    "mmlu_cot": [{"question": "2+2?", "subject": "elementary_mathematics", "choices": ["3", "4", "5", "6"], "answer": 1}],
    "logiqa": [{"context": "All A are B.", "query": "Which follows?", "options": ["w", "x", "y", "z"], "correct_option": 2}],
    "ifeval": [{"key": 1000, "prompt": "Write a haiku without commas.", "instruction_id_list": ["punctuation:no_comma"],
                "kwargs": [{"num_words": None}]}],
    "humaneval_chat": [{"task_id": "HumanEval/0", "prompt": "def inc(x):\n    \"\"\"add one\"\"\"\n",
                        "canonical_solution": "    return x + 1\n", "test": "def check(f):\n    assert f(1) == 2\n",
                        "entry_point": "inc"}],
    "mbpp_chat": [{"task_id": 11, "text": "Write a function to add two numbers.", "code": "def add(a,b): return a+b",
                   "test_list": ["assert add(1, 2) == 3"], "test_setup_code": "", "challenge_test_list": []}],
    "livecodebench": [{"question_title": "Double", "question_content": "Read n, print 2n.", "platform": "atcoder",
                       "question_id": "abc001_a", "contest_id": "abc001", "contest_date": "2024-01-01T00:00:00",
                       "starter_code": "", "difficulty": "easy",
                       "public_test_cases": json.dumps([{"input": "2\n", "output": "4\n", "testtype": "stdin"}]),
                       "private_test_cases": json.dumps([{"input": "3\n", "output": "6\n", "testtype": "stdin"}]),
                       "metadata": "{}"}],
    "planbench": [{"instance_id": 4, "query": "[STATEMENT]\nIs this plan valid? ...\n[PLAN]...",
                   "ground_truth": "The above plan is invalid."}],
    "bfcl": [{"id": "simple_0", "question": [[{"role": "user", "content": "Area of a triangle, base 10, height 5?"}]],
              "function": [{"name": "calc_area", "description": "area", "parameters": {"type": "dict",
                            "properties": {"base": {"type": "integer"}, "height": {"type": "integer"}},
                            "required": ["base", "height"]}}],
              "ground_truth": [{"calc_area": {"base": [10], "height": [5]}}]}],
    "repobench": [{"repo_name": "u/r", "file_path": "r/m.py", "context": [{"path": "r/u.py", "identifier": "f",
                   "snippet": "def f(): ..."}], "import_statement": "from r.u import f", "cropped_code": "x = 1\n",
                   "all_code": "", "next_line": "y = f()", "gold_snippet_index": 0, "created_at": "2023", "level": "2k"}],
}
SUBDIRS = {"planbench": "task_3_plan_verification", "repobench": "repobench_if_python", "bfcl": "simple",
           "livecodebench": "codegeneration"}
EXPECT_IDS = {"aime25": "0", "gpqa": "0", "mmlu_cot": "elementary_mathematics_0", "logiqa": "0", "ifeval": "0",
              "humaneval_chat": "HumanEval/0", "mbpp_chat": "Mbpp/11", "livecodebench": "0", "planbench": "4",
              "bfcl": "simple_0", "repobench": "repobench_0"}


@pytest.mark.parametrize("bench", sorted(ROWS))
def test_builder_on_real_field_layout(tmp_path, bench):
    src = tmp_path / f"{bench}.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in ROWS[bench]))
    out, n = build_pack(bench, src, tmp_path / "p.jsonl", version="v1", subdir=SUBDIRS.get(bench))
    rec, = read_pack(out)
    assert n == 1 and rec["benchmark"] == bench and rec["instance_id"] == EXPECT_IDS[bench]
    assert rec["subdir"] == ("" if bench not in SUBDIRS else SUBDIRS[bench])
    assert rec["messages"][-1]["role"] == "user" and rec["pack_version"] == "v1"
    from eval_runners import registry
    spec = registry.get(bench)
    spec.grader_for(rec)               # the named grader exists


def test_gpqa_gold_is_shuffled_but_stable(tmp_path):
    src = tmp_path / "g.jsonl"
    src.write_text("\n".join(json.dumps({**ROWS["gpqa"][0], "id": i}) for i in range(8)))
    out, _ = build_pack("gpqa", src, tmp_path / "a.jsonl")
    golds = [r["reference"]["answer"] for r in read_pack(out)]
    out2, _ = build_pack("gpqa", src, tmp_path / "b.jsonl")
    assert golds == [r["reference"]["answer"] for r in read_pack(out2)] and len(set(golds)) > 1


def test_multimodal_builders_store_images_by_reference(tmp_path):
    (tmp_path / "img.png").write_bytes(PNG)
    mm = [{"id": "validation_Art_1", "question": "<image 1> Which colour?", "options": "['red', 'blue']",
           "answer": "B", "image_1": str(tmp_path / "img.png"), "question_type": "multiple-choice"}]
    vp = [{"idx": 125, "question": "Which comes next?", "options": ["a", "b", "c", "d"], "answer": "c",
           "image": {"bytes": PNG, "path": None}, "category": "algorithmic"}]
    for bench, rows, iid in (("mmmu", mm, "validation_Art_1"), ("visualpuzzles", vp, "visualpuzzles_125")):
        src = tmp_path / f"{bench}.parquet"
        import pyarrow as pa
        import pyarrow.parquet as pq
        pq.write_table(pa.Table.from_pylist(rows), src)
        out, _ = build_pack(bench, src, tmp_path / f"{bench}.pack.jsonl")
        rec, = read_pack(out)
        part = rec["messages"][0]["content"][0]
        assert rec["instance_id"] == iid and part["type"] == "image_ref" and len(part["sha256"]) == 64
        assert (tmp_path / part["path"]).read_bytes() == PNG


def test_import_is_idempotent_and_checks_hashes(tmp_path):
    src = tmp_path / "a.jsonl"
    src.write_text(json.dumps(ROWS["aime25"][0]))
    out, _ = build_pack("aime25", src, tmp_path / "p.jsonl")
    con = connect(tmp_path / "w.duckdb")
    assert import_pack(con, out) == {"new": 1, "updated": 0, "unchanged": 0}
    assert import_pack(con, out) == {"new": 0, "updated": 0, "unchanged": 1}
    bad = tmp_path / "bad.jsonl"
    rec = json.loads(out.read_text())
    rec["reference"]["answer"] = "71"
    bad.write_text(json.dumps(rec))
    with pytest.raises(PackError, match="content_hash"):
        import_pack(con, bad)


def test_cli_build_import_list_and_dedup_run(tmp_path, chat_server):
    """ifeval (4 metric subdirs) and repobench (2 metric subdirs) each cost one call."""
    runner = CliRunner()
    db = str(tmp_path / "w.duckdb")
    for bench, sub in (("ifeval", None), ("repobench", "repobench_if_python")):
        src = tmp_path / f"{bench}.jsonl"
        src.write_text(json.dumps(ROWS[bench][0]))
        args = ["instances", "build", bench, "--from", str(src), "--out", str(tmp_path / f"{bench}.pack.jsonl")]
        r = runner.invoke(standalone_app(), args + (["--subdir", sub] if sub else []))
        assert r.exit_code == 0, r.output
        r = runner.invoke(standalone_app(), ["instances", "import", str(tmp_path / f"{bench}.pack.jsonl"), "--db", db])
        assert r.exit_code == 0 and "1 new" in r.output
    r = runner.invoke(standalone_app(), ["instances", "list", "--db", db])
    assert "ifeval" in r.output and "repobench_if_python" in r.output

    def script(body, srv):
        text = body["messages"][-1]["content"]
        return completion("y = f()" if "next line" in text else "a haiku\nwith no commas here", 30, 6)
    srv = chat_server(script)
    plan = [("ifeval", s, "0") for s in ("prompt_level_strict_acc", "inst_level_strict_acc",
                                          "prompt_level_loose_acc", "inst_level_loose_acc")]
    plan += [("repobench", "repobench_if_python_exact_match", "repobench_0"),
             ("repobench", "repobench_if_python_edit_similarity", "repobench_0")]
    con = connect(db)
    s = run_plan(con, "m2", plan, credentials=Credentials(srv.url, KEY),
                 options=RunOptions(progress=False, prices=PriceTable()))
    assert len(srv.requests) == 2 and s.paid_calls == 2 and s.cost_known is False
    rows = con.execute("SELECT benchmark, subdir, instance_id, score, metric_name FROM scores ORDER BY ALL").fetchall()
    assert rows == [("ifeval", s_, "0", 1.0, s_) for s_ in sorted(("inst_level_loose_acc", "inst_level_strict_acc",
                                                                    "prompt_level_loose_acc", "prompt_level_strict_acc"))] + [
        # one call serves all three metrics; codebleu of an identical single line is 0.7643 (its
        # data-flow part is empty), the value the published rows show for exact matches
        ("repobench", "repobench_if_python_codebleu", "repobench_0", pytest.approx(0.7643161313935813), "codebleu"),
        ("repobench", "repobench_if_python_edit_similarity", "repobench_0", 1.0, "edit_similarity"),
        ("repobench", "repobench_if_python_exact_match", "repobench_0", 1.0, "exact_match")]
