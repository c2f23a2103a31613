"""Shared helpers for the runner tests: tiny packs and plans written to tmp_path."""
from __future__ import annotations

import re

from eval_runners.packs import make_record, write_pack

KEY = "sk-live-TOPSECRET-4c1d9e2b"


def aime_pack(tmp_path, n=4, name="aime.pack.jsonl"):
    recs = [make_record("aime25", "t1", "aime25", "", str(i),
                        [{"role": "user", "content": f"AIME question {i}: what is {i} + 100?"}],
                        {"answer": str(i + 100)}, "exact_number", generation={"max_tokens": 1000})
            for i in range(n)]
    path = tmp_path / name
    write_pack(path, recs)
    return path


def aime_script(wrong=(), prompt_tokens=100, completion_tokens=20):
    """Answer 'AIME question i' correctly (\\boxed{i+100}) unless i is in ``wrong``."""
    from er_chat_server import completion, prompt_of

    def script(body, srv):
        m = re.search(r"question (\d+)", prompt_of(body))
        i = int(m.group(1)) if m else -1
        ans = i + 100 if i not in wrong else 7
        return completion(f"Thinking... so \\boxed{{{ans}}}", prompt_tokens, completion_tokens)
    return script


def aime_plan(n=4, subdir="exact_match"):
    return [("aime25", subdir, str(i)) for i in range(n)]
