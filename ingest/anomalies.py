"""Anomalies of an ingested tree, from per-file facts rather than row by row.

Runs inside the ingest transaction, on the temporary table ``tree_files(path)`` (the tree's
files), so ``--strict` can still roll everything back. A tree of 10^8 rows must not be scanned
row by row several times: the rows per file (one aggregate over ``scores.source_ref``) and what
``score_files`` recorded at parse time (counts, the fingerprint of each file's id set) answer
almost everything. Rows are read only where the answer is in them: scores outside [0, 1] (a
filter DuckDB's min/max zone maps skip where none is) and the id union of leaves whose files
do not all hold the same ids.
"""
from __future__ import annotations

import difflib
import re

import duckdb

from ingest.noise import second_spelling_of
from ingest.preference import BOTH_TABLES, PRESENT_ROWS
from ingest.report import EXAMPLES, Anomaly
from warehouse.errors import pace_command

# Rows per ingested file (one pass over a dictionary-compressed column; rows a second source's preferred
# rows keep out of scores count too: ingest.preference), then one row per file of the tree that has rows:
# its model, leaf, role, rows and id fingerprint.
_FILE_ROWS = f"CREATE OR REPLACE TEMP TABLE file_rows AS {PRESENT_ROWS}"
_TREE_FILES = """
    CREATE OR REPLACE TEMP TABLE tree_file_rows AS
    SELECT sf.path, sf.model, sf.benchmark, sf.subdir, b.role, r.n, sf.ids_hash
    FROM tree_files AS t
    JOIN score_files AS sf USING (path)
    JOIN file_rows AS r USING (path)
    LEFT JOIN benchmarks AS b USING (benchmark)
"""


def _leaf(benchmark: str, subdir: str) -> str:
    return f"{benchmark}/{subdir}" if subdir else benchmark


def _short(names: list[str], limit: int = 6) -> str:
    return ", ".join(names[:limit]) + (f" (+{len(names) - limit} more)" if len(names) > limit else "")


def _version_numbers(name: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", name)]


def _closest_model(name: str, known: set[str]) -> str | None:
    """The known model a misnamed file most likely belongs to: one it spells another way
    (``ingest.noise.second_spelling_of``), else the longest known name the file name starts with
    (``DeepSeek-V3.2-Reasoner`` -> ``DeepSeek-V3.2``), else the closest spelling. A name with other
    version numbers is another model, never a misspelling (``GLM-5.1`` is not ``GLM-5``), so the last
    two rules offer only names with the same numbers."""
    spelled = second_spelling_of(name, sorted(known))
    if spelled:
        return spelled
    same = sorted(k for k in known if _version_numbers(k) == _version_numbers(name))
    prefixes = sorted((k for k in same if name.startswith(k)), key=len, reverse=True)
    if prefixes:
        return prefixes[0]
    close = difflib.get_close_matches(name, same, n=1, cutoff=0.6)
    return close[0] if close else None


def find_anomalies(con: duckdb.DuckDBPyConnection, *, imported: bool = False) -> list[Anomaly]:
    """``imported``: the rows come from ``pace import`` (usually one model's harness output), so
    "models missing from a leaf" is not asked; instead imported ids that the leaf's other rows do
    not know are reported (a wrong ``id`` in the map is the likely cause)."""
    con.execute(_FILE_ROWS)
    con.execute(_TREE_FILES)
    out: list[Anomaly] = []
    known = {m for (m,) in con.execute("""
        SELECT DISTINCT sf.model FROM score_files AS sf JOIN file_rows USING (path)
        JOIN benchmarks AS b USING (benchmark) WHERE b.role = 'source'
        UNION
        SELECT DISTINCT s.model FROM scores AS s JOIN benchmarks AS b USING (benchmark)
        WHERE s.origin = 'runner' AND b.role = 'source'""").fetchall()}

    # Files whose (aliased) model has no source rows anywhere: usually a misnamed file. (A model held out as
    # another spelling of a known one was reported as such: ingest.noise.)
    if known:
        rows = con.execute("""
            SELECT model, list(DISTINCT path ORDER BY path) FROM tree_file_rows
            WHERE model NOT IN (SELECT model FROM model_holds)
            GROUP BY model ORDER BY model""").fetchall()
        for model, paths in rows:
            if model not in known:
                close = _closest_model(model, known)
                hint = f"; hint: `{pace_command('alias', 'add', model, close)}`" if close else ""
                out.append(Anomaly("unknown_model", _short(paths, 3),
                                   f"file name {model!r} is not a known model (no source rows){hint}"))

    if imported:
        out += _unknown_ids(con)

    # Known models without a file in a leaf: in this tree or in the warehouse (a second results tree with
    # one new model does not lack the files the first tree brought)
    rows = [] if imported else con.execute("""
        WITH leaves AS (SELECT DISTINCT benchmark, subdir FROM tree_file_rows),
             present AS (SELECT benchmark, subdir, model FROM tree_file_rows
                         UNION SELECT benchmark, subdir, model FROM score_counts)
        SELECT l.benchmark, l.subdir, list(k.model ORDER BY k.model)
        FROM leaves l CROSS JOIN (SELECT unnest(?::VARCHAR[]) AS model) k
        ANTI JOIN present p ON p.benchmark = l.benchmark AND p.subdir = l.subdir AND p.model = k.model
        GROUP BY ALL ORDER BY ALL""", [sorted(known)]).fetchall()
    for benchmark, subdir, missing in rows:
        out.append(Anomaly("missing_from_leaf", _leaf(benchmark, subdir),
                           f"{len(missing)} of {len(known)} models have no file: {_short(missing)}"))

    # Id sets that differ between the models of a leaf (targets: rows per model differ). Files with
    # equal row counts and id fingerprints hold the same ids, so a leaf's union is counted over one
    # file of each such class: a leaf whose files all agree needs no rows at all.
    con.execute("CREATE OR REPLACE TEMP TABLE leaf_union AS SELECT benchmark, subdir, max(n) AS n_union "
                "FROM tree_file_rows GROUP BY ALL")
    unclear = con.execute("""
        SELECT benchmark, subdir FROM tree_file_rows GROUP BY ALL
        HAVING count(DISTINCT n) > 1 OR count(DISTINCT ids_hash) > 1 OR bool_or(ids_hash IS NULL)""").fetchall()
    if unclear:
        representatives = [p for (p,) in con.execute("""
            SELECT min(path) FROM tree_file_rows
            WHERE (benchmark, subdir) IN (SELECT (unnest(?::VARCHAR[]), unnest(?::VARCHAR[])))
            GROUP BY benchmark, subdir, n, coalesce(ids_hash::VARCHAR, path)""",
            [[b for b, _ in unclear], [s for _, s in unclear]]).fetchall()]
        # constants (not a subquery), so DuckDB's zone maps skip row groups of other files
        con.execute(f"""
            UPDATE leaf_union AS l SET n_union = u.n_union
            FROM (SELECT benchmark, subdir, count(DISTINCT instance_id) AS n_union FROM {BOTH_TABLES}
                  WHERE source_ref IN ({", ".join("?" * len(representatives))}) GROUP BY ALL) AS u
            WHERE l.benchmark = u.benchmark AND l.subdir = u.subdir""", sorted(representatives))
    rows = con.execute("""
        WITH per_model AS (
            SELECT benchmark, subdir, any_value(role) AS role, model, sum(n) AS n FROM tree_file_rows GROUP BY ALL)
        SELECT p.benchmark, p.subdir, any_value(p.role), any_value(l.n_union), min(p.n), max(p.n),
               list(p.model || ' ' || p.n ORDER BY p.n, p.model) FILTER (WHERE p.n < l.n_union)
        FROM per_model p JOIN leaf_union l USING (benchmark, subdir)
        GROUP BY ALL HAVING min(p.n) < any_value(l.n_union) OR count(DISTINCT p.n) > 1
        ORDER BY ALL""").fetchall()
    for benchmark, subdir, role, n_union, lo, hi, short_models in rows:
        kind = "target_rows_differ" if role == "target" else "differing_ids"
        out.append(Anomaly(kind, _leaf(benchmark, subdir),
                           f"rows per model {lo}-{hi}, union of ids {n_union}; fewer: {_short(short_models or [])}"))

    # Scores outside [0, 1]: kept as they are, reported per file (a count and the first few).
    rows = con.execute("""
        SELECT source_ref, count(*), list(instance_id ORDER BY instance_id)[1:3], list(score ORDER BY instance_id)[1:3]
        FROM scores
        WHERE (score < 0 OR score > 1) AND source_ref IN (SELECT path FROM tree_file_rows)
        GROUP BY source_ref ORDER BY source_ref""").fetchall()
    for path, n, ids, values in rows:
        shown = ", ".join(f"id {i!r} score {v!r}" for i, v in zip(ids, values))
        out.append(Anomaly("out_of_range", path, f"{shown} outside [0, 1] (kept)" if n == 1 else
                           f"{n} scores outside [0, 1] (kept): {shown}" + (f" (+{n - 3} more)" if n > 3 else "")))

    # Per-file counts recorded at parse time.
    rows = con.execute("""
        SELECT f.path, sf.n_duplicates, sf.n_null_scores, coalesce(sf.duplicates, 'first'), coalesce(sf.n_runs, 1),
               sf.run_means, coalesce(sf.conflicting_ids, []), sf.n_rows
        FROM tree_files f JOIN score_files sf USING (path)
        WHERE sf.n_duplicates > 0 OR sf.n_null_scores > 0 ORDER BY f.path""").fetchall()
    for path, dups, nulls, policy, n_runs, means, conflicts, n_kept in rows:
        other = "last" if policy == "first" else "first"
        if n_runs > 1:
            means = list(means or [])         # one per run: bounded like every list of the report
            shown = ", ".join(f"{100 * m:.1f}%" if m is not None else "n/a" for m in means[:EXAMPLES]) + (
                f" (+{len(means) - EXAMPLES:,} more)" if len(means) > EXAMPLES else "")
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
    # Collapsed cells (the rule: sql/020_collapsed_cells_live.sql; stored in collapsed_cells, which the caller
    # has recomputed for what it wrote): a model at ~0 on a cell the others mostly solve, or a file listing
    # only failed instances. The default method's ability leaves them out; compat keeps them.
    rows = con.execute("""
        SELECT c.model, c.benchmark, c.subdir, c.facet, c.reason, c.mean, c.others_median, c.n_rows, c.n_instances
        FROM collapsed_cells AS c
        SEMI JOIN (SELECT DISTINCT model, benchmark, subdir FROM tree_file_rows) AS t
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


def summarise(con: duckdb.DuckDBPyConnection) -> tuple[int, list[str], list[str], int]:
    """(rows, models, benchmarks, leaves) of the tree now in the warehouse (after find_anomalies)."""
    row = con.execute("""
        SELECT coalesce(sum(n), 0), list(DISTINCT model ORDER BY model), list(DISTINCT benchmark ORDER BY benchmark),
               count(DISTINCT (benchmark, subdir))
        FROM tree_file_rows""").fetchone()
    return int(row[0]), row[1] or [], row[2] or [], row[3]


def _unknown_ids(con: duckdb.DuckDBPyConnection) -> list[Anomaly]:
    """Imported leaves whose ids are not all among the ids other files already hold for the leaf."""
    rows = con.execute("""
        WITH mine AS (SELECT DISTINCT benchmark, subdir, instance_id FROM scores
                      WHERE source_ref IN (SELECT path FROM tree_file_rows)),
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
