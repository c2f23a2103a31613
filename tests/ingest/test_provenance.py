"""Provenance: trees, synthetic data kept apart, rows reloaded, duplicates told apart, the lake in step."""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from ingest.csvfile import parse_bytes
from ingest.errors import IngestError
from ingest.lake import lake_drift, lake_of, mark_pending, sync_lake
from ingest.load import ingest_tree
from ingest.synthetic import generate_tree
from tests.conftest import SHARED
from tests.helpers import Killed, kill_at, run_pace, write_csv
from warehouse.connect import connect
from ingest import score_store


def _tree(root: Path, models: dict[str, float], bench: str = "src") -> Path:
    for model, score in models.items():
        write_csv(root / bench / "leaf" / f"{model}.csv", f"id,score,metric_name\na,{score},acc\nb,1,acc\n")
        write_csv(root / "gaia" / f"{model}.csv", f"id,score,metric_name\ng,{score},acc\n")
    return root


def _rows(con, model=None) -> int:
    if model:
        return con.execute("SELECT count(*) FROM scores WHERE model = ?", [model]).fetchone()[0]
    return con.execute("SELECT count(*) FROM scores").fetchone()[0]


def test_second_tree_does_not_see_the_first_as_disappeared_nor_prune_it(tmp_path):
    first = _tree(tmp_path / "first", {"A": 0.1, "B": 0.9})
    second = _tree(tmp_path / "second", {"C": 0.5})
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, first, tmp_path / "lake")
    report = ingest_tree(con, second, tmp_path / "lake")
    assert report.files_disappeared == 0 and not [a for a in report.anomalies if a.kind == "disappeared_file"]
    pruned = ingest_tree(con, second, tmp_path / "lake", prune=True)
    assert pruned.files_pruned == 0 and _rows(con, "A") == 3 and _rows(con, "B") == 3
    trees = dict(con.execute("SELECT path, tree FROM score_files").fetchall())
    assert trees["gaia/A.csv"] == str(first.resolve()) and trees["gaia/C.csv"] == str(second.resolve())
    # within a tree, disappearing and pruning still work, and only there
    (first / "gaia" / "B.csv").unlink()
    again = ingest_tree(con, first, tmp_path / "lake", prune=True)
    assert (again.files_disappeared, again.files_pruned) == (1, 1)
    assert _rows(con, "B") == 2 and _rows(con, "C") == 3
    assert lake_drift(con, tmp_path / "lake") == {}


def test_synthetic_and_real_trees_are_never_mixed(tmp_path):
    real = _tree(tmp_path / "real", {"A": 0.1, "B": 0.9})
    synthetic = tmp_path / "synthetic"
    generate_tree(synthetic, n_models=3, seed=0, scale=0.2)
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, real, tmp_path / "lake")
    with pytest.raises(IngestError, match="SYNTHETIC.*refusing to mix"):
        ingest_tree(con, synthetic, tmp_path / "lake")
    assert _rows(con) == 6
    other = connect(tmp_path / "s.duckdb")
    report = ingest_tree(other, synthetic, tmp_path / "lake2")
    assert report.synthetic and "SYNTHETIC" in report.to_text()
    assert other.execute("SELECT bool_and(synthetic) FROM score_files").fetchone()[0] is True
    with pytest.raises(IngestError, match="real.*refusing to mix"):
        ingest_tree(other, real, tmp_path / "lake2")


def test_demo_keeps_synthetic_data_out_of_a_real_warehouse(tmp_path, monkeypatch):
    from warehouse.demo import DEMO_DB, demo_db

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PACE_DB", raising=False)
    assert demo_db(None, synthetic=True) == DEMO_DB and demo_db(None, synthetic=False).name == "pace.duckdb"
    real = _tree(tmp_path / "real", {"A": 0.1, "B": 0.9})
    assert run_pace("ingest", real, "--no-progress").exit_code == 0             # ./pace.duckdb holds real data
    generate_tree(tmp_path / "demo_data", n_models=3, seed=0, scale=0.2)
    mixed = run_pace("demo", "--db", "pace.duckdb")                               # asked for explicitly: refused
    assert mixed.exit_code == 2 and "refusing to mix" in mixed.stderr
    assert _rows(connect(tmp_path / "pace.duckdb", read_only=True)) == 6


def test_rows_deleted_outside_ingest_are_reloaded(tmp_path):
    tree = _tree(tmp_path / "t", {"A": 0.1, "B": 0.9})
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, tree, tmp_path / "lake")
    score_store.execute(con, "DELETE FROM scores WHERE model = 'A' AND benchmark = 'src'")
    report = ingest_tree(con, tree, tmp_path / "lake")
    assert report.files_reloaded == 1 and _rows(con, "A") == 3
    assert any(a.kind == "reloaded_rows" and a.where == "src/leaf/A.csv" for a in report.anomalies)
    con.execute("DROP VIEW scores; DROP TABLE score_rows; DROP TABLE score_sources")
    con.close()
    con = connect(tmp_path / "w.duckdb")                                  # the schema comes back on open
    report = ingest_tree(con, tree, tmp_path / "lake")
    assert report.files_reloaded == 4 and _rows(con) == 6
    assert lake_drift(con, tmp_path / "lake") == {}


def test_repeated_runs_and_conflicting_duplicates(tmp_path):
    root = tmp_path / "t"
    two_runs = "id,score,metric_name\n" + "".join(f"{i},0,m\n" for i in range(4)) + \
               "".join(f"{i},1,m\n" for i in range(4))
    write_csv(root / "gpqa" / "M.csv", two_runs)
    write_csv(root / "debug" / "M.csv", "id,score,metric_name\nx,1,m\ny,0,m\nx,0,m\ny,0,m\nz,1,m\n")
    con = connect(tmp_path / "w.duckdb")
    report = ingest_tree(con, root, tmp_path / "lake")
    kinds = {(a.kind, a.where): a for a in report.anomalies}
    runs = kinds[("repeated_runs", "gpqa/M.csv")]
    assert "2 runs over the same 4 ids" in runs.message and "0.0%, 100.0%" in runs.message
    conflict = kinds[("conflicting_duplicates", "debug/M.csv")]
    assert conflict.items == ["x"] and ("duplicate_ids", "debug/M.csv") in kinds
    assert con.execute("SELECT avg(score) FROM scores WHERE benchmark = 'gpqa'").fetchone()[0] == 0.0   # first
    last = ingest_tree(con, root, tmp_path / "lake", duplicates="last")
    assert last.files_changed == 2                                    # the policy change re-reads those files
    assert con.execute("SELECT avg(score) FROM scores WHERE benchmark = 'gpqa'").fetchone()[0] == 1.0
    assert con.execute("SELECT score FROM scores WHERE benchmark = 'debug' AND instance_id = 'x'").fetchone()[0] == 0
    with pytest.raises(IngestError, match=r"debug/M.csv:4: id 'x' repeats an earlier id"):
        ingest_tree(con, root, tmp_path / "lake", duplicates="error")
    with pytest.raises(IngestError, match=r"gpqa/M.csv:6: id '0' repeats.*2 runs"):
        parse_bytes("gpqa/M.csv", two_runs.encode(), "error")
    bad = run_pace("ingest", root, "--db", tmp_path / "w.duckdb", "--duplicates", "newest")
    assert bad.exit_code == 2 and "--duplicates 'newest' is not one of: first, last, error" in bad.stderr


def test_alias_and_runner_rows_reach_the_lake(tmp_path):
    tree = _tree(tmp_path / "t", {"A": 0.1, "B-R": 0.9})
    db = tmp_path / "w.duckdb"
    con = connect(db)
    ingest_tree(con, tree, tmp_path / "lake")
    con.close()
    assert run_pace("alias", "add", "B-R", "B", "--db", db).exit_code == 0
    lake = duckdb.connect().execute(f"""SELECT DISTINCT model FROM read_parquet('{tmp_path}/lake/scores/*/*.parquet',
                                        hive_partitioning = true) ORDER BY 1""").fetchall()
    assert lake == [("A",), ("B",)]
    con = connect(db)
    score_store.execute(con, "INSERT INTO scores VALUES ('New', 'gaia', '', 'g', 1, 'acc', 'runner', 'run:x', now())")
    mark_pending(con, ["gaia"])
    assert lake_drift(con) and sync_lake(con) == ["gaia"] and lake_drift(con) == {}


def test_a_kill_between_commit_and_lake_swap_is_repaired_on_the_next_open(tmp_path, monkeypatch):
    import ingest.load as load

    tree = _tree(tmp_path / "t", {"A": 0.1, "B": 0.9})
    db = tmp_path / "w.duckdb"
    con = connect(db)
    ingest_tree(con, tree, tmp_path / "lake")
    write_csv(tree / "gaia" / "A.csv", "id,score,metric_name\ng,0.75,acc\nh,0.5,acc\n")

    kill_at(monkeypatch, load, "swap_lake")
    with pytest.raises(Killed):
        ingest_tree(con, tree, tmp_path / "lake")
    assert set(lake_drift(con, tmp_path / "lake")) == {"gaia"}            # committed, lake stale
    con.close()
    monkeypatch.undo()
    con = connect(db)                                                     # any write open finishes the swap
    assert lake_drift(con, tmp_path / "lake") == {}
    assert list((tmp_path / "lake" / ".staging").iterdir())             # the killed writer's staging folder
    con.close()
    doctor = run_pace("doctor", "--db", db)
    assert doctor.exit_code == 0 and "leftover" in doctor.stdout
    assert not list((tmp_path / "lake" / ".staging").iterdir())


def test_home_in_pace_db_is_expanded(tmp_path, monkeypatch):
    tree = _tree(tmp_path / "t", {"A": 0.1, "B": 0.9})
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    result = run_pace("ingest", tree, "--no-progress", env={"HOME": home, "PACE_DB": "~/x.duckdb"})
    assert result.exit_code == 0, result
    assert (home / "x.duckdb").is_file() and (home / "x.lake" / "scores").is_dir()      # its own lake
    assert not (tmp_path / "~").exists()


REAL = SHARED / "pace-results" / "standardized_results"
HOLDOUT = SHARED / "holdout-sources" / "standardized_results"


@pytest.mark.realdata
def test_real_second_tree_and_prune_leave_the_first_alone(tmp_path):
    if not (REAL.is_dir() and HOLDOUT.is_dir()):
        pytest.skip("real data absent: ../shared/pace-results and ../shared/holdout-sources not found")
    con = connect(tmp_path / "w.duckdb")
    first = ingest_tree(con, REAL, tmp_path / "lake")
    before = _rows(con)
    second = ingest_tree(con, HOLDOUT, tmp_path / "lake", prune=True)
    assert second.files_disappeared == 0 and second.files_pruned == 0
    assert _rows(con) == before + second.rows_written
    assert con.execute("SELECT count(*) FROM score_files WHERE tree = ?", [str(REAL.resolve())]).fetchone()[0] \
        == first.files
    runs = [a for a in second.anomalies if a.kind == "repeated_runs" and a.where == "gpqa/main/GLM-5.csv"]
    assert runs and "2 runs over the same 448 ids" in runs[0].message
    conflicts = sum(len(a.items) for a in first.anomalies if a.kind == "conflicting_duplicates"
                    and a.where.startswith("debugbench/"))
    assert conflicts == 75
    assert lake_drift(con, tmp_path / "lake") == {}


def test_a_copied_warehouse_folder_keeps_its_own_lake(tmp_path):
    tree = _tree(tmp_path / "t", {"A": 0.1, "B": 0.9})
    original = tmp_path / "orig"
    original.mkdir()
    assert run_pace("ingest", tree, "--db", original / "pace.duckdb", "--no-progress").exit_code == 0
    before = {p: p.read_bytes() for p in (original / "lake").rglob("*.parquet")}
    shutil.copytree(original, tmp_path / "copy")
    write_csv(tree / "gaia" / "A.csv", "id,score,metric_name\ng,0.5,acc\n")
    assert run_pace("ingest", tree, "--db", tmp_path / "copy" / "pace.duckdb", "--no-progress").exit_code == 0
    assert {p: p.read_bytes() for p in (original / "lake").rglob("*.parquet")} == before
    con = connect(tmp_path / "copy" / "pace.duckdb")
    assert lake_drift(con) == {} and str(tmp_path / "copy") in str(lake_of(con))
