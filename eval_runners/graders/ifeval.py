"""IFEval instruction checks (the common ones), strict and loose, written as the four metric
subdirs from one response. inst_level = fraction of the prompt's checks that passed.

Instructions not in :data:`CHECKS` (e.g. ``language:response_language``, which needs a language
detector) are *declared unsupported*: the registry refuses such instances before any call.
"""
from __future__ import annotations

import json
import re

from eval_runners.graders import grader


def _cmp(n: int, target: int, relation: str | None) -> bool:
    return n < target if relation == "less than" else n >= target


def _words(t):
    return len(re.findall(r"\w+", t))


def _sentences(t):
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])", t.strip())
    return len([p for p in parts if p.strip()])


def _json(t, k):
    s = t.strip()
    s = re.sub(r"^```(?:json|Json|JSON)?\s*", "", s)
    s = re.sub(r"\s*```$", "", s)
    try:
        json.loads(s)
        return True
    except ValueError:
        return False


def _paragraphs_star(t, k):
    paras = re.split(r"\s?\*\*\*\s?", t)
    n = len(paras)
    for i, p in enumerate(paras):
        if not p.strip():
            if i == 0 or i == len(paras) - 1:
                n -= 1
            else:
                return False
    return n == k["num_paragraphs"]


def _nth_paragraph(t, k):
    paras = [p for p in re.split(r"\n\s*\n", t) if p.strip()]
    if len(paras) != k["num_paragraphs"] or k["nth_paragraph"] > len(paras):
        return False
    first = paras[k["nth_paragraph"] - 1].strip().split()
    if not first:
        return False
    word = re.sub(r"[^\w]", "", first[0]).lower()
    return word == k["first_word"].lower()


def _sections(t, k):
    parts = re.split(r"\s?" + re.escape(k["section_spliter"]) + r"\s?\d+\s?", t)
    return len(parts) - 1 >= k["num_sections"]


def _capital_words(t, k):
    n = len([w for w in re.findall(r"\b\w+\b", t) if w.isupper()])
    return _cmp(n, k["capital_frequency"], k.get("capital_relation"))


def _repeat_prompt(t, k):
    return t.strip().lower().startswith(k["prompt_to_repeat"].strip().lower())


def _two_responses(t, k):
    parts = t.split("******")
    valid = [p.strip() for p in parts if p.strip()]
    empty_inner = any(not p.strip() for p in parts[1:-1])
    return len(valid) == 2 and valid[0] != valid[1] and not empty_inner


def _postscript(t, k):
    marker = k["postscript_marker"].strip().lower()
    pat = r"\s*p\.\s?p\.?\s?s.*$" if marker == "p.p.s" else (r"\s*p\.\s?s\..*$" if marker == "p.s." else r"\s*" + re.escape(marker) + r".*$")
    return re.search(pat, t.lower(), re.M) is not None


CHECKS = {
    "keywords:existence": lambda t, k: all(re.search(re.escape(w), t, re.I) for w in k["keywords"]),
    "keywords:forbidden_words": lambda t, k: not any(re.search(r"\b" + re.escape(w) + r"\b", t, re.I) for w in k["forbidden_words"]),
    "keywords:frequency": lambda t, k: _cmp(len(re.findall(re.escape(k["keyword"]), t, re.I)), k["frequency"], k.get("relation")),
    "keywords:letter_frequency": lambda t, k: _cmp(t.lower().count(k["letter"].lower()), k["let_frequency"], k.get("let_relation")),
    "length_constraints:number_words": lambda t, k: _cmp(_words(t), k["num_words"], k.get("relation")),
    "length_constraints:number_sentences": lambda t, k: _cmp(_sentences(t), k["num_sentences"], k.get("relation")),
    "length_constraints:number_paragraphs": _paragraphs_star,
    "length_constraints:nth_paragraph_first_word": _nth_paragraph,
    "detectable_format:json_format": _json,
    "detectable_format:title": lambda t, k: any(s.strip() for s in re.findall(r"<<([^\n]+)>>", t)),
    "detectable_format:number_bullet_lists": lambda t, k: len(re.findall(r"^\s*\*[^\*].*$", t, re.M)) + len(re.findall(r"^\s*-.*$", t, re.M)) == k["num_bullets"],
    "detectable_format:number_highlighted_sections": lambda t, k: len([h for h in re.findall(r"\*[^\n\*]*\*", t) if h.strip("*").strip()]) + len([h for h in re.findall(r"\*\*[^\n\*]*\*\*", t) if h.strip("*").strip()]) >= k["num_highlights"],
    "detectable_format:multiple_sections": _sections,
    "detectable_format:constrained_response": lambda t, k: any(o in t for o in ("My answer is yes.", "My answer is no.", "My answer is maybe.")),
    "change_case:english_lowercase": lambda t, k: t == t.lower(),
    "change_case:english_capital": lambda t, k: t == t.upper(),
    "change_case:capital_word_frequency": _capital_words,
    "startend:end_checker": lambda t, k: t.strip().strip("\"").lower().endswith(k["end_phrase"].strip().lower()),
    "startend:quotation": lambda t, k: len(t.strip()) > 1 and t.strip()[0] == '"' and t.strip()[-1] == '"',
    "punctuation:no_comma": lambda t, k: "," not in t,
    "detectable_content:postscript": _postscript,
    "detectable_content:number_placeholders": lambda t, k: len(re.findall(r"\[.*?\]", t)) >= k["num_placeholders"],
    "combination:repeat_prompt": _repeat_prompt,
    "combination:two_responses": _two_responses,
}


def unsupported(instruction_ids) -> list[str]:
    return [i for i in instruction_ids if i not in CHECKS]


def _variants(t: str) -> list[str]:
    lines = t.split("\n")
    first = "\n".join(lines[1:]).strip()
    last = "\n".join(lines[:-1]).strip()
    both = "\n".join(lines[1:-1]).strip()
    base = [t, first, last, both]
    return [v for b in base for v in (b, b.replace("*", ""))]


def _check(iid, text, kw) -> bool:
    kw = {k: v for k, v in (kw or {}).items() if v is not None}
    try:
        return bool(text.strip()) and bool(CHECKS[iid](text, kw))
    except (KeyError, TypeError, re.error):
        return False


@grader("ifeval", "1")
def grade_ifeval(ref: dict, response: str, config: dict) -> dict:
    ids = ref["instruction_id_list"]
    kwargs = ref.get("kwargs") or [{}] * len(ids)
    bad = unsupported(ids)
    if bad:
        raise ValueError(f"unsupported ifeval instruction(s): {bad}")
    strict = [_check(i, response, k) for i, k in zip(ids, kwargs)]
    variants = _variants(response)
    loose = [any(_check(i, v, k) for v in variants if v.strip()) for i, k in zip(ids, kwargs)]
    return {"prompt_level_strict_acc": float(all(strict)),
            "inst_level_strict_acc": sum(strict) / len(strict),
            "prompt_level_loose_acc": float(all(loose)),
            "inst_level_loose_acc": sum(loose) / len(loose)}
