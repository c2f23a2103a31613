"""lifbench: the rule-based point scores of the LIFBench evaluation, one function per task family,
re-expressed from its published scoring rules (points per facet, divided by the facet maximum).
The written metric is ``total_score`` (all facet points / the task's maximum).

The reference is the dataset row's ``prompt`` (several checks read the list or documents in it),
``param`` and ``label``; ``task`` names the subtask (the pack's call subdir). Quirks of the
published rules are kept on purpose so that new rows join the published ones, e.g. an output that
names no list element scores 0 overall even if its length looked right, and the order facet of
onedoc-extract credits every quoted key sentence.
"""
from __future__ import annotations

import ast
import json
import re

from eval_runners.graders import grader

LIST_START, LIST_END = "List to be retrieved:\n", "\nInstruction:"
DOCS_START, DOCS_END = "\n\n Documents:\n", "\n\n Instructions:"
ATTRIBUTES = ("#Topic#", "@argument@", "!Transition!", "|Summary|", "*Evidence*", "-Concession-")


# ---- helpers --------------------------------------------------------------------------------

def section(text: str, start: str, end: str) -> str:
    """The part of ``text`` after the last ``start`` and before the next ``end``, stripped."""
    tail = text.split(start)[-1]
    if end in tail:
        tail = tail.split(end)[0]
    return tail.strip()


def numbered_items(text: str) -> list[str]:
    """'1. a\\n2. b' -> ['a', 'b'] (items are found by their '\\n<k>. ' tags, in order)."""
    body = "\n" + text.strip()
    starts, k, pos = [], 1, 0
    while True:
        i = body.find(f"\n{k}. ", pos)
        if i < 0:
            break
        starts.append(i)
        pos, k = i, k + 1
    bounds = starts + [len(body)]
    return [body[a:b].split(". ", 1)[-1] for a, b in zip(bounds, bounds[1:])]


def edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def unescape(text: str) -> str:
    """The published checks match against the output with backslash escapes decoded."""
    for t in (text, text[:-1]):
        try:
            return t.encode("utf-8").decode("unicode_escape")
        except UnicodeDecodeError:
            continue
    return text


def json_or_none(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return None


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
        return True
    except ValueError:
        return False


def _json_list_format(out: str, whole: tuple, inner: tuple) -> tuple[float, int | None]:
    """Format points for 'answer as a JSON list of strings' and the list's length (None if no list).

    ``whole``/``inner``: points when the whole output / the outermost [...] parses as
    (list of str, other list, non-list)."""
    for text, pts in ((out, whole), (out[out.find("["):out.rfind("]") + 1], inner)):
        if _is_json(text):
            v = json.loads(text)
            if isinstance(v, list):
                return (pts[0] if all(isinstance(i, str) for i in v) else pts[1]), len(v)
            return pts[2], None
    return 0.0, None


# ---- list tasks -----------------------------------------------------------------------------

def single_element(ref: dict, out: str) -> float:
    """list-single_query_id / list-offset_query_id / list-offset_query_element (max 4 points)."""
    param = ref["param"]
    bias = param.get("bias", 0)
    expected = {0: param.get("element"), 1: param.get("post_element"), -1: param.get("pre_element")}[bias]
    listed = numbered_items(section(ref["prompt"], LIST_START, LIST_END))
    if not out:
        return 0.0
    lengths = [len(x) for x in listed]
    fmt = 0.2 if min(lengths) <= len(out) <= max(lengths) else 0.0
    hits = sum(out.count(x) for x in listed)
    if hits == 0:
        return 0.0
    ori = 1.0
    if hits == 1:
        fmt += 0.8 if out in listed else 0.3
    if expected in out:
        correct = 2.0
    elif edit_distance(expected, out) <= len(expected) / 6 + 3:
        correct = 1.0
    else:
        correct = 0.0
    return (fmt + ori + correct) / 4.0


def many_elements(ref: dict, out: str) -> float:
    """list-multi_query_id (max 10 points: format 2, count 3, correct 3, order 2)."""
    expected = list(ref["param"]["elements"])
    listed = numbered_items(section(ref["prompt"], LIST_START, LIST_END))
    if not out:
        return 0.0
    fmt, n_out = _json_list_format(out, (2.0, 1.5, 0.5), (1.5, 1.0, 0.5))
    if n_out is None:
        n_out = sum(out.count(x) for x in listed)
    num = (1.0 if n_out == len(expected) else 0.0) + max(0.0, 1 - abs(n_out - len(expected)) / len(expected)) * 2
    text = unescape(out)
    found = [e for e in expected if e in text]
    correct = len(found) / len(expected) * 3
    if len(found) <= 1:
        order = 1.0
    else:
        pos = [text.find(e) for e in found]
        order = 2.0 if pos == sorted(pos) else 0.0
    return (fmt + num + correct + order) / 10.0


def blur_offset(ref: dict, out: str) -> float:
    """list-blur_offset_query_id / _element: any element on the asked side (max 5 points)."""
    param = ref["param"]
    anchor, side = int(param["id"]) - 1, param["bias"]
    listed = numbered_items(section(ref["prompt"], LIST_START, LIST_END))
    if not out:
        return 0.0
    lengths = [len(x) for x in listed]
    fmt = 0.2 if min(lengths) <= len(out) <= max(lengths) else 0.0
    idx = [i for i, x in enumerate(listed) if x in out]
    if not idx:
        return 0.0
    ori = 1.0
    if len(idx) == 1:
        fmt += 0.8 if out == listed[idx[0]] else 0.3
    if side == 1:
        pos = 3.0 if all(i > anchor for i in idx) else 1.0 if all(i >= anchor for i in idx) else 0.0
    else:
        pos = 3.0 if all(i < anchor for i in idx) else 1.0 if all(i <= anchor for i in idx) else 0.0
    return (ori + pos + fmt) / 5.0


# ---- multi-document tasks ---------------------------------------------------------------------

def batch_label(ref: dict, out: str) -> float:
    """multidoc-batch_label (max 14 points: candidates 3, rule 3, count 3, format 5)."""
    param, n_docs = ref["param"], int(ref["label"])
    rank = {c: i for i, c in enumerate(param["rule_key"])}
    ordered = sorted(param["candidates"], key=lambda w: rank[w[0]])
    truth = [ordered[(0 if "title" in d else 2) + (0 if "source" in d else 1)] for d in param["doc_keys"]]
    obj_rx = r"\{[^\]]+\}"
    blocks = re.findall(obj_rx, out)
    fmt, parsed = 0.0, json_or_none(out)
    if parsed is not None:
        fmt += 2.0
    elif blocks:
        blocks = sorted(blocks, key=len, reverse=True)
        parsed = json_or_none(blocks[0])
        fmt += 1.0 if parsed is not None else 0.0
    if parsed and isinstance(parsed, dict):
        fmt += 1.0
    n_out = len(parsed) if parsed and isinstance(parsed, (dict, list)) else out.count("doc")
    num = max(0.0, 1 - abs(n_out - n_docs) / n_docs) * 2.5 + (0.5 if n_out == n_docs else 0.0)
    fmt += sum(f"doc{k}" in out for k in range(1, n_docs + 1)) / n_docs * 2.0
    cand = rule = 0.0
    for block in blocks:
        parts = block.split(",")
        if len(parts) != n_docs:
            continue
        rule = sum(truth[i] in p for i, p in enumerate(parts)) / n_docs * 3.0
        cand = sum(any(c in p for c in param["candidates"]) for p in parts) / n_docs * 3.0
        break
    return (cand + rule + num + fmt) / 14.0


def _group_map(groups, transform) -> dict:
    return {transform(item): g for g, group in enumerate(groups) for item in group}


def find_dup_text(ref: dict, out: str) -> float:
    """multidoc-find_dup_text (max 20 points: correct 4, group count 5, faithful 6, format 5)."""
    prompt, param = ref["prompt"].strip(), ref["param"]
    docs = section(prompt, DOCS_START, DOCS_END)
    keys = param["info_keys"].strip().split(" ")
    answer = param["dup_infos"]
    if not out:
        return 0.0
    fmt = 0.5 if "[" in out and "]" in out else 0.0
    first, last = out.find("["), out.rfind("]")
    if first == 0 and last == len(out) - 1:
        fmt += 0.5
    lines = re.findall(r"\[\[.*?\]\]", out)
    n_groups = (1.0 if len(lines) == len(answer) else 0.0) + \
        max(0.0, 1 - abs(len(lines) - len(answer)) / (len(answer) + 2)) * 4.0
    if len(lines) == len(out.split("\n")):
        fmt += 1.0
    parsed, any_ok, all_json, all_nested = [], False, True, True
    for line in lines:
        v = json_or_none(line[first:last + 1])          # sliced with the whole output's brackets, as published
        if v is None:
            all_json = False
            continue
        any_ok = True
        if isinstance(v, list) and all(isinstance(x, list) for x in v):
            parsed.append(v)
        else:
            all_nested = False
    fmt += float(any_ok) + float(all_json) + float(all_nested)
    total = sum(len(x) for v in parsed for x in v)
    ori = sum(1.0 for v in parsed for x in v for e in x if e is None or str(e) in docs)
    ori = ori / total * 3.0 if total else 0.0
    prompt_flat = prompt.replace('"', "")
    values = [v for group in answer for d in group for v in d.values()]
    decoded = unescape(out.replace("null", "None"))
    correct = sum(str(v) in decoded for v in values) * 3.0 / len(values)
    flat = out.replace("null", "None").replace("\n", ",").replace('\\"', "").replace("\\", ",").strip()
    truth = _group_map(answer, lambda d: tuple(str(d[k]).replace('"', "") for k in keys))
    said, cells, in_prompt = {}, 0, 0
    for g, text in enumerate(re.findall(r"\[\[.*?\]\]", flat)):
        try:
            v = ast.literal_eval(text.replace(',"', ""))
            rows = [tuple(str(e) for e in row) for row in v]
            cells += len(v) * len(v[0])
        except (ValueError, SyntaxError, TypeError, IndexError, MemoryError, RecursionError):
            continue
        for row in rows:
            in_prompt += sum(e in prompt_flat for e in row)
            said[row] = g
    if cells:
        ori += in_prompt * 3.0 / cells
    pairs = sum(1 for a, ga in truth.items() for b, gb in truth.items()
                if a in said and b in said and ((ga == gb) == (said[a] == said[b])))
    correct += pairs / (len(truth) ** 2)
    return (correct + n_groups + ori + fmt) / 20.0


# ---- one-document tasks ---------------------------------------------------------------------

def extract(ref: dict, out: str) -> float:
    """onedoc-extract (max 14 points: format 4, correct 4, order 4, faithful 2)."""
    label, target = ref["label"], str(ref["param"]["type"])[1:-1]
    if not out:
        return 0.0
    fmt, n_out = _json_list_format(out, (4.0, 3.0, 1.0), (3.0, 2.0, 1.0))
    if target == "|Summary|" and out == "[]":
        return 1.0
    n_out = n_out or 0
    text = unescape(out)
    quoted = [info[0] for infos in label.values() for info in infos if info[0] in text]
    order = 4.0 if quoted else 0.0                      # published order facet: every quoted sentence counts
    ori = 2.0 if quoted else 0.0
    entries = label.get(target, [])
    true = [e[0] for e in entries if e[3]]
    fake = [e[0] for e in entries if not e[3]]
    hit = sum(s in text for s in true)
    denom = max(len(quoted), n_out, len(true))
    correct = hit / denom * 3.5 if denom else 0.0
    if not fake or fake[0] not in text:
        correct += 0.5
    return (fmt + correct + order + ori) / 14.0


def repeat(ref: dict, out: str) -> float:
    """onedoc-repeat (max 14 points: format 3, faithful 2, hits 2, count 4, attribute 3)."""
    label = {k: [list(x) for x in v] for k, v in ref["label"].items()}
    sep, want = ref["param"]["sep"], int(ref["param"]["num"])
    if not out:
        return 0.0
    hit = fake = 0
    for infos in label.values():
        for info in infos:
            if info[0] not in out:
                continue
            hit += 1
            fake += 0 if info[-1] else 1
            if "\n" in info[0]:
                flat = info[0].replace("\n", "")
                out = out.replace(info[0], flat)
                info[0] = flat
    ori = 1.0 + (1.0 if any(a in out for a in ATTRIBUTES) else 0.0)
    hits = min(1.0, (hit - 0.5 * fake) / want) * 2.0
    fmt = (0.5 if want == 1 or "\n" in out else 0.0) + (0.5 if sep in out else 0.0)
    lines = [x for x in out.split("\n") if x]
    n_sep = out.count(sep)
    num = float(n_sep == want) + float(len(lines) == want) + float(hit == want)
    num += (float(n_sep == len(lines)) + float(n_sep == hit) + float(hit == len(lines))) / 3
    if sep in out:
        well_formed = sum(len(line.split(sep)) == 2 for line in lines)
        fmt += min(1.0, well_formed / max(len(lines), want)) * 2.0
    right = 0
    for line in lines:
        sentence, tags = line.split(sep, 1) if sep in line else (line.strip(), line.strip())
        candidates = [info[0] for a in ATTRIBUTES if a in tags for info in label.get(a, [])]
        if any(edit_distance(sentence, c) <= len(c) // 6 + 3 for c in candidates):
            right += 1
    correct = right / len(lines) * 3.0 if lines else 0.0
    return (fmt + ori + hits + num + correct) / 14.0


def qa(ref: dict, out: str) -> float:
    """onedoc-qa (max 5 points: correct 3, format 2)."""
    opts, evidence = ref["param"]["options"], ref["param"]["evidence"].strip()
    true_key = next((bool(info[3]) for infos in ref["label"].values() for info in infos
                     if info[0].strip() == evidence), False)
    has0, has1 = opts[0] in out, opts[1] in out
    fmt = 1.0 if len(out) in (len(opts[0]), len(opts[1])) else 0.5 if len(out) > max(map(len, opts)) + 3 else 0.0
    fmt += 0.5 if has0 and has1 else 1.0 if has0 or has1 else 0.0
    if has0 and has1:
        correct = 0.5
    elif not (has0 or has1):
        correct = 0.0
    elif true_key:
        correct = 3.0 if has0 else 0.1
    else:
        correct = 2.0 if has0 else 3.0
    return (correct + fmt) / 5.0


SCORERS = {
    "list-single_query_id": single_element, "list-offset_query_id": single_element,
    "list-offset_query_element": single_element, "list-multi_query_id": many_elements,
    "list-blur_offset_query_id": blur_offset, "list-blur_offset_query_element": blur_offset,
    "multidoc-batch_label": batch_label, "multidoc-find_dup_text": find_dup_text,
    "onedoc-extract": extract, "onedoc-repeat": repeat, "onedoc-qa": qa,
}


@grader("lifbench", "1")
def grade_lifbench(ref: dict, response: str, config: dict) -> dict:
    task = ref.get("task") or config.get("subtask")
    if task not in SCORERS:
        raise ValueError(f"unknown lifbench task {task!r}")
    return {"total_score": float(SCORERS[task](ref, response.strip()))}
