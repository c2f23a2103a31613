"""Parquet export of the warehouse for other teams: plain files plus a schema description."""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

TABLES = ["benchmarks", "model_aliases", "score_files", "proxy_fits", "proxy_weights",
          "loocv_runs", "loocv_predictions", "loocv_selections", "loocv_configs"]
VIEWS = ["models", "target_means", "coverage", "instance_stats", "predictions", "pair_predictions", "loocv_metrics"]


def export_parquet(con: duckdb.DuckDBPyConnection, out: Path) -> list[tuple[str, int]]:
    """Write scores (hive-partitioned by benchmark), the tables and the views (materialised) to ``out``."""
    staging = out.parent / f".{out.name}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    written = []
    esc = lambda p: str(p).replace("'", "''")  # noqa: E731
    con.execute(f"COPY scores TO '{esc(staging / 'scores')}' (FORMAT parquet, PARTITION_BY (benchmark))")
    written.append(("scores", con.execute("SELECT count(*) FROM scores").fetchall()[0][0]))
    lines = ["# Pace Warehouse export", "", "Parquet files; `scores/` is hive-partitioned by benchmark.", ""]
    for name in ["scores"] + TABLES + VIEWS:
        if name != "scores":
            con.execute(f"COPY (SELECT * FROM {name}) TO '{esc(staging / (name + '.parquet'))}' (FORMAT parquet)")
            written.append((name, con.execute(f"SELECT count(*) FROM {name}").fetchall()[0][0]))
        cols = con.execute(f"DESCRIBE {name}").fetchall()
        lines += [f"## {name}", ""] + [f"- `{c[0]}` {c[1]}" for c in cols] + [""]
    (staging / "SCHEMA.md").write_text("\n".join(lines))
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)
    return written
