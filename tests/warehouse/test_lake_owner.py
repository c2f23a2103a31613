"""One lake belongs to one warehouse (an owner stamp, a path derived from the database's name), and
`pace doctor` repairs from what is left: damaged lake partitions from `scores`, a lost or damaged
database file from its lake (`--from-lake`), the lake after a writer was killed (kill -9, in a
subprocess), and the staging folders of a killed `pace export`."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from ingest.lake import STAMP, lake_drift
from tests.helpers import lm_eval_output, run_pace, run_pace_killed, write_csv
from warehouse.connect import connect

ROWS = "SELECT model, benchmark, subdir, instance_id, score, metric_name, origin, source_ref FROM scores ORDER BY ALL"


@pytest.fixture
def wh(tmp_path, small_tree) -> Path:
    """A warehouse folder: pace.duckdb and its lake/ (the small tree: 12 rows, benchmarks src and gaia)."""
    (tmp_path / "wh").mkdir()
    assert run_pace("ingest", small_tree, "--db", tmp_path / "wh" / "pace.duckdb", "--no-progress").exit_code == 0
    return tmp_path / "wh"


def _lake_files(lake: Path) -> dict[str, bytes]:
    return {str(p.relative_to(lake)): p.read_bytes() for p in sorted(lake.rglob("*")) if p.is_file()}


def _rows(db: Path) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(ROWS).fetchall()
    finally:
        con.close()


def _one_line(result, code: int, *needles) -> str:
    assert result.exit_code == code, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def _demo_tree(tmp_path: Path) -> Path:
    assert run_pace("demo-data", tmp_path / "demo", "--models", "3", "--scale", "0.05").exit_code == 0
    return tmp_path / "demo"


# ------------------------------------------------------------------------------------ one owner
def test_two_warehouses_in_one_folder_keep_their_own_lakes(tmp_path, wh, monkeypatch):
    """The README walkthrough beside a real warehouse: PACE_DB=demo.duckdb must not touch lake/."""
    before = _lake_files(wh / "lake")
    demo = _demo_tree(tmp_path)
    monkeypatch.chdir(wh)
    env = {"PACE_DB": "demo.duckdb"}
    assert run_pace("ingest", demo, "--no-progress", env=env).exit_code == 0
    assert (wh / "demo.lake" / "scores").is_dir()
    doctor = run_pace("doctor", env=env)
    assert doctor.exit_code == 0, doctor
    assert _lake_files(wh / "lake") == before
    assert run_pace("doctor", "--check").exit_code == 0
    stamps = {json.loads((wh / name / STAMP).read_text())["warehouse"] for name in ("lake", "demo.lake")}
    assert len(stamps) == 2


def test_a_copy_of_the_database_file_beside_it_never_writes_its_lake(tmp_path, wh, small_tree):
    """`cp pace.duckdb copy.duckdb`: the copy has the same id and the lake it recorded (lake/), but
    lake/ is pace.duckdb's: the copy's writes are refused until it has a lake of its own; a copy of
    the whole folder, or a renamed file, still writes its lake."""
    before = _lake_files(wh / "lake")
    copy = wh / "copy.duckdb"
    copy.write_bytes((wh / "pace.duckdb").read_bytes())
    lm, map_path = lm_eval_output(tmp_path, benchmark="src", subdir="leaf_b", score=0.5, n=5)
    _one_line(run_pace("import", "lm-eval", lm, "--map", map_path, "--db", copy), 2,
              str(wh / "lake"), "pace.duckdb", "copy", "--lake",
              f"PACE_LAKE={wh / 'copy.lake'}")           # beside the copy, whatever the current folder
    check = run_pace("doctor", "--check", "--db", copy)
    assert check.exit_code == 1 and "copy" in check.stdout, check
    assert run_pace("doctor", "--db", copy).exit_code == 1
    rows = _rows(copy)
    _one_line(run_pace("sql", "DELETE FROM scores WHERE model = 'M1'", "--db", copy, "--write"), 2, "copy")
    _one_line(run_pace("alias", "add", "M1", "M1-renamed", "--yes", "--db", copy), 2, "copy")
    assert _rows(copy) == rows                                  # refused before anything was committed
    assert _lake_files(wh / "lake") == before
    assert run_pace("doctor", "--check", "--db", wh / "pace.duckdb").exit_code == 0
    # its own lake: given once, then recorded
    assert run_pace("doctor", "--db", copy, "--lake", wh / "copy.lake").exit_code == 0
    assert run_pace("import", "lm-eval", lm, "--map", map_path, "--db", copy).exit_code == 0
    assert (wh / "copy.lake" / "scores" / "benchmark=src").is_dir() and _lake_files(wh / "lake") == before
    # a copy of the whole folder, and a renamed file, keep writing the lake beside them
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "pace.duckdb").write_bytes((wh / "pace.duckdb").read_bytes())
    (wh / "lake").rename(folder / "lake")
    assert run_pace("ingest", small_tree, "--db", folder / "pace.duckdb", "--no-progress").exit_code == 0
    (folder / "pace.duckdb").rename(folder / "renamed.duckdb")
    assert run_pace("import", "lm-eval", lm, "--map", map_path, "--db", folder / "renamed.duckdb").exit_code == 0
    assert run_pace("doctor", "--check", "--db", folder / "renamed.duckdb").exit_code == 0


def test_a_new_lake_given_to_a_copy_gets_every_benchmark_from_its_first_ingest(tmp_path, wh):
    """The copy's first ingest into a lake of its own wrote the partitions of the benchmarks in that tree
    only (gaia): src had rows in scores and none in the lake, and `pace doctor --check` said so."""
    copy = wh / "copy.duckdb"
    copy.write_bytes((wh / "pace.duckdb").read_bytes())
    only_gaia = tmp_path / "only_gaia"
    write_csv(only_gaia / "gaia" / "M3.csv", "id,score,metric_name\ng1,0.5,acc\ng2,1.0,acc\n")
    assert run_pace("ingest", only_gaia, "--db", copy, "--lake", wh / "copy.lake", "--no-progress").exit_code == 0
    assert sorted(p.name for p in (wh / "copy.lake" / "scores").iterdir()) == ["benchmark=gaia", "benchmark=src"]
    check = run_pace("doctor", "--check", "--db", copy)
    assert check.exit_code == 0, check


def test_a_lake_of_another_warehouse_is_refused_and_never_touched(tmp_path, wh, small_tree):
    theirs = wh / "lake"
    (theirs / ".staging" / "feedbeef").mkdir(parents=True)       # as if their ingest were running
    before = _lake_files(theirs)
    mine = tmp_path / "mine" / "pace.duckdb"
    mine.parent.mkdir()
    _one_line(run_pace("ingest", small_tree, "--db", mine, "--lake", theirs, "--no-progress"), 2,
              str(theirs), "belongs to another warehouse", str(wh / "pace.duckdb"), "--lake")
    assert not mine.exists() and _lake_files(theirs) == before   # a failed first ingest leaves nothing
    # the same for a first harness import (it left an empty warehouse behind; the rule is Warehouse._writing now)
    lm, map_path = lm_eval_output(tmp_path, benchmark="src", subdir="leaf_b", score=0.5, n=5)
    _one_line(run_pace("import", "lm-eval", lm, "--map", map_path, "--db", mine, "--lake", theirs), 2,
              "belongs to another warehouse")
    assert not mine.exists() and _lake_files(theirs) == before
    assert run_pace("ingest", small_tree, "--db", mine, "--no-progress").exit_code == 0
    env = {"PACE_LAKE": theirs}
    check = run_pace("doctor", "--check", "--db", mine, env=env)
    assert check.exit_code == 1 and "belongs to another warehouse" in check.stdout, check
    repair = run_pace("doctor", "--db", mine, env=env)
    assert repair.exit_code == 1 and "belongs to another warehouse" in repair.stdout, repair
    rows = _rows(mine)
    _one_line(run_pace("sql", "DELETE FROM scores WHERE model = 'M1'", "--db", mine, "--write", env=env), 2,
              "belongs to another warehouse")
    assert _rows(mine) == rows                                  # refused before the statement ran
    status = json.loads(run_pace("status", "--db", mine, "--json", env=env).stdout)
    assert "belongs to another warehouse" in status["lake_owner"]
    assert (theirs / ".staging" / "feedbeef").is_dir() and _lake_files(theirs) == before


def test_an_unstamped_lake_is_adopted_only_when_it_provably_matches(tmp_path, wh, small_tree):
    """A lake written before stamps existed: taken over when every partition equals scores; a lake two
    warehouses shared (the old default) differs from both and is refused by both."""
    (wh / "lake" / STAMP).unlink()
    assert run_pace("doctor", "--check", "--db", wh / "pace.duckdb").exit_code == 0
    assert run_pace("doctor", "--db", wh / "pace.duckdb").exit_code == 0
    con = connect(wh / "pace.duckdb", read_only=True)
    ours = con.execute("SELECT value FROM pace_meta WHERE key = 'warehouse'").fetchone()[0]
    con.close()
    assert json.loads((wh / "lake" / STAMP).read_text())["warehouse"] == ours

    (wh / "lake" / STAMP).unlink()                    # the old shared lake: demo.duckdb recorded lake/ too
    demo = wh / "demo.duckdb"
    assert run_pace("ingest", _demo_tree(tmp_path), "--db", demo, "--no-progress").exit_code == 0
    con = duckdb.connect(str(demo))
    con.execute("UPDATE pace_meta SET value = 'lake' WHERE key = 'lake'")
    con.close()
    before = _lake_files(wh / "lake")
    _one_line(run_pace("ingest", _demo_tree(tmp_path), "--db", demo, "--no-progress"), 2, "no owner stamp")
    check = run_pace("doctor", "--db", demo)
    assert check.exit_code == 1 and "no owner stamp" in check.stdout, check
    assert _lake_files(wh / "lake") == before


def test_staging_beside_the_lake_from_an_older_pace_is_reported_not_removed(wh):
    """Before stamps, staging folders sat beside the lake, where two warehouses' writers could meet."""
    old = wh / ".lake.staging-0badcafe"
    write_csv(old / "scores" / "benchmark=gaia" / "data_0.parquet", "partial")
    check = run_pace("doctor", "--check", "--db", wh / "pace.duckdb")
    assert check.exit_code == 1 and ".lake.staging-0badcafe" in check.stdout, check
    repair = run_pace("doctor", "--db", wh / "pace.duckdb")
    assert repair.exit_code == 1 and "not removed" in repair.stdout and old.is_dir(), repair


# --------------------------------------------------------------------------- repairs from scores
@pytest.mark.parametrize("stamped", [True, False], ids=["stamped", "from-before-stamps"])
def test_a_truncated_lake_file_is_reported_and_rebuilt(wh, stamped):
    db = wh / "pace.duckdb"
    if not stamped:                 # a damaged partition proves nothing against a lake whose others match
        (wh / "lake" / STAMP).unlink()
    victim = next((wh / "lake" / "scores" / "benchmark=gaia").glob("*.parquet"))
    victim.write_bytes(victim.read_bytes()[:100])
    status = run_pace("status", "--db", db, "--json")
    assert status.exit_code == 0 and json.loads(status.stdout)["lake_drift"] == ["gaia"], status
    check = run_pace("doctor", "--check", "--db", db)
    assert check.exit_code == 1 and "gaia" in check.stdout and victim.name in check.stdout, check
    repair = run_pace("doctor", "--db", db)
    assert repair.exit_code == 0 and "gaia" in repair.stdout, repair
    assert run_pace("doctor", "--check", "--db", db).exit_code == 0
    con = connect(db, read_only=True)
    assert lake_drift(con) == {}
    con.close()


# ---------------------------------------------------------------------------- repairs from the lake
def test_a_damaged_database_is_named_and_rebuilt_from_its_lake(wh, small_tree):
    db = wh / "pace.duckdb"
    rows = _rows(db)
    stamp = json.loads((wh / "lake" / STAMP).read_text())["warehouse"]
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    error = _one_line(run_pace("status", "--db", db), 2, str(db), "damaged", "pace doctor --from-lake")
    assert "Traceback" not in error
    rebuilt = run_pace("doctor", "--from-lake", "--db", db)
    assert rebuilt.exit_code == 0, rebuilt
    aside = [p for p in wh.iterdir() if p.name.startswith("pace.duckdb.damaged-")]
    assert len(aside) == 1 and aside[0].read_bytes() == data[: len(data) // 3]     # moved aside, not deleted
    assert _rows(db) == rows
    con = connect(db, read_only=True)
    assert con.execute("SELECT value FROM pace_meta WHERE key = 'warehouse'").fetchone()[0] == stamp
    assert lake_drift(con) == {}
    con.close()
    assert run_pace("doctor", "--check", "--db", db).exit_code == 0
    again = run_pace("ingest", small_tree, "--db", db, "--no-progress", "--json")      # replaces, never doubles
    assert again.exit_code == 0 and _rows(db) == rows, again
    _one_line(run_pace("doctor", "--from-lake", "--db", db), 2, "opens", "move it away")


def test_damage_met_after_the_file_opened_is_named_too(wh):
    """Garbage over the middle of the file: whichever block a command meets first, at the open or in a
    query, the error is one line naming the file and the way back."""
    db = wh / "pace.duckdb"
    data = bytearray(db.read_bytes())
    third = len(data) // 3
    data[third: 2 * third] = b"\xa5" * third
    db.write_bytes(bytes(data))
    failed = 0
    for command in (["status"], ["sql", "SELECT sum(score) FROM scores"], ["export", wh.parent / "ex"]):
        result = run_pace(*command, "--db", db)
        if result.exit_code:
            _one_line(result, 2, str(db), "damaged", "pace doctor --from-lake")
            failed += 1
    assert failed


def test_a_lost_database_is_rebuilt_from_its_lake_and_a_missing_lake_is_named(tmp_path, wh):
    db = wh / "pace.duckdb"
    rows = _rows(db)
    db.unlink()
    assert run_pace("doctor", "--from-lake", "--db", db).exit_code == 0
    assert _rows(db) == rows
    _one_line(run_pace("doctor", "--from-lake", "--db", tmp_path / "nowhere.duckdb"), 2, "no lake", "nowhere.lake")


# -------------------------------------------------------------------------------------- kill -9
KILLS = [  # (what, where it dies, benchmarks left stale)
    ("alias", "ingest.lake:write_lake", ["gaia", "src"]),       # committed, nothing staged yet
    ("alias", "ingest.lake:swap_lake", ["gaia", "src"]),        # committed, staged, nothing swapped
    ("alias", "os:replace@2", ["gaia", "src"]),                 # mid-swap: gaia moved out, not yet back
    ("import", "ingest.load:swap_lake", ["src"]),
    ("import", "os:replace", ["src"]),                         # in the swap (its rows join src as one more file)
]


@pytest.mark.parametrize("what,where,stale", KILLS, ids=[f"{w}-{k}" for w, k, _ in KILLS])
def test_a_writer_killed_after_its_commit_leaves_a_lake_doctor_names_and_repairs(tmp_path, wh, what, where, stale):
    db = wh / "pace.duckdb"
    if what == "alias":
        args = ["alias", "add", "M2", "M2-renamed", "--db", db]
    else:
        lm, map_path = lm_eval_output(tmp_path, benchmark="src", subdir="leaf_a", score=0.5, n=20)
        args = ["import", "lm-eval", lm, "--map", map_path, "--db", db]
    target, _, nth = where.partition("@")
    assert run_pace_killed(target, *args, nth=int(nth or 1)) == -9
    check = run_pace("doctor", "--check", "--db", db)
    assert check.exit_code == 1, check
    named = [line for line in check.stdout.splitlines() if "stopped before updating" in line]
    assert named and all(b in named[0] for b in stale), check.stdout
    repair = run_pace("doctor", "--db", db)
    assert repair.exit_code == 0, repair
    assert run_pace("doctor", "--check", "--db", db).exit_code == 0
    con = connect(db, read_only=True)
    assert lake_drift(con) == {}
    con.close()
    assert not [p for p in (wh / "lake").rglob("*") if p.name.startswith((".trash", "feed"))]
    assert not list((wh / "lake" / ".staging").iterdir())


def test_the_next_ingest_removes_what_a_killed_writer_staged(tmp_path, wh, small_tree):
    """After kill -9 in a writer's lake swap, the next successful ingest left the staging folder: `pace doctor
    --check` failed until `pace doctor` ran (stranger). The ingest holds the write lock on its own lake."""
    db = wh / "pace.duckdb"
    lm, map_path = lm_eval_output(tmp_path, benchmark="src", subdir="leaf_a", score=0.5, n=20)
    assert run_pace_killed("ingest.load:swap_lake", "import", "lm-eval", lm, "--map", map_path, "--db", db) == -9
    assert list((wh / "lake" / ".staging").iterdir())
    # what is not a writer's staging stays: a user's files in the lake, the partitions, the stamp
    (wh / "lake" / "NOTES.txt").write_text("mine")
    (wh / "lake" / "mine").mkdir()
    (wh / "lake" / "mine" / "keep.parquet").write_bytes(b"x")
    partitions = {p.name for p in (wh / "lake" / "scores").iterdir()}
    assert run_pace("ingest", small_tree, "--db", db, "--no-progress").exit_code == 0
    assert not list((wh / "lake" / ".staging").iterdir())
    assert (wh / "lake" / "NOTES.txt").read_text() == "mine" and (wh / "lake" / "mine" / "keep.parquet").is_file()
    assert {p.name for p in (wh / "lake" / "scores").iterdir()} == partitions and (wh / "lake" / STAMP).is_file()
    check = run_pace("doctor", "--check", "--db", db)
    assert check.exit_code == 0, check


def test_a_killed_export_leaves_staging_that_the_next_export_removes(tmp_path, wh):
    out = tmp_path / "out"
    assert run_pace_killed("warehouse.outputs:commit", "export", out, "--db", wh / "pace.duckdb") == -9
    assert [p.name[:13] for p in out.iterdir()] == [".pace-staging"] * len(list(out.iterdir())) != []
    assert run_pace("export", out, "--db", wh / "pace.duckdb").exit_code == 0
    assert not [p for p in out.iterdir() if p.name.startswith(".pace-staging")]
    assert (out / "SCHEMA.md").is_file()


def test_an_export_never_removes_the_staging_of_one_still_running(tmp_path, wh):
    from warehouse.outputs import staging_run

    out = tmp_path / "out"
    out.mkdir()
    code = ("import sys, time; from pathlib import Path; from warehouse.outputs import staging_run\n"
            "with staging_run(Path(sys.argv[1])) as s:\n    print(s, flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", code, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        live = Path(holder.stdout.readline().strip())
        assert live.is_dir()
        with staging_run(out) as mine:
            assert live.is_dir() and mine.is_dir()
        assert live.is_dir() and not mine.exists()
    finally:
        holder.kill()
        holder.wait()
    with staging_run(out):
        assert not live.exists()                  # its process is gone: removed by the next run
