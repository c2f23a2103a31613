"""bfcl simple (Python) AST matching: one call, right function, required parameters present,
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


@grader("bfcl_ast", "1")
def grade_simple(ref: dict, response: str, config: dict) -> dict:
    try:
        calls = parse_calls(response)
    except (SyntaxError, ValueError):
        return {"accuracy": 0.0}
    if len(calls) != 1:
        return {"accuracy": 0.0}
    name, args = calls[0]
    (gold_name, gold_params), = ref["ground_truth"][0].items()
    if name != gold_name and name.replace(".", "_") != gold_name.replace(".", "_"):
        return {"accuracy": 0.0}
    func = next((f for f in ref["function"] if f["name"] == gold_name), ref["function"][0])
    props = (func.get("parameters") or {}).get("properties") or {}
    required = (func.get("parameters") or {}).get("required") or []
    if any(r not in args for r in required) or any(a not in props for a in args):
        return {"accuracy": 0.0}
    for pname, acceptable in gold_params.items():
        if pname not in args:
            if "" not in acceptable:
                return {"accuracy": 0.0}
            continue
        if not _type_ok(args[pname], props.get(pname, {}).get("type", "")):
            return {"accuracy": 0.0}
        if not _value_ok(args[pname], acceptable):
            return {"accuracy": 0.0}
    return {"accuracy": 1.0}
