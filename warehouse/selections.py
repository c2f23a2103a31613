"""Import a selections CSV in the published schema into loocv_selections."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb

REQUIRED = ["mode", "fold", "target", "benchmark", "subdir", "instance_id"]


def import_selections(con: duckdb.DuckDBPyConnection, path: Path, name: str | None = None) -> tuple[str, int]:
    """Returns (run_id, rows). Rows keep fold, target, instance keys and weight; side is unknown ('?')."""
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}:1: missing column(s) {', '.join(missing)} (published schema: "
                             "mode,fold,target,benchmark,subdir,instance_id,col_idx,weight)")
        rows = []
        for line, row in enumerate(reader, start=2):
            if not row["benchmark"] or not row["instance_id"]:
                raise ValueError(f"{path}:{line}: empty benchmark or instance_id")
            try:
                weight = float(row["weight"]) if row.get("weight") not in (None, "") else None
            except ValueError:
                raise ValueError(f"{path}:{line}: weight {row['weight']!r} is not a number") from None
            rows.append((row["fold"], row["target"], row["benchmark"], row["subdir"] or "", row["instance_id"],
                         weight))
    if not rows:
        raise ValueError(f"{path}: no rows")
    run_id = name or f"import-{path.stem}"
    modes = sorted({r["mode"] for r in csv.DictReader(path.open(newline="", encoding="utf-8"))})
    targets = sorted({r[1] for r in rows})
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("DELETE FROM loocv_selections WHERE run_id = ?", [run_id])
        con.execute("DELETE FROM loocv_runs WHERE run_id = ?", [run_id])
        con.execute("INSERT INTO loocv_runs (run_id, task, mode, method, params, sources, targets, models, seconds, "
                    "created_at) VALUES (?, 'abs', ?, 'imported', ?::JSON, NULL, ?, [], NULL, current_localtimestamp())",
                    [run_id, ",".join(modes), json.dumps({"file": path.name}), targets])
        con.executemany("INSERT INTO loocv_selections VALUES (?, ?, ?, '?', ?, ?, ?, NULL, ?, NULL)",
                        [(run_id, *r) for r in rows])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return run_id, len(rows)
