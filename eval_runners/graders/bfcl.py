"""bfcl AST matching (Python categories): the right functions, required parameters present,
no unknown parameters, every value among the acceptable ones (BFCL's possible-answer format:
``[{"func": {"param": [acceptable, ...]}}]``, ``""`` in the list marks an optional parameter)."""
from __future__ import annotations

import ast
import re

from eval_runners.graders import grader


def parse_calls(text: str) -> list[tuple[str, dict]]:
    t = text.strip()
    m = re.search(r"```[^\n]*\n(.*?)```", t, re.S)
    if m:
        t = m.group(1).strip()
    tree = ast.parse(t, mode="eval").body
    nodes = tree.elts if isinstance(tree, (ast.List, ast.Tuple)) else [tree]
    out = []
    for n in nodes:
        if not isinstance(n, ast.Call):
            raise ValueError("not a function call")
        name = ast.unparse(n.func)
        if n.args:
            raise ValueError("positional arguments are not allowed")
        out.append((name, {k.arg: ast.literal_eval(k.value) for k in n.keywords}))
    return out


def _std(v):
    if isinstance(v, str):
        return re.sub(r"[ ,./\-_*^]", "", v).lower()
    if isinstance(v, (list, tuple)):
        return [_std(x) for x in v]
    if isinstance(v, dict):
        return {k: _std(x) for k, x in v.items()}
    return v


def _type_ok(value, typ: str) -> bool:
    typ = (typ or "").lower()
    if typ in ("integer", "int"):
        return isinstance(value, int) and not isinstance(value, bool)
    if typ in ("float", "number"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if typ in ("string", "str"):
        return isinstance(value, str)
    if typ in ("boolean", "bool"):
        return isinstance(value, bool)
    if typ in ("array", "list", "tuple"):
        return isinstance(value, (list, tuple))
    if typ in ("dict", "object"):
        return isinstance(value, dict)
    return True


def _value_ok(value, acceptable: list) -> bool:
    v = _std(value)
    for a in acceptable:
        if a == "":
            continue
        if isinstance(a, (int, float)) and isinstance(value, (int, float)) and not isinstance(value, bool):
            if float(a) == float(value):
                return True
        elif _std(a) == v:
            return True
    return False


def call_matches(name: str, args: dict, gold: dict, functions: list) -> bool:
    """One produced call against one possible-answer entry ``{func: {param: [acceptable]}}``."""
    (gold_name, gold_params), = gold.items()
    if name != gold_name and name.replace(".", "_") != gold_name.replace(".", "_"):
        return False
    func = next((f for f in functions if f["name"] == gold_name), None)
    if func is None:
        func = next((f for f in functions if f["name"].replace(".", "_") == gold_name.replace(".", "_")), functions[0])
    props = (func.get("parameters") or {}).get("properties") or {}
    required = (func.get("parameters") or {}).get("required") or []
    if any(r not in args for r in required) or any(a not in props for a in args):
        return False
    for pname, acceptable in gold_params.items():
        if pname not in args:
            if "" not in acceptable:
                return False
            continue
        if not _type_ok(args[pname], props.get(pname, {}).get("type", "")):
            return False
        if not _value_ok(args[pname], acceptable):
            return False
    return True


def _decode(response: str):
    try:
        return parse_calls(response)
    except (SyntaxError, ValueError, TypeError):
        return None


def _all_matched(calls, golds, functions) -> bool:
    """Every gold call matched by a distinct produced call, and nothing extra (order-free)."""
    if calls is None or len(calls) != len(golds):
        return False
    free = list(range(len(calls)))

    def assign(k):
        if k == len(golds):
            return True
        for i in list(free):
            if call_matches(*calls[i], golds[k], functions):
                free.remove(i)
                if assign(k + 1):
                    return True
                free.append(i)
        return False
    return assign(0)


@grader("bfcl_ast", "2")
def grade_ast(ref: dict, response: str, config: dict) -> dict:
    """simple / multiple / parallel / parallel_multiple (and their live_ twins): the produced
    calls match the possible answers one to one; irrelevance: no call at all; relevance: at
    least one call."""
    category = str(ref.get("category") or config.get("subtask") or "simple")
    calls = _decode(response)
    if "irrelevance" in category:
        return {"accuracy": float(not calls)}
    if "relevance" in category:
        return {"accuracy": float(bool(calls))}
    return {"accuracy": float(_all_matched(calls, list(ref["ground_truth"]), ref["function"]))}
