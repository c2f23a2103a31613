"""What a model still has to be run on for the current fits (`pace plan`, `pace run`'s default plan)."""
from __future__ import annotations

import duckdb

_MISSING = """
    SELECT DISTINCT p.benchmark, p.subdir, p.instance_id
    FROM proxy_instances AS p
    ANTI JOIN (SELECT * FROM scores WHERE model = ? AND score IS NOT NULL) AS s
      USING (benchmark, subdir, instance_id)
    ORDER BY ALL"""


def plan_rows(con: duckdb.DuckDBPyConnection, model: str) -> list[tuple[str, str, str]]:
    """(benchmark, subdir, instance_id) of every instance of the current fits that ``model`` has no
    usable score for. Empty when there is no fit (see :func:`has_fits`)."""
    return [tuple(r) for r in con.execute(_MISSING, [model]).fetchall()]


def has_fits(con: duckdb.DuckDBPyConnection) -> bool:
    return con.execute("SELECT count(*) FROM current_fits").fetchall()[0][0] > 0


def plan_calls(rows: list[tuple[str, str, str]]) -> tuple[list[tuple[str, str, str]], dict[str, dict]]:
    """Deduplicate plan rows into API calls (runners.md §5): rows sharing a call key are one call.

    Returns (calls in first-seen order as (benchmark, call_subdir, call_id), per benchmark
    {'instances': rows, 'calls': calls, 'subtasks': distinct call subdirs}).
    """
    from eval_runners.registry import get

    seen: dict[tuple[str, str, str], None] = {}
    per: dict[str, dict] = {}
    for benchmark, subdir, instance_id in rows:
        try:
            call_subdir, call_id = get(benchmark).call_key(subdir, instance_id)
        except KeyError:                    # a benchmark the runner does not know: one call per row
            call_subdir, call_id = subdir, instance_id
        key = (benchmark, call_subdir, call_id)
        stats = per.setdefault(benchmark, {"instances": 0, "calls": 0, "subtasks": set()})
        stats["instances"] += 1
        if key not in seen:
            seen[key] = None
            stats["calls"] += 1
            stats["subtasks"].add(call_subdir)
    for stats in per.values():
        stats["subtasks"] = len(stats["subtasks"])
    return list(seen), per
