"""visualwebbench: one score per instance, on the scale [0, 1], as the published runner writes it.

* web_caption, heading_ocr, element_ocr: ROUGE-L F-measure (the maintained ``rouge-score``
  package, Porter stemming) of the response against the reference text; metric ``rouge_l``.
* webqa: best token F1 (lower-cased, punctuation and articles dropped) over the reference
  answers; metric ``f1``.
* element_ground, action_prediction, action_ground: the chosen option letter equals the
  reference; metric ``correct``.

The task comes from the reference (``task_type``) or from the instance id prefix
(``web_caption_12``).
"""
from __future__ import annotations

import collections
import re
import string

from eval_runners.graders import grader
from eval_runners.graders.choice import flexible_letter

ROUGE_TASKS = ("web_caption", "heading_ocr", "element_ocr")
CHOICE_TASKS = ("element_ground", "action_prediction", "action_ground")
TASKS = ROUGE_TASKS + ("webqa",) + CHOICE_TASKS


def task_of(instance_id: str) -> str | None:
    return next((t for t in TASKS if instance_id.startswith(t + "_")), None)


def rouge_l(reference: str, response: str) -> float:
    from rouge_score import rouge_scorer
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    return float(scorer.score(reference, response)["rougeL"].fmeasure)


def _tokens(text: str) -> list[str]:
    t = "".join(c for c in text.lower() if c not in set(string.punctuation))
    t = re.sub(r"\b(a|an|the)\b", " ", t)
    return t.split()


def token_f1(reference: str, response: str) -> float:
    ref, got = _tokens(reference), _tokens(response)
    if not ref or not got:
        return float(ref == got)
    common = sum((collections.Counter(ref) & collections.Counter(got)).values())
    if common == 0:
        return 0.0
    p, r = common / len(got), common / len(ref)
    return 2 * p * r / (p + r)


@grader("visualwebbench", "1")
def grade_vwb(ref: dict, response: str, config: dict) -> dict:
    task = ref.get("task_type") or task_of(str(config.get("instance_id", "")))
    answer = ref["answer"]
    text = response.strip()
    if task in ROUGE_TASKS:
        gold = answer if isinstance(answer, str) else " ".join(map(str, answer))
        return {"rouge_l": rouge_l(gold, text) if text else 0.0}
    if task == "webqa":
        golds = answer if isinstance(answer, list) else [answer]
        return {"f1": max(token_f1(str(g), text) for g in golds)}
    if task in CHOICE_TASKS:
        n = int(ref.get("n_choices") or 8)
        got = flexible_letter(text, n)
        gold = answer if isinstance(answer, str) else "ABCDEFGHIJKLMNOP"[int(answer)]
        return {"correct": float(got is not None and got == gold.strip().upper())}
    raise ValueError(f"unknown visualwebbench task {task!r}")
