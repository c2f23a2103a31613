import pytest

from eval_runners import registry
from eval_runners.graders import get_grader
from eval_runners.graders.ifeval import CHECKS
from eval_runners.registry import Target
from eval_runners.sandbox import run_python


def g(name, ref, resp, cfg=None):
    return get_grader(name)(ref, resp, cfg)


@pytest.mark.parametrize("resp,score", [
    ("so the answer is \\boxed{042}", 1.0), ("Answer: 42", 1.0), ("I get 41, no wait 42.", 1.0),
    ("\\boxed{43}", 0.0), ("no idea", 0.0)])
def test_exact_number(resp, score):
    assert g("exact_number", {"answer": "42"}, resp) == {"exact_match": score}


@pytest.mark.parametrize("resp,score", [
    ("Reasoning...\nAnswer: C", 1.0), ("The answer is (C).", 1.0), ("**Answer:** C", 1.0),
    ("\\boxed{C}", 1.0), ("I pick (B)", 0.0), ("it must be the third option: blue", 1.0), ("", 0.0)])
def test_choice(resp, score):
    ref = {"answer": "C", "options": ["red", "green", "blue", "black"]}
    assert g("choice", ref, resp) == {"exact_match": score}


def test_logiqa_both_filters_from_one_call():
    spec = registry.get("logiqa")
    assert spec.call_key("", "255_strict-match") == spec.call_key("", "255_flexible-extract") == ("", "255")
    inst = {"subdir": "", "instance_id": "255", "grader": "choice_filters",
            "reference": {"answer": "B", "options": ["a", "b", "c", "d"]}}
    rows = spec.grade(inst, "I think (B) fits best", [Target("", "255_strict-match")])
    assert {(r.instance_id, r.metric_name, r.score) for r in rows} == {
        ("255_strict-match", "exact_match", 0.0), ("255_flexible-extract", "exact_match", 1.0)}


@pytest.mark.parametrize("ref,resp,score", [
    ({"answer": "B", "options": ["1", "2", "3"], "question_type": "multiple-choice"}, "Answer: B", 1.0),
    ({"answer": "B", "options": ["1", "2", "3"], "question_type": "multiple-choice"}, "(A) seems right", 0.0),
    ({"answer": "3.5", "question_type": "open"}, "The answer is 3.50", 1.0),
    ({"answer": ["Paris"], "question_type": "open"}, "Answer: paris", 1.0),
    ({"answer": "12", "question_type": "open"}, "Answer: 13", 0.0)])
def test_mmmu(ref, resp, score):
    assert g("mmmu", ref, resp) == {"mmmu_acc": score}


def test_ifeval_four_metrics_strict_and_loose():
    ref = {"instruction_id_list": ["punctuation:no_comma", "change_case:english_lowercase",
                                   "length_constraints:number_words", "detectable_format:title"],
           "kwargs": [{}, {}, {"num_words": 5, "relation": "at least"}, {}]}
    good = "<<a title>>\nthis reply has no commas at all"
    assert g("ifeval", ref, good) == {"prompt_level_strict_acc": 1.0, "inst_level_strict_acc": 1.0,
                                      "prompt_level_loose_acc": 1.0, "inst_level_loose_acc": 1.0}
    # a first line "Sure, Here:" breaks no_comma and lowercase strictly; loose (per instruction,
    # any of the variants without first/last line or '*') forgives it
    r = g("ifeval", ref, "Sure, Here:\n<<t>> and then some more words here")
    assert r["inst_level_strict_acc"] == 0.5 and r["prompt_level_strict_acc"] == 0.0
    assert r["inst_level_loose_acc"] == 1.0 and r["prompt_level_loose_acc"] == 1.0
    r = g("ifeval", ref, "Sure, Here:\n<<t>> and, then some more words here")
    assert r["inst_level_loose_acc"] == 0.75 and r["prompt_level_loose_acc"] == 0.0
    spec = registry.get("ifeval")
    rows = spec.grade({"subdir": "", "instance_id": "7", "grader": "ifeval", "reference": ref}, good,
                      [Target("prompt_level_strict_acc", "7")])
    assert sorted((r.subdir, r.metric_name) for r in rows) == sorted((s, s) for s in registry.IFEVAL_SUBDIRS)
    assert spec.instance_unmet({"reference": {"instruction_id_list": ["language:response_language"]}})


@pytest.mark.parametrize("iid,kw,text,ok", [
    ("keywords:existence", {"keywords": ["cat"]}, "a Cat sat", True),
    ("keywords:forbidden_words", {"forbidden_words": ["dog"]}, "a dog", False),
    ("keywords:frequency", {"keyword": "x", "frequency": 2, "relation": "less than"}, "x", True),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "a\n***\nb", True),
    ("detectable_format:json_format", {}, '```json\n{"a": 1}\n```', True),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "* a\n* b", True),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "*one* and *two*", True),
    ("startend:end_checker", {"end_phrase": "Any other questions?"}, "Hi. Any other questions?", True),
    ("startend:quotation", {}, '"quoted"', True),
    ("detectable_content:postscript", {"postscript_marker": "P.S."}, "hi\nP.S. bye", True),
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "[a] and [b]", True),
    ("combination:two_responses", {}, "one\n******\ntwo", True),
    ("change_case:english_capital", {}, "LOUD", True)])
def test_ifeval_checks(iid, kw, text, ok):
    assert bool(CHECKS[iid](text, kw)) is ok


def test_repobench_three_metrics_from_one_call():
    spec = registry.get("repobench")
    assert spec.call_key("repobench_if_python_edit_similarity", "repobench_3") == ("repobench_if_python", "repobench_3")
    inst = {"subdir": "repobench_if_python", "instance_id": "repobench_3", "grader": "repobench",
            "reference": {"next_line": "x = foo(1)"}}
    rows = {r.subdir: r for r in spec.grade(inst, "```python\n# comment\nx = foo(1)\n```", [])}
    assert rows["repobench_if_python_exact_match"].score == 1.0
    assert rows["repobench_if_python_edit_similarity"].score == 1.0
    assert rows["repobench_if_python_exact_match"].metric_name == "exact_match"
    m = g("repobench", {"next_line": "abcd"}, "abxd")
    assert m["exact_match"] == 0.0 and m["edit_similarity"] == pytest.approx(0.75)
    # codebleu rows are requested only if the extra is installed; otherwise the run refuses up front
    reqs = spec.requirements("repobench_if_python", [Target("repobench_if_python_codebleu", "r")])
    assert any("codebleu" in r.modules for r in reqs)


def test_planbench_task3_and_task7():
    ref3 = {"ground_truth": "The above plan is invalid. The following action ..."}
    assert g("planbench_verification", ref3, "Checking... the plan is invalid.") == {"llm_correct_binary": 1.0}
    assert g("planbench_verification", ref3, "The plan is valid") == {"llm_correct_binary": 0.0}
    assert g("planbench_verification", ref3, "hmm") == {"llm_correct_binary": None}   # unscorable, no row
    ref7 = {"ground_truth": "the red block is clear, the hand is empty, the red block is on top of the blue block"}
    ok = "[ANSWER]\nthe hand is empty and the red block is on top of the blue block and the red block is clear"
    assert g("planbench_execution", ref7, ok) == {"llm_correct": 1.0}
    assert g("planbench_execution", ref7, "[ANSWER] the hand is empty, the red block is clear") == {"llm_correct": 0.0}
    spec = registry.get("planbench")
    row, = spec.grade({"subdir": "task_3_plan_verification", "instance_id": "4",
                       "grader": "planbench_verification", "reference": ref3}, "plan is invalid", [])
    assert (row.metric_name, row.score) == ("llm_correct_binary", 1.0)
    assert spec.requirements("task_1_plan_generation")[-1].modules == ("unified_planning",)
    assert not registry.unmet(spec.requirements("task_7_plan_execution"), vision=False)


BFCL_REF = {"function": [{"name": "calc_area", "parameters": {"type": "dict", "properties": {
    "base": {"type": "integer"}, "height": {"type": "integer"}, "unit": {"type": "string"}},
    "required": ["base", "height"]}}],
    "ground_truth": [{"calc_area": {"base": [10], "height": [5], "unit": ["units", ""]}}]}


@pytest.mark.parametrize("resp,score", [
    ("[calc_area(base=10, height=5)]", 1.0), ("calc_area(base=10, height=5, unit='units')", 1.0),
    ("```python\n[calc_area(height=5, base=10)]\n```", 1.0), ("[calc_area(base=10)]", 0.0),
    ("[calc_area(base=10, height=6)]", 0.0), ("[calc_area(base='10', height=5)]", 0.0),
    ("[calc_area(base=10, height=5, colour='red')]", 0.0), ("[other(base=10, height=5)]", 0.0),
    ("I would call calc_area", 0.0)])
def test_bfcl_simple_ast(resp, score):
    assert g("bfcl_ast", BFCL_REF, resp) == {"accuracy": score}


def test_bfcl_other_categories_declared():
    spec = registry.get("bfcl")
    for sub in ("simple", "live_simple", "multiple", "parallel", "parallel_multiple", "irrelevance"):
        assert not registry.unmet(spec.requirements(sub), vision=False), sub
    assert registry.unmet(spec.requirements("agentic_web_search_base"), vision=False) == [
        "needs an outside service: web search API"]
    for sub in ("multi_turn_base", "simple_java", "javascript", "agentic_memory_kv"):
        assert registry.unmet(spec.requirements(sub), vision=False)[0].startswith("unsupported:"), sub


def test_sandbox_limits():
    assert run_python("print(sum(range(10)))").stdout.strip() == "45"
    r = run_python("import socket\nsocket.create_connection(('127.0.0.1', 9))", timeout=5)
    assert not r.ok and "disabled" in r.stderr or "network" in r.stderr.lower() or r.returncode != 0
    r = run_python("while True: pass", timeout=1)
    assert r.timed_out and not r.ok
    r = run_python("x = bytearray(2 * 1024**3)", memory_mb=256)
    assert not r.ok and "MemoryError" in r.stderr
    r = run_python("import os; print(os.getcwd()); print(sorted(os.environ))")
    assert "pace-sbx-" in r.stdout and "API_KEY" not in r.stdout


def test_code_graders():
    he = {"test": "def check(f):\n    assert f(2) == 4\n", "entry_point": "double"}
    assert g("code_function", he, "```python\ndef double(x):\n    return 2 * x\n```")["pass@1"] == 1.0
    assert g("code_function", he, "```python\ndef double(x):\n    return x\n```")["pass@1"] == 0.0
    mbpp = {"test_list": ["assert add(1, 2) == 3"]}
    assert g("code_function", mbpp, "```python\ndef add(a, b): return a + b\n```")["pass_at_1"] == 1.0
    lcb = {"tests": [{"input": "3\n", "output": "6\n", "testtype": "stdin"},
                     {"input": "5\n", "output": "10\n", "testtype": "stdin"}]}
    assert g("code_tests", lcb, "```python\nprint(int(input()) * 2)\n```") == {"pass@1": 1.0}
    assert g("code_tests", lcb, "```python\nprint(6)\n```") == {"pass@1": 0.0}
    fn = {"tests": [{"input": "[1, 2]\n3", "output": "[1, 2, 3]", "testtype": "functional"}], "fn_name": "app"}
    sol = "```python\nclass Solution:\n    def app(self, xs, y):\n        return xs + [y]\n```"
    assert g("code_tests", fn, sol) == {"pass@1": 1.0}
