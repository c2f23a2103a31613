"""The response cache as the ``responses`` table: every answer is stored (committed) as soon as
it arrives, so a crash or ``kill -9`` never loses a paid response, and a rerun pays nothing for it.

Everything written is cleaned first (:func:`client.clean_text`): a reply or an error text holding
a lone surrogate or a NUL, or a huge reply, is stored in a safe form instead of failing the insert
(which would lose a response that was already paid for); and text shaped like a credential is
removed (:func:`secrets.redact`)."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import duckdb

from eval_runners.client import MAX_REPLY_CHARS, CallResult, clean_text
from eval_runners.secrets import redact

COLUMNS = ("request_hash", "run_id", "model", "benchmark", "subdir", "instance_id", "params", "params_sent",
           "response_text", "finish_reason", "prompt_tokens", "completion_tokens", "reasoning_tokens",
           "latency_s", "cost_usd", "attempts", "error", "error_kind", "note", "grader", "grader_version",
           "created_at")


def _now():
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _json(obj) -> str | None:
    # ensure_ascii: a lone surrogate in a parameter becomes a \ud800 escape, never raw text
    return None if obj is None else json.dumps(obj, sort_keys=True)


class DuckDBStore:
    def __init__(self, con: duckdb.DuckDBPyConnection, run_id: str):
        self.con = con
        self.run_id = run_id

    def get(self, key: str) -> CallResult | None:
        row = self.con.execute(
            """SELECT response_text, finish_reason, prompt_tokens, completion_tokens, reasoning_tokens,
                      latency_s, cost_usd, attempts, params_sent, note
               FROM responses WHERE request_hash = ? AND error IS NULL AND response_text IS NOT NULL""",
            [key]).fetchone()
        if row is None:
            return None
        return CallResult(text=row[0], finish_reason=row[1], prompt_tokens=row[2], completion_tokens=row[3],
                          reasoning_tokens=row[4], latency_s=row[5], cost_usd=row[6], attempts=row[7],
                          params_sent=json.loads(row[8]) if row[8] else None, cached=True, note=row[9])

    def stored_keys(self, keys: list[str]) -> set[str]:
        if not keys:
            return set()
        rows = self.con.execute(
            "SELECT request_hash FROM responses WHERE error IS NULL AND response_text IS NOT NULL "
            "AND request_hash IN (SELECT unnest(?))", [keys]).fetchall()
        return {r[0] for r in rows}

    def put(self, key, model, messages, params, result: CallResult, meta: dict | None) -> None:
        meta = meta or {}

        def clean(v, limit=None):
            return v if not isinstance(v, str) else clean_text(redact(v), limit)[0]
        text, notes = (None, []) if result.text is None else clean_text(redact(result.text), MAX_REPLY_CHARS)
        note = "; ".join(([result.note] if result.note else []) + notes) or None
        values = [key, self.run_id, clean(model), clean(meta.get("benchmark", "")), clean(meta.get("subdir", "")),
                  clean(meta.get("instance_id", "")), _json(params), _json(result.params_sent), text,
                  clean(result.finish_reason, 64), result.prompt_tokens, result.completion_tokens,
                  result.reasoning_tokens, result.latency_s, result.cost_usd, result.attempts,
                  clean(result.error, 10_000), result.error_kind, clean(note, 2_000),
                  clean(meta.get("grader")), clean(meta.get("grader_version")), _now()]
        self.con.execute(f"INSERT OR REPLACE INTO responses ({', '.join(COLUMNS)}) "
                         f"VALUES ({', '.join('?' * len(COLUMNS))})", values)
