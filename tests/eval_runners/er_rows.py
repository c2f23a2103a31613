"""SYNTHETIC dataset rows, in each benchmark's public field layout, for any planned call key, with
a right and a wrong answer and the grades each must get (worked out by hand from the scoring
rules; see the comments). The end-to-end tests build packs from these rows with the real
builders, so rows carry ids exactly as the builders read them.

Every prompt holds a marker ``[[case:<benchmark>/<subdir>/<id>]]`` so the scripted server can
tell which call it is answering.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from eval_runners.packs import shuffled_choices
from eval_runners.registry import IFEVAL_SUBDIRS


@dataclass
class Case:
    benchmark: str
    subdir: str                    # call subdir (the builder's --subdir; '' for none)
    call_id: str
    row: dict
    right: str
    wrong: str
    # (subdir, instance_id) -> expected score, for the rows the grader writes; None: computed by
    # a library the test calls itself (codebleu)
    expect_right: dict = field(default_factory=dict)
    expect_wrong: dict = field(default_factory=dict)

    @property
    def marker(self) -> str:
        return marker(self.benchmark, self.subdir, self.call_id)


def marker(benchmark, subdir, call_id) -> str:
    return f"[[case:{benchmark}/{subdir}/{call_id}]]"


# ---- planning -----------------------------------------------------------------------------

PB_STATEMENT = ("[STATEMENT]\nAs initial conditions I have that, the red block is clear, the blue block is clear, "
                "the hand is empty, the red block is on top of the orange block, the blue block is on the table "
                "and the orange block is on the table.\nMy goal is to have that the orange block is on top of the "
                "red block.\n\nMy plan is as follows:\n\n[PLAN]")
PB_PLAN = ("unstack the red block from on top of the orange block\nput down the red block\n"
           "pick up the orange block\nstack the orange block on top of the red block\n[PLAN END]")


def _planbench(sub, cid, mk):
    row = {"instance_id": int(cid) if cid.isdigit() else cid, "query": f"{mk}\n{PB_STATEMENT}"}
    if sub == "task_3_plan_verification":
        row["ground_truth_plan"] = "The above plan is invalid. The following action at step 2 is not executable."
        return row, "Checking each step: the plan is invalid.", "Every step works, so the plan is valid.", \
            "llm_correct_binary"
    if sub == "task_7_plan_execution":
        row["ground_truth_plan"] = "the hand is empty, the red block is clear and the red block is on the table"
        return (row, "[ANSWER]\nthe red block is on the table, the hand is empty and the red block is clear",
                "[ANSWER]\nthe hand is empty", "llm_correct")
    row["ground_truth_plan"] = PB_PLAN
    # right: the 4-step optimal plan; wrong: the first step is not applicable (orange is covered)
    return row, f"[PLAN]\n{PB_PLAN}", "[PLAN]\npick up the orange block\nstack the orange block on top of the red block\n[PLAN END]", \
        "llm_correct"


ACP_DOMAIN = """(define (domain bw) (:requirements :strips)
 (:predicates (clear ?x) (ontable ?x) (handempty) (holding ?x) (on ?x ?y))
 (:action pick-up :parameters (?ob) :precondition (and (clear ?ob) (ontable ?ob) (handempty))
  :effect (and (holding ?ob) (not (clear ?ob)) (not (ontable ?ob)) (not (handempty))))
 (:action put-down :parameters (?ob) :precondition (holding ?ob)
  :effect (and (clear ?ob) (handempty) (ontable ?ob) (not (holding ?ob))))
 (:action stack :parameters (?ob ?underob) :precondition (and (clear ?underob) (holding ?ob))
  :effect (and (handempty) (clear ?ob) (on ?ob ?underob) (not (clear ?underob)) (not (holding ?ob))))
 (:action unstack :parameters (?ob ?underob) :precondition (and (on ?ob ?underob) (clear ?ob) (handempty))
  :effect (and (holding ?ob) (clear ?underob) (not (on ?ob ?underob)) (not (clear ?ob)) (not (handempty)))))"""
ACP_PROBLEM = """(define (problem p) (:domain bw) (:objects a b)
 (:init (clear a) (clear b) (ontable a) (ontable b) (handempty))
 (:goal (and (on a b))))"""

# subtask -> (answer field, question, right, wrong); in the state above only (pick-up a) and
# (pick-up b) apply, the optimal plan is (pick-up a) (stack a b), and a block can never sit on
# itself (picking it up clears 'clear').
ACP = {
    "acp_app_gen": (["(pick-up a)", "(pick-up b)"], "Which actions are applicable?",
                    "Answer: (pick-up b), (pick-up a)", "Answer: (pick-up a)"),
    "acp_prog_gen": ({"pos": ["(holding a)"], "neg": ["(clear a)", "(ontable a)", "(handempty)"]},
                     "What are the effects of (pick-up a)?",
                     "Answer: [(holding a)] [(handempty), (clear a), (ontable a)]", "Answer: [(holding a)] []"),
    "acp_val_gen": (1, 'What is the index of the first inapplicable action in "(pick-up a) (stack b a)"?',
                    "Answer: 1", "Answer: 0"),
    "acp_land_gen": ({"yes": ["(holding a)"], "no": ["(holding b)"]}, "Name a landmark.",
                     "Answer: (holding a)", "Answer: (holding b)"),
    "acp_nexta_gen": ({"yes": ["(pick-up a)"], "no": ["(pick-up b)"], "maybe": [], "opt": 2},
                      "Which action brings the goal closer?", "Answer: (pick-up a)", "Answer: (pick-up b)"),
    "acp_reach_gen": (["on a a"], "Name a fact that can never hold.", "Answer: (on a a)", "Answer: (on a b)"),
    "acp_areach_gen": (["(stack a a)"], "Name an action that can never be applied.",
                       "Answer: (stack a a)", "Answer: (pick-up a)"),
    "acp_just_gen": ([], 'Simplify the plan "(pick-up b) (put-down b) (pick-up a) (stack a b)" by removing actions.',
                     "Answer: (pick-up a) (stack a b)", "Answer: (pick-up b) (stack a b)"),
}


# ---- lifbench -----------------------------------------------------------------------------

LIST = "List to be retrieved:\n1. alpha-one\n2. beta-two\n3. gamma-three\nInstruction: {ask}"
LABEL = {"#Topic#": [["Cats sleep a lot.", 0, 0, True], ["Dogs bark.", 0, 0, False]]}
# subtask -> (prompt, param, label, right, wrong, grade of wrong); every right answer scores 1.0
LIF = {
    "list-single_query_id": (LIST.format(ask="Output element 2."), {"element": "beta-two"}, None,
                             "beta-two", "", 0.0),
    "list-offset_query_id": (LIST.format(ask="Output the element after element 2."),
                             {"bias": 1, "post_element": "gamma-three"}, None, "gamma-three", "", 0.0),
    "list-offset_query_element": (LIST.format(ask="Output the element before beta-two."),
                                  {"bias": -1, "pre_element": "alpha-one"}, None, "alpha-one", "", 0.0),
    "list-multi_query_id": (LIST.format(ask="Output elements 1 and 3 as a JSON list."),
                            {"elements": ["alpha-one", "gamma-three"]}, None, '["alpha-one", "gamma-three"]', "", 0.0),
    # wrong: an element on the wrong side: format 1 (exact element), faithful 1, position 0 -> 2/5
    "list-blur_offset_query_id": (LIST.format(ask="Output any element after element 2."), {"id": 2, "bias": 1},
                                  None, "gamma-three", "alpha-one", 0.4),
    "list-blur_offset_query_element": (LIST.format(ask="Output any element after beta-two."),
                                       {"id": 2, "bias": 1}, None, "gamma-three", "alpha-one", 0.4),
    "multidoc-batch_label": ("Label each document. {ask}", {"candidates": ["Apple", "Banana", "Cherry", "Date"],
                                                           "rule_key": "ABCD",
                                                           "doc_keys": [["title", "source"], ["source"]]},
                             2, '{"doc1": "Apple", "doc2": "Cherry"}', "", 0.0),
    "multidoc-find_dup_text": ('Find duplicates.\n\n Documents:\n{"id": "d1"} {"id": "d2"} {"id": "d3"}'
                               "\n\n Instructions: {ask}",
                               {"info_keys": "id", "dup_infos": [[{"id": "d1"}, {"id": "d3"}]]}, None,
                               '[["d1"], ["d3"]]', "", 0.0),
    "onedoc-extract": ("Extract the topic sentences. {ask}", {"type": "<#Topic#>"}, LABEL,
                       '["Cats sleep a lot."]', "", 0.0),
    "onedoc-repeat": ("Repeat one key sentence with its tag. {ask}", {"sep": " || ", "num": 1}, LABEL,
                      "Cats sleep a lot. || #Topic#", "", 0.0),
    # wrong: the other option: format 2 (right length, one option), correct 0.1 -> 2.1/5
    "onedoc-qa": ("Is 'Cats sleep a lot.' a key sentence? Answer Yes or No. {ask}",
                  {"options": ["Yes", "No"], "evidence": "Cats sleep a lot."}, LABEL, "Yes", "No", 0.42),
}


# ---- the cases ------------------------------------------------------------------------------

def case_for(benchmark: str, subdir: str, call_id: str) -> Case:
    """A synthetic row for the call ``(benchmark, subdir, call_id)`` (a registry call key)."""
    mk = marker(benchmark, subdir, call_id)
    one = lambda metric_rows, r, w: ({k: r for k in metric_rows}, {k: w for k in metric_rows})  # noqa: E731

    if benchmark == "planbench":
        row, right, wrong, _ = _planbench(subdir, call_id, mk)
        er, ew = one([(subdir, call_id)], 1.0, 0.0)
    elif benchmark == "acp_gen":
        answer, question, right, wrong = ACP[subdir]
        row = {"index": call_id, "context": f"{mk} A blocksworld state.", "question": question, "answer": answer,
               "PDDL_domain": ACP_DOMAIN, "PDDL_problem": ACP_PROBLEM}
        er, ew = one([(subdir, call_id)], 1.0, 0.0)
    elif benchmark == "lifbench":
        prompt, param, label, right, wrong, wrong_grade = LIF[subdir]
        text = prompt.replace("{ask}", mk) if "{ask}" in prompt else f"{prompt} {mk}"
        row = {"id": call_id, "prompt": text, "param": param, "label": label}
        er, ew = {(subdir, call_id): 1.0}, {(subdir, call_id): wrong_grade}
    elif benchmark == "livecodebench":
        if subdir in ("codegeneration", "selfrepair"):
            row = {"index": call_id, "question_id": f"q{call_id}", "question_content": f"{mk} Read n, print 2n.",
                   "starter_code": "", "metadata": "{}",
                   "public_test_cases": json.dumps([{"input": "3\n", "output": "6\n", "testtype": "stdin"}]),
                   "private_test_cases": json.dumps([{"input": "5\n", "output": "10\n", "testtype": "stdin"}])}
            right, wrong = "```python\nprint(int(input()) * 2)\n```", "```python\nprint(6)\n```"
        elif subdir == "testoutputprediction":
            row = {"index": call_id, "question_content": f"{mk} Double x.", "starter_code": "def double(x):\n    ...",
                   "function_name": "double", "test": json.dumps({"input": "3", "output": "6"})}
            right, wrong = "```python\nassert double(3) == 6\n```", "```python\nassert double(3) == 7\n```"
        else:
            row = {"index": call_id, "code": f"# {mk}\ndef f(x):\n    return [x] * 2", "input": "3",
                   "output": "[3, 3]", "function_name": "f"}
            right, wrong = "[ANSWER]assert f(3) == [3, 3][/ANSWER]", "[ANSWER]assert f(3) == 6[/ANSWER]"
        er, ew = one([(subdir, call_id)], 1.0, 0.0)
    elif benchmark == "logiqa":
        row = {"index": call_id, "context": f"{mk} All A are B.", "query": "Which follows?",
               "options": ["w", "x", "y", "z"], "correct_option": 2}
        # right: an explicit "answer is (C)" -> both filters; wrong: only a bare "(C)" -> the
        # flexible filter finds it, the strict one does not
        right, wrong = "So the answer is (C).", "Maybe (C)."
        er = {("", f"{call_id}_strict-match"): 1.0, ("", f"{call_id}_flexible-extract"): 1.0}
        ew = {("", f"{call_id}_strict-match"): 0.0, ("", f"{call_id}_flexible-extract"): 1.0}
    elif benchmark == "ifeval":
        row = {"index": call_id, "key": 1000 + int(call_id) if call_id.isdigit() else 0,
               "prompt": f"{mk} Write a short reply in lowercase without commas.",
               "instruction_id_list": ["punctuation:no_comma", "change_case:english_lowercase"],
               "kwargs": [{}, {}]}
        right, wrong = "a short reply in lowercase", "Hello, World"
        er, ew = one([(s, call_id) for s in IFEVAL_SUBDIRS], 1.0, 0.0)
    elif benchmark == "repobench":
        row = {"idx": int(call_id.rsplit("_", 1)[1]), "repo_name": "u/r", "file_path": "r/m.py",
               "context": [{"path": "r/u.py", "snippet": f"# {mk}\ndef f(): ..."}], "import_statement": "from r.u import f",
               "cropped_code": "x = 1\n", "next_line": "y = f()"}
        right, wrong = "y = f()", "z = g()"
        # wrong: LCS(' = ()') of 5 characters over 14 -> round(100 * 10 / 14) / 100 = 0.71
        er = {(f"{subdir}_exact_match", call_id): 1.0, (f"{subdir}_edit_similarity", call_id): 1.0,
              (f"{subdir}_codebleu", call_id): None}
        ew = {(f"{subdir}_exact_match", call_id): 0.0, (f"{subdir}_edit_similarity", call_id): 0.71,
              (f"{subdir}_codebleu", call_id): None}
    elif benchmark == "debugbench":
        lang, subtype, slug = call_id.split("_", 2)
        row = {"slug": slug, "language": lang, "subtype": subtype, "category": "logic error", "level": "easy",
               "question": f"{mk} Return a + b.", "examples": ["Input: a = 2, b = 3\nOutput: 5"],
               "solution": "class Solution:\n    def add(self, a: int, b: int) -> int:\n        return a + b",
               "buggy_code": "class Solution:\n    def add(self, a: int, b: int) -> int:\n        return a - b"}
        right = "```python\nclass Solution:\n    def add(self, a, b):\n        return a + b\n```"
        wrong = "```python\nclass Solution:\n    def add(self, a, b):\n        return a - b\n```"
        er, ew = one([("", call_id)], 1.0, 0.0)
    elif benchmark in ("mbpp_chat", "humaneval_chat"):
        if benchmark == "mbpp_chat":
            row = {"task_id": call_id, "text": f"{mk} Write add(a, b).", "test_list": ["assert add(1, 2) == 3"],
                   "test_setup_code": ""}
            right, wrong = "```python\ndef add(a, b):\n    return a + b\n```", "```python\ndef add(a, b):\n    return a\n```"
        else:
            row = {"task_id": call_id, "prompt": f"def inc(x):\n    \"\"\"{mk} add one\"\"\"\n",
                   "test": "def check(f):\n    assert f(1) == 2\n", "entry_point": "inc"}
            right, wrong = "```python\ndef inc(x):\n    return x + 1\n```", "```python\ndef inc(x):\n    return x\n```"
        er, ew = {}, {}                    # metric-subdir: filled per requested subdir by the caller
    elif benchmark in ("gpqa", "aime25"):
        if benchmark == "gpqa":
            row = {"id": call_id, "Question": f"{mk} Which gas is inert?", "Correct Answer": "Argon",
                   "Incorrect Answer 1": "Oxygen", "Incorrect Answer 2": "Chlorine", "Incorrect Answer 3": "Fluorine"}
            _, gold = shuffled_choices(f"gpqa/{call_id}", "Argon", ["Oxygen", "Chlorine", "Fluorine"])
            other = "A" if gold != "A" else "B"
            right, wrong = f"Answer: {gold}", f"Answer: {other}"
        else:
            row = {"id": call_id, "problem": f"{mk} Find x if x + 1 = 71.", "answer": "70"}
            right, wrong = "\\boxed{70}", "\\boxed{71}"
        er, ew = {}, {}
    else:
        raise KeyError(f"no synthetic rows for {benchmark}")
    return Case(benchmark, subdir, call_id, row, right, wrong, er, ew)


METRIC_SUBDIR = ("mbpp_chat", "humaneval_chat", "gpqa", "aime25")


def cases_for_plan(plan_rows) -> tuple[dict, dict]:
    """Plan rows -> ({call key: Case}, {call key: [targets (subdir, instance_id)]})."""
    from eval_runners.registry import get

    cases, targets = {}, {}
    for b, s, i in plan_rows:
        cs, cid = get(b).call_key(s, i)
        key = (b, cs, cid)
        if key not in cases:
            cases[key] = case_for(b, cs, cid)
        targets.setdefault(key, []).append((s, i))
        if b in METRIC_SUBDIR:
            cases[key].expect_right[(s, i)] = 1.0
            cases[key].expect_wrong[(s, i)] = 0.0
    return cases, targets


def wants_wrong(key) -> bool:
    """Deterministic: about one call in three is answered wrongly."""
    import hashlib
    return int(hashlib.sha256(repr(key).encode()).hexdigest(), 16) % 3 == 0


def build_and_import(tmp_path, db, cases) -> list[str]:
    """Write each (benchmark, subdir) group's rows as JSONL, build packs with `pace instances build`
    and import them with `pace instances import`; returns the pack paths."""
    from typer.testing import CliRunner

    from warehouse.cli import app

    groups: dict = {}
    for (b, cs, _), case in cases.items():
        groups.setdefault((b, cs), []).append(case.row)
    runner, packs = CliRunner(), []
    for (b, cs), rows in sorted(groups.items()):
        src = tmp_path / "rows" / f"{b}_{cs or 'all'}.jsonl"
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
        pack = tmp_path / "packs" / f"{b}_{cs or 'all'}.pack.jsonl"
        pack.parent.mkdir(parents=True, exist_ok=True)
        args = ["instances", "build", b, "--from", str(src), "--out", str(pack)]
        if cs:
            args += ["--subdir", cs]
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        packs.append(str(pack))
    res = runner.invoke(app, ["instances", "import", *packs, "--db", str(db)])
    assert res.exit_code == 0, res.output
    return packs


def script_for(cases, wrong_keys):
    """Chat-server script: find the case marker in the prompt, answer right or wrong."""
    from er_chat_server import completion, error, prompt_of

    by_marker = {c.marker: (k, c) for k, c in cases.items()}

    def script(body, srv):
        text = prompt_of(body)
        for mk, (k, c) in by_marker.items():
            if mk in text:
                return completion(c.wrong if k in wrong_keys else c.right, 50, 20)
        return error(400, "no case marker in the prompt")
    return script


def expected_scores(cases, targets, wrong_keys) -> dict:
    """{(benchmark, subdir, instance_id): expected score} for every planned row."""
    out = {}
    for key, case in cases.items():
        exp = case.expect_wrong if key in wrong_keys else case.expect_right
        for s, i in targets[key]:
            value = exp[(s, i)]
            if value is None:                                   # codebleu: the library is the oracle
                from codebleu import calc_codebleu
                got = case.wrong if key in wrong_keys else case.right
                value = calc_codebleu([case.row["next_line"]], [got], lang="python")["codebleu"]
            out[(key[0], s, i)] = value
    return out


def _main(argv=None) -> int:
    """``python tests/eval_runners/er_rows.py rows PLAN.csv OUT_DIR`` writes SYNTHETIC rows for every
    call of a plan (one JSONL per benchmark and subdir, in the public field layout, for
    ``pace instances build``); ``... serve PLAN.csv [PORT]`` answers those calls on 127.0.0.1
    (right, except about one in three) until interrupted. For the README walk-through and tests."""
    import sys
    import time
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from eval_runners.plan import load_plan_csv

    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2 or args[0] not in ("rows", "serve"):
        print(_main.__doc__)
        return 2
    cases, _ = cases_for_plan(load_plan_csv(args[1]))
    if args[0] == "rows":
        out = Path(args[2] if len(args) > 2 else "rows")
        out.mkdir(parents=True, exist_ok=True)
        groups: dict = {}
        for (b, cs, _), case in cases.items():
            groups.setdefault((b, cs), []).append(case.row)
        for (b, cs), rows in sorted(groups.items()):
            path = out / f"{b}__{cs}.jsonl"
            path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
            print(f"pace instances build {b} --from {path}" + (f" --subdir {cs}" if cs else "")
                  + f" --out {out / (b + '__' + cs + '.pack.jsonl')}")
        return 0
    from er_chat_server import ChatServer

    port = int(args[2]) if len(args) > 2 else 8765
    srv = ChatServer(script_for(cases, {k for k in cases if wants_wrong(k)}), port=port).start()
    print(f"answering {len(cases)} calls on {srv.url} (Ctrl-C to stop)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
