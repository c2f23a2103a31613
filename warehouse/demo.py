"""`pace demo` / `make demo`: the main flow end to end on whatever data there is.

Real data when there is a results tree: ``--results DIR`` (``make demo RESULTS=DIR``), else
``$PACE_RESULTS_DIR``, else ``results/standardized_results`` if it exists (the Pace project's layout,
relative to the current folder). One named that does not exist is an error, never a silent switch to
made-up data. Otherwise a synthetic tree (clearly labelled) so the whole flow runs on a fresh machine:
it goes to its own warehouse (``demo_warehouse/pace.duckdb``) unless ``--db`` / ``PACE_DB`` names one,
and ingest refuses to put it into a warehouse that holds real data.
"""
from __future__ import annotations

import os
from pathlib import Path

from ingest.lake import lake_of
from ingest.load import ingest_tree
from ingest.synthetic import generate_tree
from warehouse import settings
from warehouse.connect import connect
from warehouse.demo_models import demo_stages
from warehouse.errors import UserError
from warehouse.output import console, print_rows

DEMO_DATA = Path("demo_data")
DEMO_DB = Path("demo_warehouse") / "pace.duckdb"
#: models with target scores the demo's evaluation needs: one held out at a time, 3 left to train on
DEMO_MIN_LABELLED = 4


def _section(title: str) -> None:
    console.rule(f"[bold]{title}")


def find_or_make_data(seed: int, results: str | os.PathLike | None = None) -> tuple[Path, bool]:
    """Return (tree, is_synthetic): the results tree named or found (see the module doc), else the
    synthetic demo tree (made once)."""
    root = settings.results_path(results)
    if root is not None:
        if not root.is_dir():
            named = "--results" if results else "PACE_RESULTS_DIR"
            raise UserError(f"{named} {root}: no such folder (a results tree <benchmark>/[<subdir>/]<Model>.csv)")
        return root, False
    if not (DEMO_DATA / "README.md").exists():
        generate_tree(DEMO_DATA, n_models=14, seed=seed)
    return DEMO_DATA, True


def demo_db(explicit, synthetic: bool) -> Path:
    """The warehouse the demo uses: the one asked for, else ./pace.duckdb for real data and
    demo_warehouse/pace.duckdb for synthetic data (so a fresh demo never lands in a real warehouse)."""
    if explicit:
        return settings.db_path(explicit)
    if synthetic:
        DEMO_DB.parent.mkdir(exist_ok=True)
        return DEMO_DB
    return settings.db_path()


def run_demo(db: Path | None, seed: int = 0, results: str | os.PathLike | None = None) -> None:
    root, synthetic = find_or_make_data(seed, results)
    db = demo_db(db, synthetic)
    _section("1. data")
    if synthetic:
        console.print(f"SYNTHETIC tree {root} -> warehouse {db}: no results tree here ({settings.DEFAULT_RESULTS} "
                      "does not exist and PACE_RESULTS_DIR is not set); `make demo RESULTS=DIR` or "
                      "`pace demo --results DIR` runs it on yours", highlight=False, markup=False)
    else:
        console.print(f"results tree {root} -> warehouse {db}", highlight=False, markup=False)
    _section("2. ingest")
    con = connect(db)
    report = ingest_tree(con, root, lake_of(con))
    print(report.to_text())
    labelled = con.execute("SELECT count(DISTINCT model) FROM target_means WHERE n_scored > 0").fetchall()[0][0]
    if labelled < DEMO_MIN_LABELLED:
        raise UserError(f"{root}: {labelled} models with target scores, and the demo's leave-one-out evaluation "
                        f"needs at least {DEMO_MIN_LABELLED} (one held out, 3 to train on); its rows are in {db} "
                        "(a tree of source benchmarks only adds models to predict: `pace predict MODEL` after a "
                        "`pace fit` on a warehouse that has target scores)")
    _section("3. what is in the warehouse")
    rel = con.sql("""
        PIVOT (SELECT model, target, round(100 * mean, 1) AS mean FROM target_means)
        ON target USING any_value(mean) ORDER BY model""")
    print_rows(rel.columns, rel.fetchall(), title="target_means (%, published semantics)", digits=1)
    for stage in demo_stages():
        stage(con, db)


