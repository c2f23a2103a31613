"""Parquet export of the warehouse for other teams: plain files plus a schema description.

The export goes to a folder of its own (see :mod:`warehouse.outputs`): a new or empty folder, or
with ``overwrite`` one an earlier export wrote, where only that export's files are replaced. The
warehouse, its lake and any other file in the folder are never touched.

``SCHEMA.md`` carries the descriptions written as comments in ``sql/*.sql``: a file's leading
comment describes its object; a ``-- comment`` at the end of a column line, or a leading comment
line ``--   column   text``, describes a column.
"""
from __future__ import annotations

import re
from pathlib import Path

import duckdb

from eval_runners.secrets import CREDENTIAL_PATTERNS
from warehouse import stored_predictions
from warehouse.connect import sql_files
from warehouse.outputs import output_run, require_empty_or_ours
from warehouse.spark_sql import spark_script

GROUP = "export"
TABLES = ["benchmarks", "model_aliases", "model_holds", "model_families", "score_files", "collapsed_cells",
          "source_leaves", "instance_stats", "proxy_fits", "proxy_weights", "proxy_leaves", "proxy_ability_instances",
          "loocv_runs", "loocv_folds", "loocv_predictions", "loocv_selections", "loocv_configs", "loocv_pair_predictions",
          "scores_displaced", "agentic_runs", "model_metadata", "model_metadata_set", "reported_scores", "agentic_preference",
          "anchor_fits", "anchor_items", "anchor_grid", "anchor_curve", "anchor_priors", "anchor_factors"]
# The user-facing views: the one list of them. Each is exported (materialised), described in
# SCHEMA.md, written to spark/views.sql by sqlglot and checked against DuckDB on Spark by
# tests/warehouse/test_spark_views.py. A new view meant for users goes here; a view that only
# pace itself uses goes in INTERNAL_VIEWS (tests check that every view in sql/ is in one of them).
VIEWS = ["models", "target_means", "coverage", "model_ability", "instance_stats_live", "instance_target_corr",
         "collapsed_cells_live", "source_leaves_live", "collapsed_scores", "source_ability", "model_sources",
         "model_family", "current_fits", "restricted_fits", "proxy_instances", "fit_predictions", "source_predictions",
         "current_anchor_fits", "anchor_prior", "anchor_estimates", "predictions", "pair_predictions", "loocv_metrics", "loocv_pair_metrics", "loocv_abs_pair_metrics", "target_instances",
         "instance_costs", "target_rows_by_source", "target_sources", "source_disagreements", "anchor_costs",
         "model_release"]
# `scores` is the view over score_rows / score_sources (sql/004_*): exported as its own partitioned files,
# a table to Spark and to any reader of the export; the *_live views are the rules of stored fit constants
INTERNAL_VIEWS: list[str] = ["scores", "proxy_leaf_levels_live", "anchor_curve_segments_live", "prediction_inputs"]
# User views that cannot mean the same on Spark, with the reason (left out of spark/views.sql, the
# reason written in its header; the Spark test skips them).
NOT_FOR_SPARK: dict[str, str] = {
    "instance_stats_live": "it carries each model's target means as a list ordered by target, NULLs kept "
                           "(DuckDB's list(... ORDER BY)); Spark's collect_list drops NULLs and keeps no order. "
                           "Its rows are exported as the table instance_stats."}
# The runner's calls, so another team can re-grade without paying for the calls again: every response
# with its grade and grader version, the runs, and the instance packs the prompts came from. Local
# details stay home (the packs' asset folder; the process identity a run keeps for its liveness
# check), and text is scrubbed of anything shaped like a credential on the way out.
RUNNER_TABLES = ["runs", "responses", "runner_calls", "instances"]
_RUNNER_DROP = {"instances": {"asset_root"}, "runs": {"pid", "host", "pid_started", "heartbeat_at"}}

_CREATE = re.compile(r"^CREATE\s+(?:OR\s+REPLACE\s+)?(?:TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.I | re.M)
_ALTER = re.compile(r"^ALTER\s+TABLE\s+(\w+)\s+ADD\s+COLUMN\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.I | re.M)
_INLINE = re.compile(r"^\s+(\w+)\s+[^-]*?--\s*(.+?)\s*$")
_HEADER_COLUMN = re.compile(r"^--\s{1,4}(\w+)\s{2,}(.+)$")


def schema_docs() -> dict[str, dict]:
    """object -> {'about': text, 'columns': {column: text}} from the comments of ``sql/*.sql``."""
    docs: dict[str, dict] = {}
    for path in sql_files():
        text = path.read_text(encoding="utf-8")
        header = []
        for line in text.splitlines():
            if not line.startswith("--"):
                break
            header.append(line)
        created, altered = _CREATE.search(text), _ALTER.search(text)
        name = created.group(1) if created else altered.group(1) if altered else None
        if name is None:
            continue
        entry = docs.setdefault(name, {"about": "", "columns": {}})
        columns = entry["columns"]
        last = None
        about = []
        for line in header:
            m = _HEADER_COLUMN.match(line)
            if m:
                last = m.group(1)
                columns[last] = m.group(2).strip()
            elif last and re.match(r"^--\s{5,}\S", line):      # continuation of a column description
                columns[last] += " " + line[2:].strip()
            else:
                last = None
                about.append(line[2:].strip())
        if created:
            entry["about"] = " ".join(a for a in about if a)
            body = text[created.end():]
            for line in body.splitlines():
                m = _INLINE.match(line)
                if m and m.group(1).upper() not in ("PRIMARY", "SELECT", "FROM", "WHERE"):
                    columns.setdefault(m.group(1), m.group(2))
    return docs


def scrubbed(expression: str) -> str:
    """SQL that removes credential-shaped text from a text ``expression``: the patterns the runner
    removes before storing anything (:data:`eval_runners.secrets.CREDENTIAL_PATTERNS`), applied again
    on the way out for rows stored before a pattern existed."""
    for pattern, replacement in CREDENTIAL_PATTERNS:
        pattern, replacement = pattern.replace("'", "''"), replacement.replace("'", "''")
        expression = f"regexp_replace({expression}, '{pattern}', '{replacement}', 'g')"
    return expression


def runner_query(con: duckdb.DuckDBPyConnection, table: str) -> str:
    """SELECT over a runner table with every text column scrubbed (columns found at export time, so
    columns the runner adds later are exported, and scrubbed, too)."""
    cols = []
    for col, col_type, *_ in con.execute(f"DESCRIBE {table}").fetchall():
        if col in _RUNNER_DROP.get(table, set()):
            continue
        quoted = '"' + col.replace('"', '""') + '"'
        if col_type in ("VARCHAR", "JSON"):
            cols.append(f"{scrubbed(quoted + '::VARCHAR')}::{col_type} AS {quoted}")
        else:
            cols.append(quoted)
    return f"SELECT {', '.join(cols)} FROM {table}"


def export_parquet(con: duckdb.DuckDBPyConnection, out: Path, *, overwrite: bool = False) -> list[tuple[str, int]]:
    """Write scores (hive-partitioned by benchmark), the tables, the runner's calls and the views
    (materialised) to ``out``, with SCHEMA.md and the views in Spark SQL (spark/views.sql)."""
    out = Path(out)
    require_empty_or_ours(out, GROUP, overwrite)
    docs = schema_docs()
    spark, _ = spark_script(VIEWS, TABLES + RUNNER_TABLES, not_for_spark=NOT_FOR_SPARK)
    written = []
    esc = lambda p: str(p).replace("'", "''")  # noqa: E731
    with output_run(out, GROUP, note="pace export") as staging:
        con.execute(f"COPY scores TO '{esc(staging / 'scores')}' (FORMAT parquet, PARTITION_BY (benchmark))")
        written.append(("scores", con.execute("SELECT count(*) FROM scores").fetchall()[0][0]))
        lines = ["# Pace Warehouse export", "",
                 "Parquet files; `scores/` is hive-partitioned by benchmark. Tables are copies; views are "
                 "materialised at export time. Descriptions come from the warehouse's `sql/` files. "
                 "`spark/views.sql` creates every view on Spark over these files (see its header). The runner "
                 "tables (`runs`, `responses`, `runner_calls`, `instances`) hold every model response with its "
                 "grade, for re-grading without new calls; credential-shaped text is removed from them, and "
                 "`instances` holds the prompt packs' dataset content (share it as the datasets' licences allow).",
                 ""]
        for name in ["scores"] + TABLES + RUNNER_TABLES + VIEWS:
            if name in RUNNER_TABLES:
                query = runner_query(con, name)
            elif name == "predictions":          # every model's: stored when current (26 s -> 1.2 s, 1,000 models)
                query = stored_predictions.every_model_query(con)
            else:
                query = f"SELECT * FROM {name}"
            if name != "scores":
                path = esc(staging / (name + '.parquet'))
                con.execute(f"COPY ({query}) TO '{path}' (FORMAT parquet)")
                # the rows written, from the file's footer: counting the view would compute it again (every
                # model's predictions: ~34 s at 1,000 models)
                written.append((name, con.execute(f"SELECT count(*) FROM read_parquet('{path}')").fetchall()[0][0]))
            doc = docs.get(name, {"about": "", "columns": {}})
            kind = "view" if name in VIEWS else "table"
            lines += [f"## {name} ({kind})", ""] + ([doc["about"], ""] if doc["about"] else [])
            for col, col_type, *_ in con.execute(f"DESCRIBE ({query})").fetchall():
                described = doc["columns"].get(col)
                lines.append(f"- `{col}` {col_type}" + (f": {described}" if described else ""))
            lines.append("")
        (staging / "SCHEMA.md").write_text("\n".join(lines), encoding="utf-8")
        (staging / "spark").mkdir()
        (staging / "spark" / "views.sql").write_text(spark, encoding="utf-8")
    return written
