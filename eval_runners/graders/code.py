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
