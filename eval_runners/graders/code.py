"""Code execution graders: humaneval_chat / mbpp_chat (unit tests) and livecodebench
code generation (stdin/stdout and functional tests), all through :mod:`eval_runners.sandbox`."""
from __future__ import annotations

import json
import re

from eval_runners.graders import grader
from eval_runners.sandbox import run_python


def extract_code(text: str, entry_point: str | None = None) -> str:
    """The fenced code block to run: the last one defining ``entry_point`` if given, else the last
    ```python block, else the last block, else the whole text."""
    blocks = re.findall(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", text, re.S)
    if not blocks:
        return text.strip()
    if entry_point:
        hits = [b for _, b in blocks if re.search(rf"def\s+{re.escape(entry_point)}\s*\(", b)]
        if hits:
            return hits[-1]
    py = [b for lang, b in blocks if lang.lower() in ("python", "py", "python3")]
    return (py or [b for _, b in blocks])[-1]


@grader("code_function", "1")
def grade_function(ref: dict, response: str, config: dict) -> dict:
    """HumanEval (``test`` + ``check(entry_point)``) or MBPP (``test_list`` asserts)."""
    code = extract_code(response, ref.get("entry_point"))
    if "test_list" in ref:
        tests = "\n".join([ref.get("test_setup_code") or ""] + list(ref["test_list"]))
    else:
        tests = ref["test"] + f"\ncheck({ref['entry_point']})\n"
    res = run_python(code + "\n\n" + tests, timeout=float(config.get("timeout", 10)))
    score = float(res.ok)
    return {"pass@1": score, "pass_at_1": score}


_FUNCTIONAL = r'''
import json, sys
{code}

def _run():
    cases = json.loads(sys.stdin.read())
    sol = Solution() if "Solution" in globals() else None
    fn = getattr(sol, {fn!r}) if sol is not None else globals()[{fn!r}]
    for args_text, expected in cases:
        args = [json.loads(line) for line in args_text.split("\n") if line.strip()]
        got = fn(*args)
        if isinstance(got, tuple):
            got = list(got)
        if got != json.loads(expected):
            sys.exit(1)
_run()
'''


def _same_output(got: str, expected: str) -> bool:
    g = [l.strip() for l in got.strip().splitlines()]
    e = [l.strip() for l in expected.strip().splitlines()]
    if g == e:
        return True
    if len(g) != len(e):
        return False
    for a, b in zip(g, e):
        if a == b:
            continue
        try:
            fa, fb = [float(x) for x in a.split()], [float(x) for x in b.split()]
        except ValueError:
            return False
        if len(fa) != len(fb) or any(abs(x - y) > 1e-6 * max(1, abs(y)) for x, y in zip(fa, fb)):
            return False
    return True


@grader("code_tests", "1")
def grade_tests(ref: dict, response: str, config: dict) -> dict:
    """livecodebench codegeneration: every public and private test must pass (6 s each)."""
    code = extract_code(response)
    tests = list(ref.get("tests") or [])
    if not tests:
        raise ValueError("reference has no tests")
    timeout = float(config.get("timeout", 6))
    functional = [t for t in tests if t.get("testtype") == "functional"]
    if functional:
        fn = ref.get("fn_name") or (ref.get("metadata") or {}).get("func_name")
        prog = _FUNCTIONAL.format(code=code, fn=fn)
        res = run_python(prog, stdin=json.dumps([[t["input"], t["output"]] for t in functional]),
                         timeout=timeout * max(1, len(functional)) / 2)
        if not res.ok:
            return {"pass@1": 0.0}
    for t in tests:
        if t.get("testtype") == "functional":
            continue
        res = run_python(code, stdin=t["input"], timeout=timeout)
        if not res.ok or not _same_output(res.stdout, t["output"]):
            return {"pass@1": 0.0}
    return {"pass@1": 1.0}


# ---- livecodebench: test output prediction and code execution -------------------------------

def _last_block_or_text(text: str) -> str:
    blocks = re.findall(r"```[^\n]*\n(.*?)```", text, re.S)
    return (blocks[-1] if blocks else text).strip()


def assert_rhs(line: str) -> str:
    """'assert f(1) == 2' -> '2'; anything else is returned stripped."""
    import ast
    line = line.strip()
    try:
        node = ast.parse(line).body[0]
    except (SyntaxError, IndexError):
        return line
    if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare) and node.test.comparators:
        return ast.unparse(node.test.comparators[-1])
    return line


def predicted_output(text: str) -> str:
    """The output a response predicts: inside [ANSWER]...[/ANSWER] if present, else the last code
    block or the text; the first assert line wins; its right-hand side is the prediction."""
    m = re.findall(r"\[ANSWER\](.*?)\[/ANSWER\]", text, re.S)
    body = m[-1].strip() if m else _last_block_or_text(text)
    lines = [l for l in body.splitlines() if l.strip() and not l.strip().startswith("#")]
    for l in lines:
        if "assert" in l:
            return assert_rhs(l[l.index("assert"):])
    return lines[-1].strip() if lines else ""


@grader("lcb_test_output", "1")
def grade_test_output(ref: dict, response: str, config: dict) -> dict:
    """livecodebench testoutputprediction: the predicted value equals the expected output (both
    read as Python / JSON literals; a prediction that is not a literal scores 0)."""
    import ast
    try:
        got = ast.literal_eval(predicted_output(response))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return {"pass@1": 0.0}
    expected = ref["output"]
    try:
        expected = json.loads(expected) if isinstance(expected, str) else expected
    except ValueError:
        raise ValueError("reference output is not JSON") from None
    return {"pass@1": float(got == expected)}


@grader("lcb_execution", "1")
def grade_execution(ref: dict, response: str, config: dict) -> dict:
    """livecodebench codeexecution: ``assert <expected output> == <prediction>`` must hold when run
    after the problem's code, in the sandbox, within 3 s."""
    pred = predicted_output(response)
    if not pred:
        return {"pass@1": 0.0}
    prog = f"{ref['code']}\n\nassert {ref['output']} == {pred}\n"
    res = run_python(prog, timeout=float(config.get("timeout", 3)))
    return {"pass@1": float(res.ok)}


# ---- debugbench (Python): the fixed class must give the expected output on each test ---------

_LEETCODE_PRELUDE = """
from typing import *
import collections, heapq, itertools, math, bisect, functools, string, re, operator
from collections import *
from heapq import *
from itertools import *
from functools import *
from math import *
from bisect import *
"""

_DEBUG_DRIVER = r'''
import json, sys
def _main():
    cases = json.loads(sys.stdin.read())
    for method, kwargs, expected in cases:
        got = getattr(Solution(), method)(**kwargs)
        if isinstance(got, tuple):
            got = list(got)
        if got != expected:
            print("mismatch", method, kwargs, got, expected)
            sys.exit(1)
_main()
'''


@grader("debugbench_python", "1")
def grade_debugbench(ref: dict, response: str, config: dict) -> dict:
    """debugbench python3: the response's code (last ```python block) is run in the sandbox on the
    pack's tests (the problem's public examples, each ``{"method", "kwargs", "output"}``). The
    published runner used LeetCode's hidden tests instead; those are not public."""
    tests = ref.get("tests") or []
    if not tests:
        raise ValueError("reference has no local tests")
    code = extract_code(response)
    cases = [[t["method"], t["kwargs"], t["output"]] for t in tests]
    res = run_python(_LEETCODE_PRELUDE + "\n" + code + "\n" + _DEBUG_DRIVER, stdin=json.dumps(cases),
                     timeout=float(config.get("timeout", 10)))
    return {"debug_accuracy": float(res.ok)}
