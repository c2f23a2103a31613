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

from warehouse.connect import sql_files
from warehouse.outputs import output_run, require_empty_or_ours

GROUP = "export"
TABLES = ["benchmarks", "model_aliases", "score_files", "proxy_fits", "proxy_weights",
          "loocv_runs", "loocv_predictions", "loocv_selections", "loocv_configs", "loocv_pair_predictions"]
VIEWS = ["models", "target_means", "coverage", "model_ability", "instance_stats", "instance_target_corr",
         "current_fits", "proxy_instances", "predictions", "pair_predictions", "loocv_metrics",
         "loocv_pair_metrics"]

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


def export_parquet(con: duckdb.DuckDBPyConnection, out: Path, *, overwrite: bool = False) -> list[tuple[str, int]]:
    """Write scores (hive-partitioned by benchmark), the tables and the views (materialised) to ``out``."""
    out = Path(out)
    require_empty_or_ours(out, GROUP, overwrite)
    docs = schema_docs()
    written = []
    esc = lambda p: str(p).replace("'", "''")  # noqa: E731
    with output_run(out, GROUP, note="pace export") as staging:
        con.execute(f"COPY scores TO '{esc(staging / 'scores')}' (FORMAT parquet, PARTITION_BY (benchmark))")
        written.append(("scores", con.execute("SELECT count(*) FROM scores").fetchall()[0][0]))
        lines = ["# Pace Warehouse export", "",
                 "Parquet files; `scores/` is hive-partitioned by benchmark. Tables are copies; views are "
                 "materialised at export time. Descriptions come from the warehouse's `sql/` files.", ""]
        for name in ["scores"] + TABLES + VIEWS:
            if name != "scores":
                con.execute(f"COPY (SELECT * FROM {name}) TO '{esc(staging / (name + '.parquet'))}' (FORMAT parquet)")
                written.append((name, con.execute(f"SELECT count(*) FROM {name}").fetchall()[0][0]))
            doc = docs.get(name, {"about": "", "columns": {}})
            kind = "view" if name in VIEWS else "table"
            lines += [f"## {name} ({kind})", ""] + ([doc["about"], ""] if doc["about"] else [])
            for col, col_type, *_ in con.execute(f"DESCRIBE {name}").fetchall():
                described = doc["columns"].get(col)
                lines.append(f"- `{col}` {col_type}" + (f": {described}" if described else ""))
            lines.append("")
        (staging / "SCHEMA.md").write_text("\n".join(lines), encoding="utf-8")
    return written
