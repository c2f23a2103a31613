"""acp_gen (ACPBench Hard, generative): one symbolic check per task, metric ``score``.

The reference is the dataset row's ``answer`` (its shape depends on the task) plus, where a check
needs the planning task itself, its ``PDDL_domain`` / ``PDDL_problem`` (whose init is the
"current state"). The answer is read after the last ``Answer:`` of the response (the pack's
prompt asks for it there), else from the whole response. Checks, in our words, after the
published task definitions:

* ``acp_app_gen``   the set of applicable actions equals the reference set.
* ``acp_prog_gen``  the positive and negative effects equal the reference sets.
* ``acp_val_gen``   the index of the first inapplicable action equals the reference.
* ``acp_land_gen``  the fact is a known landmark, or "none" when there is none.
* ``acp_nexta_gen`` the action is known to lead closer to the goal; for an action whose status
  is not stored ("maybe"), an optimal plan from the next state is exactly one step shorter
  (breadth-first search).
* ``acp_reach_gen`` the fact is a known unreachable one, or is proven unreachable by exhaustive
  search; "none" when the reference says there is none.
* ``acp_areach_gen`` the same for an action whose preconditions can never hold together.
* ``acp_just_gen``  the answer is a proper subsequence of the question's plan and still a plan.

A search that runs past its state budget scores 0 (the published checker's planner timeout
does the same).
"""
from __future__ import annotations

import re

from eval_runners.graders import grader

GROUPS = {
    "acp_app_gen": "applicable_actions_gen", "acp_areach_gen": "reachable_action_gen",
    "acp_just_gen": "action_justification_gen", "acp_land_gen": "landmarks_gen",
    "acp_nexta_gen": "goal_closer_gen", "acp_prog_gen": "progression_gen",
    "acp_reach_gen": "reachable_atom_gen", "acp_val_gen": "validation_gen",
}
MAX_STATES = 200_000

_PAREN = re.compile(r"\(([^()]*)\)")


def answer_text(response: str) -> str:
    parts = re.split(r"(?i)\banswer\s*[:：]", response.replace("**", ""))
    return parts[-1].strip() if len(parts) > 1 else response.strip()


def norm(x: str) -> str:
    from eval_runners.graders.strips import normalize_action
    return normalize_action(x)


def items(text: str) -> list[str]:
    """Every parenthesised expression, normalised: '(on a b)'."""
    return [norm(m) for m in _PAREN.findall(text) if m.strip()]


def single(text: str) -> str | None:
    """One action / fact, or 'none'."""
    got = items(text)
    if got:
        return got[0]
    if re.fullmatch(r"[\s\"'`.]*none[\s\"'`.]*", text, re.I):
        return "none"
    return None


def _task(ref):
    from eval_runners.graders.strips import Task
    return Task.from_pddl(ref["PDDL_domain"], ref["PDDL_problem"])


def _unreachable(ref, goal: frozenset) -> bool:
    from eval_runners.graders.strips import SearchLimit
    try:
        return _task(ref).shortest_plan_length(goal=goal, max_states=MAX_STATES) is None
    except SearchLimit:
        return False


def _app(ref, ans):
    return set(items(ans)) == {norm(a) for a in ref["answer"]}


def _prog(ref, ans):
    low = ans.lower().replace("*", "")
    if "positive effects" in low and "negative effects" in low:
        pos_txt, neg_txt = low.split("negative effects", 1)
        pos_txt = pos_txt.split("positive effects", 1)[1]
    else:
        lists = re.findall(r"\[([^\[\]]*)\]", ans)
        if not 1 <= len(lists) <= 2:
            return False
        pos_txt, neg_txt = lists[0], (lists[1] if len(lists) == 2 else "")
    return (set(items(pos_txt)) == {norm(a) for a in ref["answer"]["pos"]}
            and set(items(neg_txt)) == {norm(a) for a in ref["answer"]["neg"]})


def _val(ref, ans):
    m = re.search(r"-?\d+", ans)
    return m is not None and int(m.group()) == int(ref["answer"])


def _land(ref, ans):
    got = single(ans)
    yes = {norm(a) for a in ref["answer"]["yes"]}
    if got == "none":
        return not yes
    return got is not None and got in yes


def _nexta(ref, ans):
    from eval_runners.graders.strips import SearchLimit
    got = single(ans)
    if got is None or got == "none":
        return False
    a = ref["answer"]
    if got in {norm(x) for x in a.get("yes", [])}:
        return True
    if got in {norm(x) for x in a.get("no", [])} or got not in {norm(x) for x in a.get("maybe", [])}:
        return False
    task = _task(ref)
    op = task.by_name.get(got)
    if op is None or not op.applicable(task.init):
        return False
    try:
        opt = a.get("opt")
        opt = int(opt) if opt is not None else task.shortest_plan_length(max_states=MAX_STATES)
        after = task.shortest_plan_length(op.apply(task.init), max_states=MAX_STATES)
    except SearchLimit:
        return False
    return opt is not None and after is not None and after + 1 == opt


def _reach_answer(ref, ans):
    """The answer (a fact or action) and the verdict when no search is needed, else None: with no
    known unreachable ones only "none" is right; no answer or "none" is wrong; a known one is right."""
    got = single(ans)
    known = {norm(x) for x in ref["answer"]}
    if not known:
        return got, got == "none"
    if got is None or got == "none":
        return got, False
    return got, True if got in known else None


def _reach(ref, ans):
    got, verdict = _reach_answer(ref, ans)
    return verdict if verdict is not None else _unreachable(ref, frozenset([got]))


def _areach(ref, ans):
    got, verdict = _reach_answer(ref, ans)
    if verdict is not None:
        return verdict
    op = _task(ref).by_name.get(got)
    if op is None:
        return False                     # not an action of the task (or pruned as unreachable by the grounder)
    return _unreachable(ref, op.pre)


def question_plan(question: str) -> list[str]:
    m = re.search(r"\"([^\"]*\([^\"]*)\"", question)
    return items(m.group(1) if m else question)


def _just(ref, ans):
    low = ans.lower().replace("*", "")
    if "simplified plan:" in low:
        low = low.split("simplified plan:", 1)[1]
    cand = items(low)
    plan = [norm(a) for a in ref["plan"]] if ref.get("plan") else question_plan(ref.get("question", ""))
    if not cand or len(cand) >= len(plan):
        return False
    it = iter(plan)
    if not all(any(step == p for p in it) for step in cand):    # proper subsequence, in order
        return False
    return _task(ref).validates(cand)


CHECKS = {"applicable_actions_gen": _app, "progression_gen": _prog, "validation_gen": _val,
          "landmarks_gen": _land, "goal_closer_gen": _nexta, "reachable_atom_gen": _reach,
          "reachable_action_gen": _areach, "action_justification_gen": _just}


@grader("acp_gen", "1")
def grade_acp(ref: dict, response: str, config: dict) -> dict:
    group = ref.get("group") or GROUPS.get(config.get("subtask", ""))
    if group not in CHECKS:
        raise ValueError(f"unknown acp_gen group {group!r}")
    ans = answer_text(response)
    if not ans:
        return {"score": 0.0}
    return {"score": float(bool(CHECKS[group](ref, ans)))}
