"""planbench (blocksworld) task_3 plan verification and task_7 plan execution parsers.
Other tasks need VAL and are declared so in the registry."""
from __future__ import annotations

import re

from eval_runners.graders import grader


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
