"""planbench (blocksworld), graded as the published runner does (runners.md §3):

* task_3_plan_verification: the "plan is valid / invalid" verdict of the response against the
  reference's; either side unparseable -> unscorable (no row). Metric ``llm_correct_binary``.
* task_7_plan_execution: the final state in the response, compared as a set of facts with the
  reference state. Metric ``llm_correct``.
* every other task: the response's plan (natural-language blocksworld actions, or PDDL actions)
  must solve the PDDL problem rebuilt from the query's last ``[STATEMENT]`` (initial conditions
  and goal) in the 4-operator blocksworld domain; task_2 also needs the ground-truth plan's
  length. Validation is done on a grounded STRIPS task built with unified-planning
  (:mod:`eval_runners.graders.strips`) instead of the external VAL binary. An unparseable plan
  scores 0, as published. Metric ``llm_correct``.
"""
from __future__ import annotations

import re

from eval_runners.graders import grader

# The standard untyped 4-operator blocksworld (the domain PlanBench's blocksworld instances use).
DOMAIN = """
(define (domain blocksworld-4ops)
  (:requirements :strips)
  (:predicates (clear ?x) (ontable ?x) (handempty) (holding ?x) (on ?x ?y))
  (:action pick-up
    :parameters (?ob)
    :precondition (and (clear ?ob) (ontable ?ob) (handempty))
    :effect (and (holding ?ob) (not (clear ?ob)) (not (ontable ?ob)) (not (handempty))))
  (:action put-down
    :parameters (?ob)
    :precondition (holding ?ob)
    :effect (and (clear ?ob) (handempty) (ontable ?ob) (not (holding ?ob))))
  (:action stack
    :parameters (?ob ?underob)
    :precondition (and (clear ?underob) (holding ?ob))
    :effect (and (handempty) (clear ?ob) (on ?ob ?underob) (not (clear ?underob)) (not (holding ?ob))))
  (:action unstack
    :parameters (?ob ?underob)
    :precondition (and (on ?ob ?underob) (clear ?ob) (handempty))
    :effect (and (holding ?ob) (clear ?underob) (not (on ?ob ?underob)) (not (clear ?ob)) (not (handempty)))))
"""

_B = r"(?:the\s+)?([a-z0-9_-]+)\s+block"
_ACTIONS = (
    (re.compile(rf"\bunstack\s+{_B}\s+from\s+(?:on\s+)?(?:top\s+of\s+)?{_B}"), "unstack"),
    (re.compile(rf"\bstack\s+{_B}\s+(?:on\s+)?(?:top\s+of\s+)?{_B}"), "stack"),
    (re.compile(rf"\bpick\s*-?\s*up\s+{_B}"), "pick-up"),
    (re.compile(rf"\bput\s*-?\s*down\s+{_B}"), "put-down"),
)
_PDDL_ACTION = re.compile(r"\(\s*(pick-up|put-down|stack|unstack)((?:\s+[a-z0-9_-]+)+)\s*\)")


# ---- text -> facts / plan ------------------------------------------------------------------

def fact_of(phrase: str) -> str | None:
    """One natural-language blocksworld fact -> a PDDL atom, or None."""
    p = " ".join(phrase.lower().replace(".", " ").split())
    if not p:
        return None
    if re.search(r"\bhand is (?:currently )?empty\b", p):
        return "(handempty)"
    m = re.search(rf"{_B} is clear\b", p)
    if m:
        return f"(clear {m.group(1)})"
    m = re.search(rf"{_B} is on top of {_B}", p)
    if m:
        return f"(on {m.group(1)} {m.group(2)})"
    m = re.search(rf"{_B} is on the table\b", p)
    if m:
        return f"(ontable {m.group(1)})"
    m = re.search(rf"(?:holding|hold) {_B}", p)
    if m:
        return f"(holding {m.group(1)})"
    return None


def facts_of(text: str) -> list[str]:
    parts = re.split(r",|\band\b|;|\n", text)
    return [f for f in (fact_of(p) for p in parts) if f]


def statement_problem(query: str) -> tuple[list[str], list[str]]:
    """(init atoms, goal atoms) from the last [STATEMENT] block of a planbench query."""
    block = query.rsplit("[STATEMENT]", 1)[-1]
    m = re.search(r"initial conditions I have that,?(.*?)My goal is to have that(.*?)(?:\n\s*\n|My plan is|\[PLAN|$)",
                  block, re.S | re.I)
    if not m:
        raise ValueError("no 'As initial conditions ... My goal is to have that ...' in the last [STATEMENT]")
    init, goal = facts_of(m.group(1)), facts_of(m.group(2))
    if not init or not goal:
        raise ValueError("could not read the initial conditions or the goal")
    return init, goal


def problem_pddl(init: list[str], goal: list[str]) -> str:
    objs = sorted({w for a in init + goal for w in a.strip("()").split()[1:]})
    return (f"(define (problem planbench) (:domain blocksworld-4ops) (:objects {' '.join(objs)})\n"
            f"  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))")


def text_to_plan(text: str) -> list[str]:
    """Actions in order from a response: after the last [PLAN] marker if any, up to [PLAN END];
    each line may hold a natural-language action or a PDDL one."""
    t = text.lower()
    if "[plan]" in t:
        t = t.rsplit("[plan]", 1)[-1]
    t = t.split("[plan end]")[0]
    plan = []
    for line in t.splitlines():
        line = line.strip()
        m = _PDDL_ACTION.search(line)
        if m:
            plan.append("(" + m.group(1) + " " + " ".join(m.group(2).split()) + ")")
            continue
        for rx, name in _ACTIONS:
            m = rx.search(line)
            if m:
                plan.append("(" + " ".join([name, *m.groups()]) + ")")
                break
    return plan


# ---- graders -------------------------------------------------------------------------------

def verdict(text: str) -> bool | None:
    """True for 'plan is valid', False for 'plan is invalid/not valid'; the last statement wins."""
    low = text.lower()
    hits = [(m.start(), m.group(1) is None and m.group(2) is None)
            for m in re.finditer(r"plan\s+is\s+(in)?(not\s+)?valid", low)]
    if not hits:
        return None
    return max(hits)[1]


@grader("planbench_verification", "1")
def grade_task3(ref: dict, response: str, config: dict) -> dict:
    gold = ref.get("valid")
    if gold is None:
        gold = verdict(str(ref.get("ground_truth", "")))
    got = verdict(response)
    return {"llm_correct_binary": None if gold is None or got is None else float(got == gold)}


def state_facts(text: str) -> frozenset[str]:
    low = text.lower()
    for marker in ("[answer]", "resulting state", "final state", "the state is"):
        i = low.rfind(marker)
        if i >= 0:
            low = low[i + len(marker):]
            break
    low = low.split("[statement]")[0]
    facts = set()
    for part in re.split(r",|;|\band\b|\n|\.(?!\d)", low):
        f = re.sub(r"\b(the|is|are|block)\b", " ", part)
        f = re.sub(r"[^a-z0-9 ]", " ", f)
        f = " ".join(f.split())
        if f and f not in ("after", "of", "following", "state", "resulting state", "would be", "be"):
            facts.add(f)
    return frozenset(facts)


@grader("planbench_execution", "1")
def grade_task7(ref: dict, response: str, config: dict) -> dict:
    gold = state_facts(ref["ground_truth"])
    got = state_facts(response)
    if not gold:
        return {"llm_correct": None}
    return {"llm_correct": float(got == gold)}


@grader("planbench_plan", "1")
def grade_plan(ref: dict, response: str, config: dict) -> dict:
    """Tasks 1, 2, 4, 5, 6, 8_x: the response's plan must reach the goal (task_2: with the
    ground-truth plan's length, ``config['optimal']``)."""
    from eval_runners.graders.strips import Task

    if "problem" in ref:
        problem = ref["problem"]
    else:
        problem = problem_pddl(list(ref["init"]), list(ref["goal"]))
    task = Task.from_pddl(ref.get("domain") or DOMAIN, problem)
    plan = text_to_plan(response)
    ok = bool(plan) and task.validates(plan)
    if ok and config.get("optimal"):
        gold = ref.get("optimal_length")
        if gold is None:
            gold = len(text_to_plan(str(ref["ground_truth_plan"])))
        ok = len(plan) == int(gold)
    return {"llm_correct": float(ok)}
