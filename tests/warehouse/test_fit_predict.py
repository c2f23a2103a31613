"""Stored proxies: the rows are the predictor; appending rows changes predictions without a refit."""
from __future__ import annotations

import csv
import json
import shutil

import duckdb
import numpy as np
import pytest

from tests.helpers import run_pace
from warehouse.connect import connect
from warehouse.fit import FitRequest, fit_and_store, interval_offsets, loo_interval_coverage
from warehouse.plan import plan_rows
from ingest import score_store

HELD_OUT = None


@pytest.fixture(scope="module")
def fitted(synthetic_db, tmp_path_factory):
    """Synthetic warehouse fitted (default, small budget) without its first model."""
    tmp = tmp_path_factory.mktemp("fit")
    db = tmp / "fit.duckdb"
    shutil.copy(synthetic_db, db)
    con = connect(db)
    held_out = con.execute("SELECT model FROM model_rows() ORDER BY row LIMIT 1").fetchall()[0][0]
    report = fit_and_store(con, FitRequest(method="default", count=30, B=20, seed=3, exclude=[held_out]))
    con.close()
    return db, held_out, report


def test_stored_rows_are_the_predictor_for_default(fitted):
    _, held_out, report = fitted
    assert held_out not in report.models
    assert all(gap <= 1e-9 for gap in report.view_gap.values()), report.view_gap
    assert all(0 < n <= 30 for n in report.n_instances.values())


def test_stored_pair_rows_reproduce_the_pair_proxy(fitted):
    db, held_out, report = fitted
    assert set(report.pair_view_gap) == set(report.targets)
    assert all(gap <= 1e-9 for gap in report.pair_view_gap.values()), report.pair_view_gap
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("""SELECT a.margin + b.margin, a.p_win FROM pair_predictions a JOIN pair_predictions b
                          ON a.model = b.opponent AND a.opponent = b.model AND a.target = b.target""").fetchall()
    assert rows and all(abs(s) < 1e-12 and 0 < p < 1 for s, p in rows)     # antisymmetric margins
    assert con.execute("SELECT count(DISTINCT opponent) FROM pair_predictions WHERE model = ?",
                       [held_out]).fetchall()[0][0] == len(report.models)


def test_predictions_view_works_without_udfs(fitted):
    db, held_out, _ = fitted
    con = duckdb.connect(str(db), read_only=True)     # a plain client: no pace UDFs registered
    rows = con.execute("SELECT target, predicted, low, high, coverage FROM predictions WHERE model = ?",
                       [held_out]).fetchall()
    assert len(rows) == 4
    for _, predicted, low, high, coverage in rows:
        assert 0 <= low <= high <= 1 and 0 <= predicted <= 1 and 0 < coverage <= 1


def test_appending_a_new_models_rows_changes_its_prediction_without_refit(fitted, tmp_path):
    db, held_out, _ = fitted
    work = tmp_path / "append.duckdb"
    shutil.copy(db, work)
    con = connect(work)
    fits_before = con.execute("SELECT count(*) FROM proxy_fits").fetchall()[0][0]
    newcomer = "Newcomer-1"
    assert con.execute("SELECT count(*) FROM predictions WHERE model = ?", [newcomer]).fetchall()[0][0] == 0
    plan = plan_rows(con, newcomer)
    # every instance that weighs something in a current fit (zero-weight ones change nothing)
    assert len(plan) == con.execute("""SELECT count(*) FROM (SELECT benchmark, subdir, instance_id FROM proxy_instances
                                       GROUP BY ALL HAVING max(abs(weight)) > 1e-12)""").fetchall()[0][0]
    # copy the held-out model's scores on the planned instances, in two batches, as a runner would
    source = dict(((b, s, i), v) for b, s, i, v in con.execute(
        "SELECT benchmark, subdir, instance_id, score FROM scores WHERE model = ?", [held_out]).fetchall())
    todo = [k for k in plan if source.get(k) is not None]
    seen = []
    for batch in (todo[: len(todo) // 3], todo[len(todo) // 3:]):
        for k in batch:
            score_store.execute(con, "INSERT INTO scores VALUES (?, ?, ?, ?, ?, 'm', 'runner', 'run:test', now())",
                                [newcomer, *k, source[k]])
        seen.append(dict((t, (p, c)) for t, p, c in con.execute(
            "SELECT target, predicted, coverage FROM predictions WHERE model = ?", [newcomer]).fetchall()))
    assert len(seen[0]) == 4 and seen[0] != seen[1]
    assert all(seen[1][t][1] > seen[0][t][1] for t in seen[1])          # coverage grows
    assert con.execute("SELECT count(*) FROM proxy_fits").fetchall()[0][0] == fits_before   # no refit
    assert len(plan_rows(con, newcomer)) == len(plan) - len(todo)
    # run on its plan only, it has none of the instances behind the ability scale (the proxies' own are left
    # out of it): the prediction is the Pace part alone, and no out-of-range verdict is made
    assert {a for (a,) in con.execute("SELECT DISTINCT ability FROM predictions WHERE model = ?",
                                      [newcomer]).fetchall()} == {None}
    # with every source score of the held-out model it gets exactly the same prediction
    score_store.execute(con, """INSERT INTO scores SELECT ?, benchmark, subdir, instance_id, score, metric_name, 'runner', 'run:test',
                   now() FROM scores s JOIN benchmarks USING (benchmark)
                   WHERE s.model = ? AND role = 'source'
                   AND (benchmark, subdir, instance_id) NOT IN (SELECT (benchmark, subdir, instance_id)
                                                               FROM scores WHERE model = ?)""",
                [newcomer, held_out, newcomer])
    same = dict(con.execute("SELECT target, predicted FROM predictions WHERE model = ?", [held_out]).fetchall())
    now = dict(con.execute("SELECT target, predicted FROM predictions WHERE model = ?", [newcomer]).fetchall())
    assert now == pytest.approx(same, abs=1e-12)


def test_a_model_run_on_its_plan_gets_no_ability_from_the_rows_its_calls_also_score(fitted, tmp_path):
    """A runner call scores sibling rows beside the planned one (ifeval's four metrics, repobench's
    three, logiqa's two filters); the ability scale must not read those either, else a plan-only model
    gets an ability from a handful of hard, discriminating instances."""
    from warehouse.plan import call_of

    db, held_out, _ = fitted
    work = tmp_path / "siblings.duckdb"
    shutil.copy(db, work)
    con = connect(work)
    calls = {call_of(*k) for k in plan_rows(con, "Newcomer-2")}
    rows = [r for r in con.execute("SELECT benchmark, subdir, instance_id, score FROM scores WHERE model = ?",
                                   [held_out]).fetchall() if call_of(*r[:3]) in calls]
    assert len(rows) > len(calls)                  # some calls score more than one row
    for row in rows:
        score_store.execute(con, "INSERT INTO scores VALUES ('Newcomer-2', ?, ?, ?, ?, 'm', 'runner', 'run:test', now())",
                            list(row))
    got = con.execute("SELECT DISTINCT ability FROM predictions WHERE model = 'Newcomer-2'").fetchall()
    assert got == [(None,)]


def test_plan_and_predict_commands(fitted, tmp_path):
    db, held_out, _ = fitted
    work = tmp_path / "cli.duckdb"
    shutil.copy(db, work)
    out = tmp_path / "plan.csv"
    result = run_pace(*["plan", "Nobody-9", "--db", str(work), "--json", "--out", str(out)])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    with out.open() as fh:
        assert len(list(csv.DictReader(fh))) == payload["instances"] > 0
    assert payload["calls"] <= payload["instances"]
    result = run_pace(*["predict", held_out, "--db", str(work), "--json", "--min-coverage", "0"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["predictions"]) == 4
    con = connect(work)          # take a few of the proxy's instances away from the held-out model
    score_store.execute(con, """DELETE FROM scores WHERE model = ? AND (benchmark, subdir, instance_id) IN
                   (SELECT (benchmark, subdir, instance_id) FROM proxy_instances WHERE task = 'abs' LIMIT 5)""",
                [held_out])
    con.close()
    refused = run_pace(*["predict", held_out, "--db", str(work), "--min-coverage", "1"])
    assert refused.exit_code == 2 and "--allow-partial" in refused.output
    allowed = run_pace(*["predict", held_out, "--db", str(work), "--min-coverage", "1",
                                  "--allow-partial"])
    assert allowed.exit_code == 0
    status = json.loads(run_pace(*["status", "--db", str(work), "--json"]).stdout)
    assert sorted((f["task"], f["target"]) for f in status["current_fits"]) == sorted(
        (task, t) for task in ("abs", "pair") for t in ("gaia", "swebench", "swebench_multimodal", "swtbench"))


def test_selections_export_import_roundtrip(fitted, tmp_path):
    db, _, _ = fitted
    work = tmp_path / "sel.duckdb"
    shutil.copy(db, work)
    path = tmp_path / "selections_C30.csv"
    assert run_pace(*["selections", "export", str(path), "--db", str(work)]).exit_code == 0
    with path.open() as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["mode", "fold", "target", "benchmark", "subdir", "instance_id", "col_idx", "weight"]
    result = run_pace(*["selections", "import", str(path), "--db", str(work), "--name", "back"])
    assert result.exit_code == 0, result.output
    con = connect(work)
    back = con.execute("SELECT count(*), count(DISTINCT (target, benchmark, subdir, instance_id)) "
                       "FROM loocv_selections WHERE run_id = 'back'").fetchall()[0]
    stored = con.execute("SELECT count(*), count(DISTINCT (target, benchmark, subdir, instance_id)) "
                         "FROM proxy_weights JOIN current_fits USING (fit_id, task, target) WHERE task = 'abs'"
                         ).fetchall()[0]
    assert back == stored


def test_export_writes_parquet_and_schema(fitted, tmp_path):
    db, held_out, _ = fitted
    out = tmp_path / "export"
    assert run_pace(*["export", str(out), "--db", str(db)]).exit_code == 0
    con = duckdb.connect()
    n = con.execute(f"SELECT count(*) FROM read_parquet('{out}/scores/*/*.parquet', hive_partitioning=true)"
                    ).fetchall()[0][0]
    assert n == connect(db, read_only=True).execute("SELECT count(*) FROM scores").fetchall()[0][0]
    preds = con.execute(f"SELECT count(*) FROM '{out}/predictions.parquet' WHERE model = ?", [held_out]).fetchall()
    assert preds[0][0] == 4 and "## proxy_weights" in (out / "SCHEMA.md").read_text()


def test_interval_offsets_and_their_leave_one_out_coverage():
    rng = np.random.default_rng(0)
    r = rng.normal(0, 1, 2000)
    lo, hi = interval_offsets(r, 0.8)
    assert lo == pytest.approx(-1.2816, abs=0.1) and hi == pytest.approx(1.2816, abs=0.1)
    assert loo_interval_coverage(r[:400], 0.8) == pytest.approx(0.8, abs=0.03)
    # small samples: the conformal order statistics keep coverage at or above the level
    hits = []
    for _ in range(2000):
        s = rng.normal(0, 1, 14)
        lo, hi = interval_offsets(s[:13], 0.8)
        hits.append(lo <= s[13] <= hi)
    assert np.mean(hits) >= 0.8 - 0.02
    assert np.isnan(loo_interval_coverage(np.array([0.1, np.nan]), 0.8))


def test_the_untrained_note_names_the_targets_each_model_lacks():
    """A model lacking only commit0 is not a model with 'no target score': the note says which targets."""
    from warehouse.fit import _merge_untrained
    lines = _merge_untrained(["gaia: no target value for A (not trained on)",
                              "commit0: no target value for A, C, D (not trained on)", "a warning"])
    assert lines[0] == "a warning"
    assert lines[1].startswith("1 models have no score on commit0, gaia (") and lines[1].endswith(": A")
    assert lines[2].startswith("2 models have no score on commit0 (") and lines[2].endswith(": C, D")


def test_a_fit_without_target_scores_is_refused_in_one_line_naming_what_is_missing(tmp_path):
    """No target benchmark at all, then a target whose every score is empty: one line each, exit 2, no fit."""
    from tests.helpers import write_csv

    for model in ("A", "B", "C"):
        write_csv(tmp_path / "tree" / "aime25" / f"{model}.csv", "id,score,metric_name\n1,1,acc\n2,0,acc\n3,1,acc\n")
    db = tmp_path / "pace.duckdb"
    assert run_pace("ingest", tmp_path / "tree", "--db", db).exit_code == 0
    none = run_pace("fit", "--db", db)
    assert none.exit_code == 2 and "no target benchmark has score rows (commit0, gaia, swebench" in none.stderr
    assert "have the role 'target' and no rows" in none.stderr      # it said no benchmark had the role
    assert len(none.stderr.strip().splitlines()) == 1
    for target in ("commit0", "gaia", "swebench", "swebench_multimodal", "swtbench"):
        assert run_pace("benchmarks", "set", target, "excluded", "--db", db).exit_code == 0
    nothing = run_pace("fit", "--db", db)
    assert nothing.exit_code == 2 and "no benchmark has the role 'target'" in nothing.stderr
    for target in ("commit0", "gaia", "swebench", "swebench_multimodal", "swtbench"):
        assert run_pace("benchmarks", "set", target, "target", "--db", db).exit_code == 0
    for model in ("A", "B", "C"):
        write_csv(tmp_path / "tree" / "gaia" / f"{model}.csv", "id,score,metric_name\n1,,acc\n2,,acc\n")
    assert run_pace("ingest", tmp_path / "tree", "--db", db).exit_code == 0
    empty = run_pace("fit", "--db", db)
    assert empty.exit_code == 2 and "no model has scores on the target benchmarks (gaia)" in empty.stderr
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM proxy_fits").fetchone()[0] == 0


def _fit_rows(db) -> tuple:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT (SELECT count(*) FROM proxy_fits), (SELECT count(*) FROM proxy_weights), "
                           "(SELECT count(*) FROM anchor_fits)").fetchall()[0]
    finally:
        con.close()


def test_a_fit_that_fails_while_storing_stores_nothing(fitted, tmp_path, monkeypatch):
    """The proxy rows were committed before the check that they predict what the kernels did, and the anchors'
    item models in a transaction of their own: a failure in either (out of memory under PACE_MEMORY_LIMIT=20MB,
    a stranger's) said "the fit failed" while a fit without item models was stored and served."""
    import warehouse.api
    import warehouse.fit
    from warehouse.api import Warehouse
    from warehouse.errors import UserError

    db = tmp_path / "fit.duckdb"
    shutil.copy(fitted[0], db)
    before = _fit_rows(db)

    def out_of_memory(*args, **kwargs):
        raise duckdb.OutOfMemoryException("Out of Memory Error: test")

    for module, name, anchors in ((warehouse.fit, "_check_stored", False), (warehouse.api, "store_anchor_fit", True)):
        with monkeypatch.context() as patch:
            patch.setattr(module, name, out_of_memory)
            with pytest.raises(UserError, match=r"the fit failed: Out of Memory Error: test \(nothing was stored\)"):
                Warehouse(db).fit(task="abs", count=10, intervals=False, anchors=anchors, sources="planbench,ifeval")
        assert _fit_rows(db) == before, name


def test_a_restricted_fit_whose_only_source_gets_no_weight_is_stored(fitted, tmp_path):
    """A model with rows on one source benchmark only: its restricted proxy may weigh no instance, and storing
    its (no) weights failed ('executemany requires a non-empty list of parameter sets'), for `pace predict`
    and for every model of `pace report`."""
    db = tmp_path / "fit.duckdb"
    shutil.copy(fitted[0], db)
    held_out = fitted[1]
    added = run_pace("sql", f"""INSERT INTO scores SELECT 'OnlyMmmu', benchmark, subdir, instance_id, score, metric_name,
                                'runner', 'run:only-mmmu', recorded_at FROM scores
                                WHERE model = '{held_out}' AND benchmark = 'mmmu'""", "--write", "--db", db)
    assert added.exit_code == 0, added.output
    predicted = run_pace("predict", "OnlyMmmu", "--json", "--allow-partial", "--db", db)
    assert predicted.exit_code == 0, predicted.output
    assert json.loads(predicted.stdout)["predictions"]
