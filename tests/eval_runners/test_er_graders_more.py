"""Graders of the benchmarks the fits select, on hand-made instances whose right grade is known
(right, wrong, malformed and edge-case answers), and the registry's declarations."""
import importlib.util

import pytest

from er_rows import ACP, ACP_DOMAIN, ACP_PROBLEM, LABEL, LIF, LIST, PB_PLAN, PB_STATEMENT
from eval_runners import registry
from eval_runners.builders import leetcode_tests
from eval_runners.graders import get_grader
from eval_runners.graders.planbench import statement_problem, text_to_plan
from eval_runners.graders.strips import Task
from eval_runners.registry import Target


def g(name, ref, resp, cfg=None):
    return get_grader(name)(ref, resp, cfg)


# ---- planbench --------------------------------------------------------------------------------

def _pb_ref():
    init, goal = statement_problem(PB_STATEMENT)
    return {"init": init, "goal": goal, "ground_truth_plan": PB_PLAN}


def test_planbench_statement_and_plan_parsing():
    init, goal = statement_problem("[STATEMENT]\nold one\n" + PB_STATEMENT)
    assert set(init) == {"(clear red)", "(clear blue)", "(handempty)", "(on red orange)", "(ontable blue)",
                         "(ontable orange)"} and goal == ["(on orange red)"]
    assert text_to_plan("Let me think.\n[PLAN]\n1. Unstack the red block from on top of the orange block.\n"
                        "2. put down the red block\n(pick-up orange)\n[PLAN END]\nstack the x block on the y block") == [
        "(unstack red orange)", "(put-down red)", "(pick-up orange)"]
    with pytest.raises(ValueError):
        statement_problem("no statement here")


@pytest.mark.parametrize("resp,cfg,score", [
    (PB_PLAN, {}, 1.0),                                                      # valid and optimal
    (PB_PLAN, {"optimal": True}, 1.0),
    ("(unstack red orange)\n(put-down red)\n(pick-up orange)\n(stack orange red)", {}, 1.0),   # PDDL form
    ("unstack the red block from on top of the orange block\nput down the red block\npick up the blue block\n"
     "put down the blue block\npick up the orange block\nstack the orange block on top of the red block", {}, 1.0),
    ("unstack the red block from on top of the orange block\nput down the red block\npick up the blue block\n"
     "put down the blue block\npick up the orange block\nstack the orange block on top of the red block",
     {"optimal": True}, 0.0),                                                # valid but 6 steps, task_2 needs 4
    ("pick up the orange block\nstack the orange block on top of the red block", {}, 0.0),   # inapplicable
    ("unstack the red block from on top of the orange block\nput down the red block", {}, 0.0),  # goal not reached
    ("unstack the purple block from on top of the orange block", {}, 0.0),    # unknown object
    ("I cannot solve this.", {}, 0.0), ("", {}, 0.0)])
def test_planbench_plan_validation(resp, cfg, score):
    assert g("planbench_plan", _pb_ref(), resp, cfg) == {"llm_correct": score}


def test_strips_task_queries():
    task = Task.from_pddl(ACP_DOMAIN, ACP_PROBLEM)
    assert {o.name for o in task.applicable(task.init)} == {"(pick-up a)", "(pick-up b)"}
    assert task.shortest_plan_length() == 2
    assert task.shortest_plan_length(goal=frozenset({"(on a a)"})) is None
    assert task.first_failure(["(pick-up a)", "(stack b a)"]) == 1
    assert task.validates(["pick-up(a)", "(stack a, b)"]) and not task.validates(["(pick-up a)"])


# ---- acp_gen ----------------------------------------------------------------------------------

def _acp_ref(sub, answer=None, question=None):
    a, q, _, _ = ACP[sub]
    return {"answer": a if answer is None else answer, "question": q if question is None else question,
            "PDDL_domain": ACP_DOMAIN, "PDDL_problem": ACP_PROBLEM}


@pytest.mark.parametrize("sub", sorted(ACP))
def test_acp_right_wrong_and_malformed(sub):
    _, _, right, wrong = ACP[sub]
    cfg = {"subtask": sub}
    assert g("acp_gen", _acp_ref(sub), "Some reasoning (pick-up b) first.\n" + right, cfg) == {"score": 1.0}
    assert g("acp_gen", _acp_ref(sub), wrong, cfg) == {"score": 0.0}
    assert g("acp_gen", _acp_ref(sub), "Answer:", cfg) == {"score": 0.0}
    assert g("acp_gen", _acp_ref(sub), "", cfg) == {"score": 0.0}


def test_acp_searches_when_the_answer_is_not_stored():
    # next action: status unknown ('maybe') -> an optimal plan from the next state is one step shorter
    maybe = {"yes": [], "no": [], "maybe": ["(pick-up a)", "(pick-up b)"]}
    assert g("acp_gen", _acp_ref("acp_nexta_gen", maybe), "Answer: (pick-up a)", {"subtask": "acp_nexta_gen"})["score"] == 1.0
    assert g("acp_gen", _acp_ref("acp_nexta_gen", maybe), "Answer: (pick-up b)", {"subtask": "acp_nexta_gen"})["score"] == 0.0
    # reachability: a fact outside the stored list is proven unreachable by exhaustive search
    ref = _acp_ref("acp_reach_gen", ["holding c"])
    assert g("acp_gen", ref, "Answer: (on b b)", {"subtask": "acp_reach_gen"})["score"] == 1.0
    assert g("acp_gen", ref, "Answer: (holding b)", {"subtask": "acp_reach_gen"})["score"] == 0.0
    # "none" is right only when the reference says there is nothing to find
    assert g("acp_gen", _acp_ref("acp_reach_gen", []), "Answer: None", {"subtask": "acp_reach_gen"})["score"] == 1.0
    assert g("acp_gen", _acp_ref("acp_land_gen", {"yes": [], "no": []}), "Answer: none",
             {"subtask": "acp_land_gen"})["score"] == 1.0
    # justification: not a subsequence of the question's plan
    assert g("acp_gen", _acp_ref("acp_just_gen"), "Answer: (pick-up a) (stack a b) (pick-up b)",
             {"subtask": "acp_just_gen"})["score"] == 0.0
    with pytest.raises(ValueError, match="unknown acp_gen group"):
        g("acp_gen", {"answer": 1}, "Answer: 1", {"subtask": "acp_nope"})


# ---- lifbench ---------------------------------------------------------------------------------

def _lif_ref(task, prompt=None, param=None, label=None):
    p, par, lab, *_ = LIF[task]
    return {"task": task, "prompt": (prompt or p).replace("{ask}", "go"), "param": param or par,
            "label": lab if label is None else label}


@pytest.mark.parametrize("task", sorted(LIF))
def test_lifbench_right_wrong_empty(task):
    _, _, _, right, wrong, wrong_grade = LIF[task]
    assert g("lifbench", _lif_ref(task), right)["total_score"] == pytest.approx(1.0)
    assert g("lifbench", _lif_ref(task), wrong)["total_score"] == pytest.approx(wrong_grade)
    assert g("lifbench", _lif_ref(task), "   ")["total_score"] == 0.0


@pytest.mark.parametrize("task,answer,grade", [
    # two elements named: faithful 1, correct 2, format 0 (too long) -> 3/4
    ("list-single_query_id", "beta-two and gamma-three", 0.75),
    # right elements in the wrong order: format 2, count 3, correct 3, order 0 -> 8/10
    ("list-multi_query_id", '["gamma-three", "alpha-one"]', 0.8),
    # not a JSON list, one right element named: format 0, count 1 of 2 -> 1, correct 1.5, order 1 -> 3.5/10
    ("list-multi_query_id", "alpha-one", 0.35),
    # labels: doc1 wrong (Cherry, rule says Apple), doc2 right: 3 + 1.5 + 3 + 5 of 14
    ("multidoc-batch_label", '{"doc1": "Cherry", "doc2": "Cherry"}', 12.5 / 14),
    # the non-key sentence quoted too: format 4, correct 3.5/2, order 4, faithful 2 of 14
    ("onedoc-extract", '["Cats sleep a lot.", "Dogs bark."]', 11.75 / 14),
    # no separator: format 0.5, faithful 2, hits 2, count 2 + 1/3, attribute 0 of 14
    ("onedoc-repeat", "Cats sleep a lot. #Topic#", (0.5 + 2 + 2 + 7 / 3) / 14),
    # both options named: format 0.5 + 0.5, correct 0.5 of 5
    ("onedoc-qa", "Yes or No", 0.3),
])
def test_lifbench_partial_credit(task, answer, grade):
    assert g("lifbench", _lif_ref(task), answer)["total_score"] == pytest.approx(grade)


def test_lifbench_registry_writes_total_score_under_the_subtask():
    spec = registry.get("lifbench")
    assert spec.call_key("onedoc-qa", "11_4_6") == ("onedoc-qa", "11_4_6")
    with pytest.raises(ValueError):
        spec.call_key("onedoc-nope", "1")
    ref = _lif_ref("onedoc-qa")
    row, = spec.grade({"subdir": "onedoc-qa", "instance_id": "11_4_6", "grader": "lifbench", "reference": ref},
                      "Yes", [Target("onedoc-qa", "11_4_6")])
    assert (row.subdir, row.metric_name, row.score) == ("onedoc-qa", "total_score", 1.0)


# ---- livecodebench, debugbench --------------------------------------------------------------

@pytest.mark.parametrize("resp,score", [
    ("```python\nassert double(3) == 6\n```", 1.0), ("The value is:\n```python\nassert double(3) == 6.0\n```", 1.0),
    ("```python\nassert double(3) == 7\n```", 0.0), ("```python\nassert double(3) == __import__('os')\n```", 0.0),
    ("", 0.0), ("6", 1.0)])
def test_lcb_test_output_prediction(resp, score):
    assert g("lcb_test_output", {"output": "6"}, resp) == {"pass@1": score}


@pytest.mark.parametrize("resp,score", [
    ("[ANSWER]assert f(3) == [3, 3][/ANSWER]", 1.0), ("Step by step... [ANSWER]assert f(3) == [3,3][/ANSWER]", 1.0),
    ("[ANSWER]assert f(3) == 6[/ANSWER]", 0.0), ("[ANSWER]assert f(3) == [3, 3] or True[/ANSWER]", 0.0),   # not a plain comparison
    ("[ANSWER]assert f(3) == (lambda: [3, 3])()[/ANSWER]", 1.0), ("[ANSWER][/ANSWER]", 0.0),
    ("[ANSWER]assert f(3) == syntax error here[/ANSWER]", 0.0)])
def test_lcb_code_execution(resp, score):
    # executed, as published: an expression that evaluates to the output passes
    assert g("lcb_execution", {"code": "def f(x):\n    return [x] * 2", "output": "[3, 3]"}, resp) == {"pass@1": score}


def test_lcb_code_execution_runs_in_the_sandbox():
    r = g("lcb_execution", {"code": "def f(x):\n    return x", "output": "1"},
          "[ANSWER]assert f(1) == [x for x in iter(int, 1)][/ANSWER]", {"timeout": 1})
    assert r == {"pass@1": 0.0}                                             # endless loop: killed, fails


DEBUG_ROW = {"slug": "add-two", "language": "python3", "subtype": "condition error",
             "examples": ["Input: a = 2, b = 3\nOutput: 5\nExplanation: 2 + 3", "Input: a = [1,2], b = [3]\nOutput: [1,2,3]"],
             "solution": "class Solution:\n    def add(self, a, b):\n        return a + b"}


def test_debugbench_tests_from_examples_and_grades():
    tests = leetcode_tests(DEBUG_ROW)
    assert tests == [{"method": "add", "kwargs": {"a": 2, "b": 3}, "output": 5},
                     {"method": "add", "kwargs": {"a": [1, 2], "b": [3]}, "output": [1, 2, 3]}]
    ref = {"tests": tests}
    ok = "Fixed:\n```python\nclass Solution:\n    def add(self, a: int, b: int) -> int:\n        return a + b\n```"
    assert g("debugbench_python", ref, ok) == {"debug_accuracy": 1.0}
    assert g("debugbench_python", ref, ok.replace("a + b", "a - b if isinstance(a, int) else a + b")) == {
        "debug_accuracy": 0.0}
    assert g("debugbench_python", ref, "```python\nclass Solution:\n    def add(self, a, b):\n        raise ValueError\n```"
             ) == {"debug_accuracy": 0.0}
    assert g("debugbench_python", ref, "no code at all") == {"debug_accuracy": 0.0}
    # linked structures or unreadable examples: no local tests (the run then refuses the call)
    assert leetcode_tests({**DEBUG_ROW, "solution": "class Solution:\n    def f(self, head: ListNode): ..."}) == []
    assert leetcode_tests({**DEBUG_ROW, "examples": ["Input: a = foo(), b = 1\nOutput: 2"]}) == []


def test_debugbench_declares_the_leetcode_judge_for_other_languages():
    spec = registry.get("debugbench")
    assert not registry.unmet(spec.requirements("", [Target("", "python3_condition error_x")]), vision=False)
    assert registry.unmet(spec.requirements("", [Target("", "cpp_condition error_x")]), vision=False) == [
        "needs an outside service: LeetCode online judge (personal session cookies)"]
    assert spec.instance_unmet({"grader": "debugbench_python", "reference": {"tests": []}})


# ---- visualwebbench, bfcl, repobench, infobench -----------------------------------------------

@pytest.mark.parametrize("ref,resp,out", [
    ({"task_type": "web_caption", "answer": "the cat sat on the mat"}, "a cat sat on a mat", {"rouge_l": 2 / 3}),
    ({"task_type": "heading_ocr", "answer": "Welcome Home"}, "", {"rouge_l": 0.0}),
    ({"task_type": "webqa", "answer": ["New York City", "NYC"]}, "It is in new york.", {"f1": 0.5}),   # p 2/5, r 2/3
    ({"task_type": "webqa", "answer": ["NYC"]}, "nyc", {"f1": 1.0}),
    ({"task_type": "element_ground", "answer": 2}, "The box is C.\nAnswer: C", {"correct": 1.0}),
    ({"task_type": "action_prediction", "answer": "B"}, "Answer: D", {"correct": 0.0}),
])
def test_visualwebbench(ref, resp, out):
    assert g("visualwebbench", ref, resp) == pytest.approx(out)


def test_visualwebbench_task_from_the_id():
    assert g("visualwebbench", {"answer": "A"}, "Answer: A", {"instance_id": "action_ground_7"}) == {"correct": 1.0}
    with pytest.raises(ValueError):
        g("visualwebbench", {"answer": "A"}, "A", {"instance_id": "mystery_1"})


PAR_REF = {"category": "parallel", "function": [{"name": "area", "parameters": {"type": "dict", "properties": {
    "r": {"type": "integer"}}, "required": ["r"]}}],
    "ground_truth": [{"area": {"r": [1]}}, {"area": {"r": [2]}}]}


@pytest.mark.parametrize("ref,resp,score", [
    (PAR_REF, "[area(r=2), area(r=1)]", 1.0), (PAR_REF, "[area(r=1)]", 0.0),
    (PAR_REF, "[area(r=1), area(r=1)]", 0.0), (PAR_REF, "[area(r=1), area(r=2), area(r=3)]", 0.0),
    ({**PAR_REF, "category": "irrelevance"}, "None of the functions fit.", 1.0),
    ({**PAR_REF, "category": "irrelevance"}, "[area(r=1)]", 0.0),
    ({**PAR_REF, "category": "live_relevance"}, "[area(r=5)]", 1.0)])
def test_bfcl_parallel_and_relevance(ref, resp, score):
    assert g("bfcl_ast", ref, resp) == {"accuracy": score}


def test_repobench_edit_similarity_in_whole_percent():
    m = g("repobench", {"next_line": "y = f()"}, "z = g()")
    assert m["exact_match"] == 0.0 and m["edit_similarity"] == 0.71            # 2 * 5 / 14 = 0.714...


def test_infobench_is_an_outside_service_not_unsupported():
    spec = registry.get("infobench")
    why = registry.unmet(spec.requirements(""), vision=False)
    assert why and not any(w.startswith("unsupported") for w in why)
    assert any("outside service" in w for w in why)


def test_missing_extra_is_refused_by_name(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "unified_planning" else real(n, *a))
    assert registry.unmet(registry.get("acp_gen").requirements("acp_app_gen"), vision=False) == [
        "needs the Python package `unified_planning` (optional extra; not installed)"]


def test_every_source_benchmark_of_the_published_tree_has_a_grader_or_a_declared_service():
    """The 17 source benchmarks of the published tree: each maps to a grader; what is not
    gradable offline says which outside service it needs."""
    published = ("planbench", "lifbench", "repobench", "ifeval", "bfcl", "livecodebench", "logiqa", "debugbench",
                 "acp_gen", "aime25", "mmmu", "visualpuzzles", "visualwebbench", "gpqa", "humaneval_chat",
                 "mbpp_chat", "infobench")
    for b in published:
        spec = registry.get(b)
        if spec.grader is None:
            assert any(r.services for r in [spec.requires]), b
        else:
            get_grader(spec.grader)
    assert LIST and LABEL                                               # the shared fixtures are importable
