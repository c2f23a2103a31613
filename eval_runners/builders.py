"""Pack builders: a local copy of a benchmark's public dataset rows -> pack records.

Each builder takes the rows in that dataset's own field layout (as published on the Hugging Face
hub or in the benchmark's repository) and writes the prompt in our words. Ids follow the published
result files where they are known (``visualpuzzles_<i>``, ``repobench_<i>``, ifeval / planbench
positional or instance numbers, mmmu ``validation_<Subject>_<n>``). Where the published id is a
row position, a row may carry ``index`` to say its position explicitly (a filtered or reordered
copy of the dataset). Nothing is downloaded.
"""
from __future__ import annotations

import ast
import csv
import hashlib
import json
from pathlib import Path
from typing import Callable

import pyarrow.parquet as pq

from eval_runners.packs import PackError, file_sha256, make_record, shuffled_choices, write_pack


# ---- builders -------------------------------------------------------------------------------

BUILDERS: dict[str, Callable] = {}


def builder(name: str):
    def deco(fn):
        BUILDERS[name] = fn
        return fn
    return deco


def load_rows(path: str | Path) -> list[dict]:
    """Rows of a local dataset copy: .jsonl, .json (list or {"rows": [...]}) , .csv or .parquet."""
    p = Path(path)
    suf = p.suffix.lower()
    if suf in (".jsonl", ".ndjson"):
        return [json.loads(l) for l in p.read_text(encoding="utf-8").splitlines() if l.strip()]
    if suf == ".json":
        data = json.loads(p.read_text(encoding="utf-8"))
        if isinstance(data, dict):          # {"rows": [...]}, {"instances": [...]}, ...: the first list
            data = next((v for v in data.values() if isinstance(v, list)), None)
            if data is None:
                raise PackError(f"{p}: a JSON object without a list of rows")
        return [r.get("row", r) if isinstance(r, dict) else r for r in data]
    if suf == ".csv":
        with open(p, newline="", encoding="utf-8") as fh:
            return list(csv.DictReader(fh))
    if suf == ".parquet":
        return pq.read_table(p).to_pylist()
    raise PackError(f"{p}: unsupported file type (use .jsonl, .json, .csv or .parquet)")


def build_pack(benchmark: str, source: str | Path, out: str | Path | None = None, *,
               version: str = "1", subdir: str | None = None) -> tuple[Path, int]:
    if benchmark not in BUILDERS:
        raise PackError(f"no pack builder for {benchmark!r}; available: {sorted(BUILDERS)}")
    rows = load_rows(source)
    out = Path(out) if out else Path(source).with_name(f"{benchmark}{'_' + subdir if subdir else ''}.pack.jsonl")
    kwargs = {"subdir": subdir} if subdir else {}
    records = list(BUILDERS[benchmark](rows, version=version, asset_root=Path(out).resolve().parent, **kwargs))
    n = write_pack(out, records)
    return out, n

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
        yield make_record("logiqa", version, "logiqa", "", str(r.get("index", i)), _user(text),
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
        yield make_record("ifeval", version, "ifeval", "", str(r.get("index", i)), _user(r["prompt"]),
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
        tid = str(r["task_id"])
        iid = f"Mbpp/{tid}" if tid.isdigit() else tid          # published ids: Mbpp/11 ... Mbpp/510
        yield make_record("mbpp_chat", version, "mbpp_chat", "", iid, _user(text),
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
    """LiveCodeBench rows of one scenario; ids are row positions, as published (so the rows must
    be in the release's order). codegeneration and selfrepair (which the published runner ran as
    code generation): code_generation_lite rows; testoutputprediction: test_generation rows;
    codeexecution: execution rows."""
    subdir = subdir or "codegeneration"
    for i, r in enumerate(rows):
        iid = str(r.get("index", i))
        if subdir in ("codegeneration", "selfrepair"):
            meta = r.get("metadata") or {}
            if isinstance(meta, str):
                meta = json.loads(meta or "{}")
            tests = _lcb_tests(r["public_test_cases"]) + _lcb_tests(r.get("private_test_cases") or "[]")
            starter = r.get("starter_code") or ""
            how = (f"Use this starter code:\n```python\n{starter}\n```" if starter else
                   "Read the input from stdin and write the answer to stdout.")
            text = _code_prompt(f"{r['question_content']}\n\n{how}")
            yield make_record("livecodebench", version, "livecodebench", subdir, iid, _user(text),
                              {"tests": tests, "fn_name": meta.get("func_name"),
                               "question_id": r.get("question_id")}, "code_tests",
                              generation={"max_tokens": 16384})
        elif subdir == "testoutputprediction":
            test = r["test"] if isinstance(r["test"], dict) else json.loads(r["test"])
            test = test[0] if isinstance(test, list) else test
            call = _call_text(r["function_name"], test["input"])
            text = (f"{r['question_content']}\n\n```python\n{r.get('starter_code') or ''}\n```\n\n"
                    f"Complete this assertion with the exact value the function returns (a literal, no "
                    f"function calls), and reply with the full assertion in one ```python block:\n\n"
                    f"assert {call} == ??")
            yield make_record("livecodebench", version, "livecodebench", subdir, iid, _user(text),
                              {"output": test["output"], "question_id": r.get("question_id")}, "lcb_test_output")
        elif subdir == "codeexecution":
            call = _call_text(r["function_name"], r["input"])
            text = (f"```python\n{r['code']}\n```\n\nWhat does `{call}` return? Execute the code step by step, "
                    f"then give the full assertion with the literal value between [ANSWER] and [/ANSWER], "
                    f"e.g. [ANSWER]assert {call} == ...[/ANSWER].")
            yield make_record("livecodebench", version, "livecodebench", subdir, iid, _user(text),
                              {"code": r["code"], "output": r["output"], "call": call}, "lcb_execution")
        else:
            raise PackError(f"livecodebench --subdir must be one of codegeneration, selfrepair, "
                            f"testoutputprediction, codeexecution (got {subdir!r})")


PLANBENCH_ANSWER = ("\n\nWrite your plan between [PLAN] and [PLAN END], one action per line, in the "
                    "same words as the examples.")


@builder("planbench")
def build_planbench(rows, version="1", asset_root=None, subdir=None, **_):
    """PlanBench prompt files (``instances``: instance_id, query, ground_truth_plan). Tasks 3 and
    7 keep the reference text; every other task stores the initial conditions and goal read from
    the query's last [STATEMENT], in the form the plan validator needs."""
    from eval_runners.graders.planbench import statement_problem
    from eval_runners.registry import PLANBENCH_TASKS

    if subdir not in PLANBENCH_TASKS:
        raise PackError(f"planbench needs --subdir, one of {', '.join(PLANBENCH_TASKS)}")
    for r in rows:
        gt = r.get("ground_truth") if r.get("ground_truth") is not None else r.get("ground_truth_plan")
        iid = str(r["instance_id"])
        if subdir == "task_3_plan_verification":
            ref, grader_name, cfg = {"ground_truth": gt}, "planbench_verification", {}
        elif subdir == "task_7_plan_execution":
            ref, grader_name, cfg = {"ground_truth": gt}, "planbench_execution", {}
        else:
            try:
                init, goal = statement_problem(r["query"])
            except ValueError as exc:
                raise PackError(f"planbench {subdir} instance {iid}: {exc}") from None
            ref, grader_name = {"init": init, "goal": goal, "ground_truth_plan": gt}, "planbench_plan"
            cfg = {"optimal": True} if subdir == "task_2_plan_optimality" else {}
        yield make_record("planbench", version, "planbench", subdir, iid, _user(r["query"]), ref, grader_name, cfg)


def _answer_last(text: str) -> str:
    return f"{text}\n\nThink it through, then end your reply with a line 'Answer: ' followed by the answer alone."


@builder("acp_gen")
def build_acp(rows, version="1", asset_root=None, subdir=None, **_):
    """ACPBench Hard generative rows (context, question, answer, group, PDDL_domain,
    PDDL_problem); ids are positions in the task's split, as published (0-129)."""
    from eval_runners.graders.acp import GROUPS

    if subdir not in GROUPS:
        raise PackError(f"acp_gen needs --subdir, one of {', '.join(GROUPS)}")
    for i, r in enumerate(rows):
        ref = {k: r[k] for k in ("group", "answer", "PDDL_domain", "PDDL_problem") if k in r}
        ref.setdefault("group", GROUPS[subdir])
        ref["question"] = r["question"]
        text = _answer_last(f"{r.get('context', '').strip()}\n\n{r['question'].strip()}")
        yield make_record("acp_gen", version, "acp_gen", subdir, str(r.get("index", i)), _user(text), ref, "acp_gen")


@builder("lifbench")
def build_lifbench(rows, version="1", asset_root=None, subdir=None, **_):
    """LIFBench prompt files (prompt, param, label, ins_id, param_id, length). The id is
    ``<ins_id>_<param_id>_<length>`` (the published ids' shape, e.g. ``11_4_6``; inferred) unless
    the row carries ``id``. The prompt is sent as is."""
    from eval_runners.registry import LIFBENCH_TASKS

    if subdir not in LIFBENCH_TASKS:
        raise PackError(f"lifbench needs --subdir, one of {', '.join(LIFBENCH_TASKS)}")
    for r in rows:
        iid = str(r["id"]) if r.get("id") is not None else f"{r['ins_id']}_{r['param_id']}_{r['length']}"
        ref = {"task": subdir, "prompt": r["prompt"], "param": r["param"], "label": r.get("label")}
        yield make_record("lifbench", version, "lifbench", subdir, iid, _user(r["prompt"]), ref, "lifbench")


def _call_text(fn: str, args: str) -> str:
    args = str(args).strip()
    return args if args.startswith(f"{fn}(") else f"{fn}({args})"


@builder("debugbench")
def build_debugbench(rows, version="1", asset_root=None, **_):
    """DebugBench rows (slug, language, subtype, question, examples, solution, buggy_code). Id
    ``<language>_<subtype>_<slug>`` as published. Python rows get local tests from the problem's
    examples; a row whose examples cannot be read gets none (the runner then refuses it: only the
    LeetCode judge could grade it)."""
    for r in rows:
        lang = r["language"]
        iid = f"{lang}_{r['subtype']}_{r['slug']}"
        fence = "python" if lang.startswith("python") else lang
        text = (f"{r['question'].strip()}\n\nThe following {lang} code has a bug. Fix it and reply with the "
                f"whole corrected code in one ```{fence} code block.\n\n```{fence}\n{r['buggy_code']}\n```")
        tests = leetcode_tests(r) if lang.startswith("python") else []
        yield make_record("debugbench", version, "debugbench", "", iid, _user(text),
                          {"tests": tests, "slug": r["slug"], "language": lang},
                          "debugbench_python")


def _literal(text: str):
    t = text.strip().rstrip(",").strip()
    try:
        return json.loads(t)
    except ValueError:
        return ast.literal_eval(t)


def leetcode_tests(row) -> list[dict]:
    """[{'method', 'kwargs', 'output'}] from LeetCode-style examples ('Input: a = [1], b = 2' /
    'Output: 3'); [] when any example cannot be read or the problem uses linked structures."""
    import re
    code = row.get("solution") or row.get("buggy_code") or ""
    m = re.search(r"class\s+Solution\b.*?\n\s+def\s+(\w+)\s*\(\s*self", code, re.S)
    if not m or re.search(r"\b(ListNode|TreeNode|Node)\b", code):
        return []
    method, out = m.group(1), []
    examples = row.get("examples") or []
    if isinstance(examples, str):
        examples = [examples]
    for ex in examples:
        im = re.search(r"Input:\s*(.*?)\s*Output:\s*(.*?)(?:\n|Explanation:|$)", ex, re.S)
        if not im:
            return []
        args, result = im.group(1).strip(), im.group(2).strip()
        names = list(re.finditer(r"(?:^|,\s*)([A-Za-z_]\w*)\s*=\s*", args))
        if not names:
            return []
        kwargs = {}
        try:
            for k, nm in enumerate(names):
                end = names[k + 1].start() if k + 1 < len(names) else len(args)
                kwargs[nm.group(1)] = _literal(args[nm.end():end])
            expected = _literal(result)
        except (ValueError, SyntaxError):
            return []
        out.append({"method": method, "kwargs": kwargs, "output": expected})
    return out


VWB_PROMPTS = {
    "web_caption": "Write the meta description of this webpage: one or two sentences on what it is for.",
    "heading_ocr": "Read the main heading of this webpage. Reply with the heading text only.",
    "element_ocr": "Read the text inside the red box of this webpage screenshot. Reply with that text only.",
    "webqa": "Answer the question about this webpage briefly (a few words).\n\nQuestion: {question}",
    "element_ground": ("Which of the labelled boxes (A to H) holds this element: {elem_desc}? "
                       "Finish with 'Answer: X'."),
    "action_prediction": ("What would clicking the element in the red box open?\n\n{options}\n\n"
                          "Finish with 'Answer: X'."),
    "action_ground": "Which of the labelled boxes (A to H) should be clicked to {instruction}? Finish with 'Answer: X'.",
}


@builder("visualwebbench")
def build_visualwebbench(rows, version="1", asset_root=None, **_):
    """VisualWebBench rows (task_type, image, question / elem_desc / instruction, options,
    answer). Ids ``<task_type>_<n>`` with n the row's position within its task, as published."""
    from eval_runners.graders.visualwebbench import CHOICE_TASKS

    seen: dict[str, int] = {}
    for r in rows:
        task = r["task_type"]
        if task not in VWB_PROMPTS:
            raise PackError(f"visualwebbench task_type {task!r} is unknown")
        n = seen[task] = seen.get(task, -1) + 1
        iid = f"{task}_{r.get('index', n)}"
        opts = r.get("options") or []
        if isinstance(opts, str):
            opts = ast.literal_eval(opts)
        text = VWB_PROMPTS[task].format(question=r.get("question", ""), elem_desc=r.get("elem_desc", ""),
                                        instruction=r.get("instruction", ""),
                                        options=_opts_text(opts) if opts and isinstance(opts[0], str) else "")
        img = _save_image(r["image"], Path(asset_root), iid)
        ans = r["answer"]
        if task in CHOICE_TASKS and isinstance(ans, int):
            ans = LETTERS[ans]
        yield make_record("visualwebbench", version, "visualwebbench", "", iid,
                          [{"role": "user", "content": [img, {"type": "text", "text": text}]}],
                          {"task_type": task, "answer": ans, "n_choices": len(opts) or 8}, "visualwebbench")


@builder("bfcl")
def build_bfcl(rows, version="1", asset_root=None, subdir=None, **_):
    subdir = subdir or "simple"
    for r in rows:
        if "ground_truth" not in r and "irrelevance" not in subdir and "relevance" not in subdir:
            raise PackError(f"bfcl row {r.get('id')}: merge the possible_answer row (ground_truth) into it first")
        turns = r["question"][0] if r["question"] and isinstance(r["question"][0], list) else r["question"]
        system = ("You can call the functions described below. Reply only with the call in Python syntax, "
                  "e.g. [func_name(param=value)], and nothing else.\n\nFunctions:\n"
                  + json.dumps(r["function"], indent=1))
        yield make_record("bfcl", version, "bfcl", subdir, str(r["id"]),
                          [{"role": "system", "content": system}] + list(turns),
                          {"function": r["function"], "ground_truth": r.get("ground_truth") or [], "category": subdir},
                          "bfcl_ast")
