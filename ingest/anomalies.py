"""Anomalies of an ingested tree, found with SQL over the rows that came from its files.

Runs inside the ingest transaction, on the temporary table ``tree_files(path)`` (the tree's
files), so ``--strict`` can still roll everything back.
"""
from __future__ import annotations

import difflib

import duckdb

from ingest.report import Anomaly

_TREE_ROWS = """
    SELECT s.*, b.role FROM scores s
    JOIN tree_files f ON s.source_ref = f.path
    LEFT JOIN benchmarks b USING (benchmark)
"""


def _leaf(benchmark: str, subdir: str) -> str:
    return f"{benchmark}/{subdir}" if subdir else benchmark


def _short(names: list[str], limit: int = 6) -> str:
    return ", ".join(names[:limit]) + (f" (+{len(names) - limit} more)" if len(names) > limit else "")


def _closest_model(name: str, known: set[str]) -> str | None:
    """The known model a misnamed file most likely belongs to: the longest known name the file name
    starts with (``DeepSeek-V3.2-Reasoner`` -> ``DeepSeek-V3.2``), else the closest spelling."""
    prefixes = sorted((k for k in known if name.startswith(k)), key=len, reverse=True)
    if prefixes:
        return prefixes[0]
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return close[0] if close else None


def find_anomalies(con: duckdb.DuckDBPyConnection, *, imported: bool = False) -> list[Anomaly]:
    """``imported``: the rows come from ``pace import`` (usually one model's harness output), so
    "models missing from a leaf" is not asked; instead imported ids that the leaf's other rows do
    not know are reported (a wrong ``id`` in the map is the likely cause)."""
    out: list[Anomaly] = []
    known = {m for (m,) in con.execute(
        "SELECT DISTINCT s.model FROM scores s JOIN benchmarks b USING (benchmark) WHERE b.role = 'source'"
    ).fetchall()}

    # Files whose (aliased) model has no source rows anywhere: usually a misnamed file.
    if known:
        rows = con.execute(f"""
            SELECT model, list(DISTINCT source_ref ORDER BY source_ref) FROM ({_TREE_ROWS})
            GROUP BY model ORDER BY model""").fetchall()
        for model, paths in rows:
            if model not in known:
                close = _closest_model(model, known)
                hint = f"; hint: `pace alias add {model} {close}`" if close else ""
                out.append(Anomaly("unknown_model", _short(paths, 3),
                                   f"file name {model!r} is not a known model (no source rows){hint}"))

    if imported:
        out += _unknown_ids(con)

    # Known models without a file in a leaf.
    rows = [] if imported else con.execute(f"""
        WITH leaves AS (SELECT DISTINCT benchmark, subdir FROM ({_TREE_ROWS})),
             present AS (SELECT DISTINCT benchmark, subdir, model FROM ({_TREE_ROWS}))
        SELECT l.benchmark, l.subdir, list(k.model ORDER BY k.model)
        FROM leaves l CROSS JOIN (SELECT unnest(?::VARCHAR[]) AS model) k
        ANTI JOIN present p ON p.benchmark = l.benchmark AND p.subdir = l.subdir AND p.model = k.model
        GROUP BY ALL ORDER BY ALL""", [sorted(known)]).fetchall()
    for benchmark, subdir, missing in rows:
        out.append(Anomaly("missing_from_leaf", _leaf(benchmark, subdir),
                           f"{len(missing)} of {len(known)} models have no file: {_short(missing)}"))

    # Id sets that differ between the models of a leaf (targets: rows per model differ).
    rows = con.execute(f"""
        WITH per_model AS (
            SELECT benchmark, subdir, role, model, count(*) AS n FROM ({_TREE_ROWS}) GROUP BY ALL),
        leaf AS (
            SELECT benchmark, subdir, count(DISTINCT instance_id) AS n_union FROM ({_TREE_ROWS}) GROUP BY ALL)
        SELECT p.benchmark, p.subdir, any_value(p.role), any_value(l.n_union), min(p.n), max(p.n),
               list(p.model || ' ' || p.n ORDER BY p.n, p.model) FILTER (WHERE p.n < l.n_union)
        FROM per_model p JOIN leaf l USING (benchmark, subdir)
        GROUP BY ALL HAVING min(p.n) < any_value(l.n_union) OR count(DISTINCT p.n) > 1
        ORDER BY ALL""").fetchall()
    for benchmark, subdir, role, n_union, lo, hi, short_models in rows:
        kind = "target_rows_differ" if role == "target" else "differing_ids"
        out.append(Anomaly(kind, _leaf(benchmark, subdir),
                           f"rows per model {lo}-{hi}, union of ids {n_union}; fewer: {_short(short_models or [])}"))

    # Scores outside [0, 1]: kept as they are, reported.
    rows = con.execute(f"""
        SELECT source_ref, instance_id, score FROM ({_TREE_ROWS})
        WHERE score < 0 OR score > 1 ORDER BY source_ref, instance_id""").fetchall()
    for path, instance_id, score in rows:
        out.append(Anomaly("out_of_range", path, f"id {instance_id!r} score {score!r} outside [0, 1] (kept)"))

    # Per-file counts recorded at parse time.
    rows = con.execute("""
        SELECT f.path, sf.n_duplicates, sf.n_null_scores, coalesce(sf.duplicates, 'first'), coalesce(sf.n_runs, 1),
               sf.run_means, coalesce(sf.conflicting_ids, []), sf.n_rows
        FROM tree_files f JOIN score_files sf USING (path)
        WHERE sf.n_duplicates > 0 OR sf.n_null_scores > 0 ORDER BY f.path""").fetchall()
    for path, dups, nulls, policy, n_runs, means, conflicts, n_kept in rows:
        other = "last" if policy == "first" else "first"
        if n_runs > 1:
            shown = ", ".join(f"{100 * m:.1f}%" if m is not None else "n/a" for m in means or [])
            out.append(Anomaly("repeated_runs", path,
                               f"holds {n_runs} runs over the same {n_kept} ids (run means {shown}); kept the "
                               f"{policy} run (--duplicates {other} keeps the {other})"))
        if conflicts:
            out.append(Anomaly("conflicting_duplicates", path,
                               f"{len(conflicts)} id(s) repeated with different scores, {policy} occurrence kept: "
                               f"{_short(list(conflicts), 4)}", items=list(conflicts)))
        if dups and n_runs == 1:
            out.append(Anomaly("duplicate_ids", path, f"{dups} repeated row(s) dropped ({policy} occurrence kept)"))
        if nulls:
            out.append(Anomaly("null_scores", path, f"{nulls} empty or non-numeric score(s) stored as NULL"))
    # Collapsed cells (sql/016_collapsed_cells.sql): a model at ~0 on a cell the others mostly solve, or a
    # file listing only failed instances. The default method's ability leaves them out; compat keeps them.
    rows = con.execute("""
        SELECT c.model, c.benchmark, c.subdir, c.facet, c.reason, c.mean, c.others_median, c.n_rows, c.n_instances
        FROM collapsed_cells AS c
        SEMI JOIN (SELECT DISTINCT model, benchmark, subdir FROM (""" + _TREE_ROWS + """)) AS t
          USING (model, benchmark, subdir)
        ORDER BY c.reason, c.benchmark, c.subdir, c.facet, c.model""").fetchall()
    for model, benchmark, subdir, facet, reason, mean, others, n_rows, n_instances in rows:
        where = _leaf(benchmark, subdir) + (f" [{facet}]" if facet else "")
        if reason == "failures_only":
            detail = f"{model}: lists only failed instances ({n_rows} of {n_instances}, all 0)"
        else:
            detail = (f"{model}: mean {mean:.1%} while the other models' median is {others:.1%} "
                      "(a harness or answer-format failure?)")
        out.append(Anomaly(f"collapsed_{reason}", where, detail + "; left out of the ability scale"))
    return out


def _unknown_ids(con: duckdb.DuckDBPyConnection) -> list[Anomaly]:
    """Imported leaves whose ids are not all among the ids other files already hold for the leaf."""
    rows = con.execute(f"""
        WITH mine AS (SELECT DISTINCT benchmark, subdir, instance_id FROM ({_TREE_ROWS})),
        others AS (
            SELECT DISTINCT s.benchmark, s.subdir, s.instance_id FROM scores s
            SEMI JOIN (SELECT DISTINCT benchmark, subdir FROM mine) l USING (benchmark, subdir)
            WHERE s.source_ref NOT IN (SELECT path FROM tree_files)),
        known AS (SELECT benchmark, subdir, count(*) AS n FROM others GROUP BY ALL)
        SELECT m.benchmark, m.subdir, count(*), count(*) FILTER (WHERE o.instance_id IS NULL), any_value(k.n),
               list(m.instance_id ORDER BY m.instance_id) FILTER (WHERE o.instance_id IS NULL)
        FROM mine m JOIN known k USING (benchmark, subdir)
        LEFT JOIN others o USING (benchmark, subdir, instance_id)
        GROUP BY ALL HAVING count(*) FILTER (WHERE o.instance_id IS NULL) > 0
        ORDER BY ALL""").fetchall()
    return [Anomaly("unknown_ids", _leaf(benchmark, subdir),
                    f"{n_new} of {n_mine} imported ids are not among the {n_known} ids the leaf already holds "
                    f"(e.g. {_short(list(new_ids), 3)}): check `id` in the map", items=list(new_ids))
            for benchmark, subdir, n_mine, n_new, n_known, new_ids in rows]
