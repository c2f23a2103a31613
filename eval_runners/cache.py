"""The response cache as the ``responses`` table: every answer is stored (committed) as soon as
it arrives, so a crash or ``kill -9`` never loses a paid response, and a rerun pays nothing for it."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import duckdb

from eval_runners.client import CallResult


def _now():
    return datetime.now(timezone.utc).replace(tzinfo=None)


class DuckDBStore:
    def __init__(self, con: duckdb.DuckDBPyConnection, run_id: str):
        self.con = con
        self.run_id = run_id

    def get(self, key: str) -> CallResult | None:
        row = self.con.execute(
            """SELECT response_text, finish_reason, prompt_tokens, completion_tokens, reasoning_tokens,
                      latency_s, cost_usd, attempts, params_sent
               FROM responses WHERE request_hash = ? AND error IS NULL AND response_text IS NOT NULL""",
            [key]).fetchone()
        if row is None:
            return None
        return CallResult(text=row[0], finish_reason=row[1], prompt_tokens=row[2], completion_tokens=row[3],
                          reasoning_tokens=row[4], latency_s=row[5], cost_usd=row[6], attempts=row[7],
                          params_sent=json.loads(row[8]) if row[8] else None, cached=True)

    def stored_keys(self, keys: list[str]) -> set[str]:
        if not keys:
            return set()
        rows = self.con.execute(
            "SELECT request_hash FROM responses WHERE error IS NULL AND response_text IS NOT NULL "
            "AND request_hash IN (SELECT unnest(?))", [keys]).fetchall()
        return {r[0] for r in rows}

    def put(self, key, model, messages, params, result: CallResult, meta: dict | None) -> None:
        meta = meta or {}
        self.con.execute(
            """INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            [key, self.run_id, model, meta.get("benchmark", ""), meta.get("subdir", ""),
             meta.get("instance_id", ""), json.dumps(params, sort_keys=True),
             json.dumps(result.params_sent, sort_keys=True) if result.params_sent is not None else None,
             result.text, result.finish_reason, result.prompt_tokens, result.completion_tokens,
             result.reasoning_tokens, result.latency_s, result.cost_usd, result.attempts, result.error,
             meta.get("grader"), meta.get("grader_version"), _now()])
