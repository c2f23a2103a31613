"""Pack builders: a local copy of a benchmark's public dataset rows -> pack records.

Each builder takes the rows in that dataset's own field layout (as published on the Hugging Face
hub or in the benchmark's repository) and writes the prompt in our words. Ids follow the published
result files where they are known (``visualpuzzles_<i>``, ``repobench_<i>``, ifeval / planbench
positional or instance numbers, mmmu ``validation_<Subject>_<n>``). Nothing is downloaded.
"""
from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path

from eval_runners.packs import PackError, builder, file_sha256, make_record, shuffled_choices

LETTERS = "ABCDEFGHIJ"
COT_MC = ("Answer the following multiple-choice question. Think step by step, then finish with a "
          "line of the form 'Answer: X' where X is the letter of the correct option.")


def _opts_text(options):
    return "\n".join(f"({LETTERS[i]}) {o}" for i, o in enumerate(options))


def _user(text):
    return [{"role": "user", "content": text}]


@builder("aime25")
def build_aime25(rows, version="1", asset_root=None, **_):
    for i, r in enumerate(rows):
        iid = str(r.get("id", i))
        text = (f"{r['problem']}\n\nSolve the problem. The answer is an integer from 0 to 999; "
                "put it in \\boxed{} at the end.")
        yield make_record("aime25", version, "aime25", "", iid, _user(text),
                          {"answer": str(r["answer"]).strip()}, "exact_number", generation={"max_tokens": 32768})


@builder("gpqa")
def build_gpqa(rows, version="1", asset_root=None, **_):
    for i, r in enumerate(rows):
        iid = str(r.get("id", i))
        wrong = [r[f"Incorrect Answer {k}"].strip() for k in (1, 2, 3)]
        opts, gold = shuffled_choices(f"gpqa/{iid}", r["Correct Answer"].strip(), wrong)
        text = f"{COT_MC}\n\n{r['Question'].strip()}\n\n{_opts_text(opts)}"
        yield make_record("gpqa", version, "gpqa", "", iid, _user(text), {"answer": gold, "options": opts},
                          "choice", generation={"max_tokens": 16384})


@builder("mmlu_cot")
def build_mmlu(rows, version="1", asset_root=None, **_):
    seen: dict[str, int] = {}
    for r in rows:
        subj = r["subject"]
        n = seen[subj] = seen.get(subj, -1) + 1
        iid = str(r.get("id", f"{subj}_{n}"))
        opts = list(r["choices"])
        text = f"{COT_MC}\n\nSubject: {subj.replace('_', ' ')}\n\n{r['question']}\n\n{_opts_text(opts)}"
        yield make_record("mmlu_cot", version, "mmlu_cot", "", iid, _user(text),
                          {"answer": LETTERS[int(r["answer"])], "options": opts, "subject": subj}, "choice")


@builder("logiqa")
def build_logiqa(rows, version="1", asset_root=None, **_):
    for i, r in enumerate(rows):
        opts = list(r["options"])
        text = (f"{COT_MC.replace('Answer: X', 'The answer is (X)')}\n\nPassage: {r['context']}\n\n"
                f"Question: {r['query']}\n\n{_opts_text(opts)}")
        yield make_record("logiqa", version, "logiqa", "", str(i), _user(text),
                          {"answer": LETTERS[int(r["correct_option"])], "options": opts}, "choice_filters")


def _save_image(value, asset_root: Path, stem: str) -> dict:
    """An image field (path, bytes, or {"bytes"/"path"}) -> image_ref part stored under images/."""
    if isinstance(value, dict):
        data = value.get("bytes")
        src = value.get("path")
    elif isinstance(value, (bytes, bytearray)):
        data, src = bytes(value), None
    else:
        data, src = None, str(value)
    if data is None:
        if not src or not Path(src).is_file():
            raise PackError(f"image {src!r} not found locally")
        data = Path(src).read_bytes()
    suffix = ".jpg" if data[:3] == b"\xff\xd8\xff" else ".png"
    rel = Path("images") / f"{stem}-{hashlib.sha256(data).hexdigest()[:12]}{suffix}"
    (asset_root / rel).parent.mkdir(parents=True, exist_ok=True)
    (asset_root / rel).write_bytes(data)
    return {"type": "image_ref", "path": str(rel), "sha256": file_sha256(asset_root / rel)}


@builder("mmmu")
def build_mmmu(rows, version="1", asset_root=None, **_):
    for r in rows:
        opts = r.get("options") or []
        if isinstance(opts, str):
            opts = ast.literal_eval(opts)
        parts = [_save_image(r[f"image_{k}"], Path(asset_root), f"{r['id']}_{k}")
                 for k in range(1, 8) if r.get(f"image_{k}") is not None]
        qtype = r.get("question_type") or ("multiple-choice" if opts else "open")
        if qtype == "multiple-choice":
            text = f"{r['question']}\n\n{_opts_text(opts)}\n\nAnswer with the option's letter: finish with 'Answer: X'."
        else:
            text = f"{r['question']}\n\nAnswer with a single word or number: finish with 'Answer: ...'."
        ans = r["answer"]
        if isinstance(ans, str) and ans.startswith("["):
            ans = ast.literal_eval(ans)
        yield make_record("mmmu", version, "mmmu", "", r["id"],
                          [{"role": "user", "content": parts + [{"type": "text", "text": text}]}],
                          {"answer": ans, "options": opts, "question_type": qtype}, "mmmu")


@builder("visualpuzzles")
def build_visualpuzzles(rows, version="1", asset_root=None, **_):
    for i, r in enumerate(rows):
        iid = f"visualpuzzles_{r.get('idx', i)}"
        opts = r.get("options") or []
        if isinstance(opts, str):
            opts = ast.literal_eval(opts)
        img = _save_image(r["image"], Path(asset_root), iid)
        text = (f"{r['question']}\n\n{_opts_text(opts)}\n\nSolve the puzzle step by step, then finish with "
                "'Answer: X' where X is the letter of your choice.")
        yield make_record("visualpuzzles", version, "visualpuzzles", "", iid,
                          [{"role": "user", "content": [img, {"type": "text", "text": text}]}],
                          {"answer": str(r["answer"]).strip().upper(), "options": opts}, "choice")


@builder("ifeval")
def build_ifeval(rows, version="1", asset_root=None, **_):
    for i, r in enumerate(rows):
        yield make_record("ifeval", version, "ifeval", "", str(i), _user(r["prompt"]),
                          {"key": r.get("key"), "instruction_id_list": list(r["instruction_id_list"]),
                           "kwargs": [{k: v for k, v in (kw or {}).items() if v is not None} for kw in r["kwargs"]]},
                          "ifeval", generation={"max_tokens": 8192})


@builder("repobench")
def build_repobench(rows, version="1", asset_root=None, subdir=None, **_):
    if not subdir:
        raise PackError("repobench needs --subdir (e.g. repobench_if_python, repobench_xff_python)")
    for i, r in enumerate(rows):
        ctx = r.get("context") or ""
        if isinstance(ctx, list):
            ctx = "\n\n".join(f"# Path: {c.get('path', '')}\n{c.get('snippet', '')}" for c in ctx)
        code = (f"# Repository: {r['repo_name']}\n{ctx}\n\n# Path: {r['file_path']}\n"
                f"{r.get('import_statement') or ''}\n{r['cropped_code']}")
        text = ("Complete the next line of the Python file below. Reply with that single line of code only.\n\n"
                f"```python\n{code}\n```")
        yield make_record("repobench", version, "repobench", subdir, f"repobench_{r.get('idx', i)}", _user(text),
                          {"next_line": r["next_line"]}, "repobench", generation={"max_tokens": 1024})


def _code_prompt(task: str) -> str:
    return f"{task}\n\nWrite the complete Python solution in one ```python code block."


@builder("humaneval_chat")
def build_humaneval(rows, version="1", asset_root=None, **_):
    for r in rows:
        text = _code_prompt("Complete this Python function (keep its name and signature):\n\n"
                            f"```python\n{r['prompt']}\n```")
        yield make_record("humaneval_chat", version, "humaneval_chat", "", str(r["task_id"]), _user(text),
                          {"test": r["test"], "entry_point": r["entry_point"], "prompt": r["prompt"]},
                          "code_function")


@builder("mbpp_chat")
def build_mbpp(rows, version="1", asset_root=None, **_):
    for r in rows:
        tests = list(r["test_list"])
        text = _code_prompt(f"{r['text']}\nYour code should pass this test:\n{tests[0]}")
        yield make_record("mbpp_chat", version, "mbpp_chat", "", str(r["task_id"]), _user(text),
                          {"test_list": tests, "test_setup_code": r.get("test_setup_code") or ""}, "code_function")


def _lcb_tests(value):
    if isinstance(value, list):
        return value
    try:
        return json.loads(value)
    except ValueError:
        raise PackError("livecodebench private tests are compressed pickles in the public dataset; "
                        "decode them to a JSON list first (unpickling dataset text is not done here)") from None


@builder("livecodebench")
def build_livecodebench(rows, version="1", asset_root=None, subdir=None, **_):
    subdir = subdir or "codegeneration"
    for r in rows:
        meta = r.get("metadata") or {}
        if isinstance(meta, str):
            meta = json.loads(meta or "{}")
        tests = _lcb_tests(r["public_test_cases"]) + _lcb_tests(r.get("private_test_cases") or "[]")
        starter = r.get("starter_code") or ""
        how = (f"Use this starter code:\n```python\n{starter}\n```" if starter else
               "Read the input from stdin and write the answer to stdout.")
        text = _code_prompt(f"{r['question_content']}\n\n{how}")
        yield make_record("livecodebench", version, "livecodebench", subdir, str(r["question_id"]), _user(text),
                          {"tests": tests, "fn_name": meta.get("func_name")}, "code_tests",
                          generation={"max_tokens": 16384})


@builder("planbench")
def build_planbench(rows, version="1", asset_root=None, subdir=None, **_):
    graders = {"task_3_plan_verification": "planbench_verification", "task_7_plan_execution": "planbench_execution"}
    if subdir not in graders:
        raise PackError(f"planbench builder supports --subdir {sorted(graders)}; other tasks need VAL")
    for r in rows:
        ref = {"ground_truth": r.get("ground_truth") if r.get("ground_truth") is not None else r.get("ground_truth_plan")}
        yield make_record("planbench", version, "planbench", subdir, str(r["instance_id"]), _user(r["query"]),
                          ref, graders[subdir])


@builder("bfcl")
def build_bfcl(rows, version="1", asset_root=None, subdir=None, **_):
    subdir = subdir or "simple"
    for r in rows:
        if "ground_truth" not in r:
            raise PackError(f"bfcl row {r.get('id')}: merge the possible_answer row (ground_truth) into it first")
        turns = r["question"][0] if r["question"] and isinstance(r["question"][0], list) else r["question"]
        system = ("You can call the functions described below. Reply only with the call in Python syntax, "
                  "e.g. [func_name(param=value)], and nothing else.\n\nFunctions:\n"
                  + json.dumps(r["function"], indent=1))
        yield make_record("bfcl", version, "bfcl", subdir, str(r["id"]),
                          [{"role": "system", "content": system}] + list(turns),
                          {"function": r["function"], "ground_truth": r["ground_truth"]}, "bfcl_ast")
