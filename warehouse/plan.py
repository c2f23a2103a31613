"""What a model still has to be run on for the current fits (`pace plan`, `pace run`'s default plan),
and what each benchmark's calls buy.

Only instances that can change a prediction are planned: those with a non-zero weight in at least
one current fit (abs or pair). An instance selected by the fit but weighted 0 everywhere costs a
call and changes nothing, so it is left out (and counted).

What the calls buy. The abs predictor is ``intercept + sum_i w_i (s_i - c_i)``; until the model is
scored on instance i its score counts as the centre ``c_i``, so the prediction is uncertain by
the spread of ``w_i (s_i - c_i)``. Taking the training models' scores as the spread of a new
model's score (variance ``v_i`` across them) and instances as independent, the instances a
benchmark still owes add ``V_b = sum_i w_i^2 v_i`` to the prediction's variance. ``pace plan``
reports, per benchmark and target, the half-width ``z * sqrt(V_b)`` (in points of the target's
score, ``z`` the normal quantile of the fit's interval level): how much wider the interval stays
if that benchmark is skipped, i.e. what its calls buy. ``share`` is ``V_b`` over all the model
still owes. Benchmarks with a small share are the ones to cut first when stopping early.
"""
from __future__ import annotations

from statistics import NormalDist

import duckdb

from eval_runners.registry import get


# |weight| at or below this is 0 (fitted weights of dropped columns come back as exact zeros or
# as round-off of order 1e-17).
ZERO_WEIGHT = 1e-12

_MISSING = """
    WITH useful AS (
        SELECT benchmark, subdir, instance_id
        FROM proxy_instances
        GROUP BY ALL
        HAVING max(abs(weight)) > ?
    )
    SELECT u.benchmark, u.subdir, u.instance_id
    FROM useful AS u
    ANTI JOIN (SELECT * FROM scores WHERE model = ? AND score IS NOT NULL) AS s
      USING (benchmark, subdir, instance_id)
    ORDER BY ALL"""

_ZERO_ONLY = """
    SELECT count(*) FROM (
        SELECT benchmark, subdir, instance_id FROM proxy_instances GROUP BY ALL
        HAVING max(abs(weight)) <= ?) AS z
    ANTI JOIN (SELECT * FROM scores WHERE model = ? AND score IS NOT NULL) AS s
      USING (benchmark, subdir, instance_id)"""

_VARIANCE = """
    WITH trained AS (
        SELECT DISTINCT unnest(trained_on) AS model FROM current_fits WHERE task = 'abs'
    ),
    owed AS (
        SELECT p.target, p.benchmark, p.subdir, p.instance_id, p.weight
        FROM proxy_instances AS p
        ANTI JOIN (SELECT * FROM scores WHERE model = ? AND score IS NOT NULL) AS s
          USING (benchmark, subdir, instance_id)
        WHERE p.task = 'abs'
    ),
    spread AS (   -- only the owed instances: grouping every instance of a 10^8-row warehouse costs seconds
        SELECT s.benchmark, s.subdir, s.instance_id, coalesce(var_pop(s.score), 0) AS v
        FROM scores AS s JOIN trained USING (model)
        SEMI JOIN (SELECT DISTINCT benchmark, subdir, instance_id FROM owed) AS o USING (benchmark, subdir, instance_id)
        WHERE s.score IS NOT NULL
        GROUP BY ALL
    )
    SELECT o.benchmark, o.target, sum(o.weight * o.weight * coalesce(sp.v, 0)) AS var
    FROM owed AS o LEFT JOIN spread AS sp USING (benchmark, subdir, instance_id)
    GROUP BY ALL
    ORDER BY ALL"""


def plan_rows(con: duckdb.DuckDBPyConnection, model: str) -> list[tuple[str, str, str]]:
    """(benchmark, subdir, instance_id) of every instance with a non-zero weight in a current fit
    that ``model`` has no usable score for. Empty when there is no fit (see :func:`has_fits`)."""
    return [tuple(r) for r in con.execute(_MISSING, [ZERO_WEIGHT, model]).fetchall()]


def zero_weight_left_out(con: duckdb.DuckDBPyConnection, model: str) -> int:
    """Selected instances the model lacks that weigh 0 in every current fit (not planned)."""
    return con.execute(_ZERO_ONLY, [ZERO_WEIGHT, model]).fetchall()[0][0]


def has_fits(con: duckdb.DuckDBPyConnection) -> bool:
    return con.execute("SELECT count(*) FROM current_fits").fetchall()[0][0] > 0


def interval_z(con: duckdb.DuckDBPyConnection) -> float:
    level = con.execute("SELECT any_value(interval_level) FROM current_fits WHERE task = 'abs'").fetchall()[0][0]
    level = 0.8 if level is None or not 0 < level < 1 else float(level)
    return NormalDist().inv_cdf(0.5 + level / 2)


def plan_value(con: duckdb.DuckDBPyConnection, model: str) -> dict:
    """What each benchmark's outstanding calls buy (see the module doc).

    Returns ``{"z": z, "targets": [...], "total": {target: half-width},
    "per_benchmark": {benchmark: {"half_width": {target: hw}, "share": s}}}`` where half-widths
    are in score points (0-1 scale) and ``share`` is the benchmark's part of the summed variance
    over all targets.
    """
    z = interval_z(con)
    rows = con.execute(_VARIANCE, [model]).fetchall()
    targets = sorted({t for _, t, _ in rows})
    per: dict[str, dict] = {}
    total_var: dict[str, float] = {t: 0.0 for t in targets}
    for bench, target, var in rows:
        per.setdefault(bench, {"var": {}})["var"][target] = float(var)
        total_var[target] += float(var)
    grand = sum(total_var.values())
    out = {}
    for bench, d in per.items():
        out[bench] = {"half_width": {t: z * d["var"].get(t, 0.0) ** 0.5 for t in targets},
                      "share": (sum(d["var"].values()) / grand) if grand > 0 else 0.0}
    return {"z": z, "targets": targets, "total": {t: z * v ** 0.5 for t, v in total_var.items()},
            "per_benchmark": out}


def call_of(benchmark: str, subdir: str, instance_id: str) -> tuple[str, str, str]:
    """The runner call that scores this row: (benchmark, call_subdir, call_id). One call can score
    several rows (ifeval's four metric subdirs, repobench's three metrics, logiqa's two filters); a
    benchmark or row the runner cannot map is a call of its own."""
    try:
        call_subdir, call_id = get(benchmark).call_key(subdir, instance_id)
    except (KeyError, ValueError):
        call_subdir, call_id = subdir, instance_id
    return benchmark, call_subdir, call_id


def plan_calls(rows: list[tuple[str, str, str]]) -> tuple[list[tuple[str, str, str]], dict[str, dict]]:
    """Deduplicate plan rows into API calls (runners.md §5): rows sharing a call key are one call.

    Returns (calls in first-seen order as (benchmark, call_subdir, call_id), per benchmark
    {'instances': rows, 'calls': calls, 'subtasks': distinct call subdirs}).
    """
    seen: dict[tuple[str, str, str], None] = {}
    per: dict[str, dict] = {}
    for benchmark, subdir, instance_id in rows:
        key = call_of(benchmark, subdir, instance_id)
        call_subdir = key[1]
        stats = per.setdefault(benchmark, {"instances": 0, "calls": 0, "subtasks": set()})
        stats["instances"] += 1
        if key not in seen:
            seen[key] = None
            stats["calls"] += 1
            stats["subtasks"].add(call_subdir)
    for stats in per.values():
        stats["subtasks"] = len(stats["subtasks"])
    return list(seen), per
