"""Multiple-choice and exact-match answers: aime25, gpqa, mmlu_cot, logiqa, mmmu, visualpuzzles.

Extraction is a fixed cascade (explicit "answer is X" / "Answer: X" / \\boxed{X}, then the last
stand-alone choice, then option text). Nothing random: an answer that cannot be found scores 0.
"""
from __future__ import annotations

import re

from eval_runners.graders import grader

LETTERS = "ABCDEFGHIJKLMNOP"


def _strip_markup(text: str) -> str:
    return text.replace("**", "").replace("__", "").replace("$", "")


def boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` (nested braces allowed)."""
    i = text.rfind("\\boxed")
    if i < 0:
        return None
    j = text.find("{", i)
    if j < 0:
        return None
    depth, k = 0, j
    while k < len(text):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return text[j + 1:k].strip()
        k += 1
    return None


def _letters_re(n: int) -> str:
    return f"[{LETTERS[:max(n, 2)]}]"


def strict_letter(text: str, n_choices: int = 4) -> str | None:
    """Only an explicit statement: 'the answer is (X)', 'Answer: X', or \\boxed{X}."""
    L = _letters_re(n_choices)
    t = _strip_markup(text)
    b = boxed(t)
    if b:
        m = re.fullmatch(rf"\s*\(?({L})\)?(?:[.:)].*)?\s*", b.replace("\\text{", "").replace("}", ""))
        if m:
            return m.group(1)
    pats = [rf"(?i:answer\s+is)\s*:?\s*\(?({L})\b\)?",
            rf"(?i:answer)\s*[:：]\s*\(?({L})\b\)?",
            rf"(?i:final\s+answer)\s*[:：]?\s*\(?({L})\b\)?"]
    found = []
    for p in pats:
        found += [(m.start(), m.group(1)) for m in re.finditer(p, t)]
    return max(found)[1] if found else None


def flexible_letter(text: str, n_choices: int = 4, options: list[str] | None = None) -> str | None:
    """strict, else the last '(X)' / line-initial 'X.' / lone 'X', else the option text quoted last."""
    got = strict_letter(text, n_choices)
    if got:
        return got
    L = _letters_re(n_choices)
    t = _strip_markup(text)
    for pat in (rf"\(({L})\)", rf"(?m)^\s*({L})[.):]", rf"(?<![A-Za-z'’])({L})(?![A-Za-z'’])"):
        hits = re.findall(pat, t)
        if hits:
            return hits[-1]
    if options:
        low = t.lower()
        best = None
        for i, opt in enumerate(options):
            o = str(opt).strip().lower()
            if o and (pos := low.rfind(o)) >= 0 and (best is None or pos > best[0]):
                best = (pos, LETTERS[i])
        if best:
            return best[1]
    return None


def _norm_number(s: str) -> str | None:
    s = s.replace(",", "").replace("\\!", "").strip().rstrip(".")
    m = re.fullmatch(r"[-+]?\d+(?:\.\d+)?", s)
    if not m:
        return None
    v = float(s)
    return str(int(v)) if v == int(v) else repr(v)


def extract_number(text: str) -> str | None:
    t = _strip_markup(text)
    b = boxed(t)
    if b is not None:
        inner = re.sub(r"\\text\{([^}]*)\}", r"\1", b)
        n = re.findall(r"[-+]?\d[\d,]*(?:\.\d+)?", inner)
        if n:
            return _norm_number(n[-1])
    m = re.findall(r"(?i)answer\s*(?:is|:)\s*[:=]?\s*([-+]?\d[\d,]*(?:\.\d+)?)", t)
    if m:
        return _norm_number(m[-1])
    n = re.findall(r"[-+]?\d[\d,]*(?:\.\d+)?", t)
    return _norm_number(n[-1]) if n else None


@grader("exact_number", "1")
def grade_number(ref: dict, response: str, config: dict) -> dict:
    """aime25: integer answer; \\boxed{} > 'answer is N' > last number."""
    gold = _norm_number(str(ref["answer"]))
    got = extract_number(response)
    return {"exact_match": float(got is not None and got == gold)}


@grader("choice", "1")
def grade_choice(ref: dict, response: str, config: dict) -> dict:
    """gpqa / mmlu_cot / visualpuzzles: gold letter, flexible extraction (strict first)."""
    options = ref.get("options") or []
    n = len(options) or int(config.get("n_choices", 4))
    got = flexible_letter(response, n, options if config.get("match_option_text", True) else None)
    return {"exact_match": float(got == str(ref["answer"]).strip().upper())}


@grader("choice_filters", "1")
def grade_choice_filters(ref: dict, response: str, config: dict) -> dict:
    """logiqa: one response, both filters of the published ids (`<doc>_strict-match`, `<doc>_flexible-extract`)."""
    options = ref.get("options") or []
    n = len(options) or 4
    gold = str(ref["answer"]).strip().upper()
    return {"strict-match": float(strict_letter(response, n) == gold),
            "flexible-extract": float(flexible_letter(response, n) == gold)}


# ---- MMMU ----------------------------------------------------------------------------------

def mmmu_choice(response: str, options: list[str]) -> str | None:
    letters = LETTERS[:len(options)]
    t = " " + _strip_markup(response).strip() + " "
    got = strict_letter(t, len(options))
    if got:
        return got
    hits = []
    for c in letters:
        for pat in (rf"\({c}\)", rf"(?<![A-Za-z]){c}[.)]", rf" {c} "):
            hits += [(m.start(), c) for m in re.finditer(pat, t)]
    if hits:
        return max(hits)[1]
    low = t.lower()
    cand = [(low.rfind(str(o).lower()), letters[i]) for i, o in enumerate(options)
            if len(str(o).strip()) > 0 and str(o).lower() in low]
    return max(cand)[1] if cand else None


def _open_candidates(response: str) -> list[str]:
    t = _strip_markup(response).strip()
    parts = re.split(r"(?i)(?:the\s+)?(?:final\s+)?answer\s*(?:is|:)", t)
    tail = parts[-1] if len(parts) > 1 else t.split("\n")[-1]
    cands = [tail.strip().strip(".").strip()]
    cands += [n for n in re.findall(r"[-+]?\d[\d,]*(?:\.\d+)?", tail)]
    b = boxed(t)
    if b:
        cands.append(b)
    return [c for c in cands if c]


def _num(s: str) -> float | None:
    try:
        return float(s.replace(",", "").rstrip("%"))
    except ValueError:
        return None


@grader("mmmu", "1")
def grade_mmmu(ref: dict, response: str, config: dict) -> dict:
    golds = ref["answer"] if isinstance(ref["answer"], list) else [ref["answer"]]
    if ref.get("question_type", "multiple-choice") == "multiple-choice" and ref.get("options"):
        got = mmmu_choice(response, list(ref["options"]))
        return {"mmmu_acc": float(got is not None and got in [str(g).upper() for g in golds])}
    cands = _open_candidates(response)
    for g in golds:
        gn = _num(str(g))
        for c in cands:
            cn = _num(c)
            if gn is not None and cn is not None and abs(gn - cn) <= 1e-2 * max(1.0, abs(gn)):
                return {"mmmu_acc": 1.0}
            if gn is None and str(g).strip().lower() in c.lower():
                return {"mmmu_acc": 1.0}
    return {"mmmu_acc": 0.0}
