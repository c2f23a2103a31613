"""repobench next-line completion: first non-comment line; exact match, edit similarity
(2*LCS/(|a|+|b|), the Levenshtein-ratio form of fuzz.ratio, in whole percent as the published
scores are: 0.68, 0.99), and CodeBLEU only through the maintained ``codebleu`` package with its
Python grammar (optional extra ``codebleu``; never hand-rolled)."""
from __future__ import annotations

import importlib.util
import re

from eval_runners.graders import grader


def first_code_line(text: str) -> str:
    t = text
    m = re.search(r"```[^\n]*\n(.*?)(```|$)", t, re.S)
    if m:
        t = m.group(1)
    for line in t.splitlines():
        s = line.strip()
        if s and not s.startswith("#"):
            return s
    return ""


def edit_similarity(a: str, b: str) -> float:
    if not a and not b:
        return 1.0
    prev = [0] * (len(b) + 1)
    for ca in a:
        cur = [0]
        for j, cb in enumerate(b):
            cur.append(prev[j] + 1 if ca == cb else max(prev[j + 1], cur[j]))
        prev = cur
    return 2 * prev[-1] / (len(a) + len(b))


def codebleu_available() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("codebleu", "tree_sitter_python"))


@grader("repobench", "2")
def grade_repobench(ref: dict, response: str, config: dict) -> dict:
    pred, gold = first_code_line(response), ref["next_line"].strip()
    out = {"exact_match": float(pred == gold),
           "edit_similarity": int(round(100 * edit_similarity(pred, gold))) / 100}
    if codebleu_available():
        from codebleu import calc_codebleu
        out["codebleu"] = float(calc_codebleu([gold], [pred], lang="python")["codebleu"])
    return out
