"""New models (issue 9): splits as rows, families, collapsed cells, target_means without targets, the default
method's extrapolation, restricted fits for models lacking sources, the out-of-range note. Synthetic data only."""
from __future__ import annotations

import json
import shutil

import pytest

from ingest.load import ingest_tree
from tests.helpers import run_pace, synthetic_warehouse, write_csv
from warehouse.connect import connect
from ingest import score_store

TAIL = 3


@pytest.fixture(scope="module")
def tail_db(tmp_path_factory):
    """12 synthetic models, the last 3 a weak tail below every other model's ability; returns (db, summary)."""
    return synthetic_warehouse(tmp_path_factory.mktemp("tail_wh"), n_models=12, seed=5, scale=0.4, weak_tail=TAIL,
                               weak_shift=1.5)


@pytest.fixture
def work_db(tail_db, tmp_path):
    db, summary = tail_db
    copy = tmp_path / "work.duckdb"
    shutil.copy(db, copy)
    return copy, summary


def _sql(db, query, *params):
    con = connect(db, read_only=True)
    try:
        return con.execute(query, list(params)).fetchall()
    finally:
        con.close()


def test_split_folds_are_rows(tail_db):
    db, summary = tail_db
    tail = set(summary.models[-TAIL:])
    low = {m for (m,) in _sql(db, "SELECT model FROM split_folds('low-3')")}
    assert low == tail                                   # the weak tail has the lowest source ability
    high = {m for (m,) in _sql(db, "SELECT model FROM split_folds('high-2')")}
    order = [m for (m,) in _sql(db, "SELECT model FROM source_ability ORDER BY ability DESC")]
    assert high == set(order[:2])
    loo = _sql(db, "SELECT fold, model FROM split_folds('loo')")
    assert len(loo) == 12 and all(f == m for f, m in loo)
    families = dict(_sql(db, "SELECT model, fold FROM split_folds('family')"))
    assert families["Orrin-4.5-Pro"] == families["Orrin-4.5-Mini"] == "Orrin" != families["Talis-3.2"]


def test_families_set_and_reset(work_db):
    db, _ = work_db
    assert run_pace("families", "set", "Talis-3.2", "Orrin", "--db", db).exit_code == 0
    assert dict(_sql(db, "SELECT model, family FROM model_family"))["Talis-3.2"] == "Orrin"
    assert dict(_sql(db, "SELECT model, fold FROM split_folds('family')"))["Talis-3.2"] == "Orrin"
    listed = json.loads(run_pace("families", "list", "--db", db, "--json").stdout)
    assert {"model": "Talis-3.2", "family": "Orrin", "explicit": True} in listed
    assert run_pace("families", "reset", "Talis-3.2", "--db", db).exit_code == 0
    assert dict(_sql(db, "SELECT model, family FROM model_family"))["Talis-3.2"] == "Talis"
    bad = run_pace("families", "set", "NoSuchModel", "X", "--db", db)
    assert bad.exit_code == 2 and "NoSuchModel" in bad.stderr


def test_target_means_is_null_for_a_model_without_target_scores(work_db):
    db, _ = work_db
    con = connect(db)
    score_store.execute(con, """INSERT INTO scores SELECT 'SourcesOnly', benchmark, subdir, instance_id, score, metric_name,
                   'runner', 'run:t', now() FROM scores JOIN benchmarks USING (benchmark)
                   WHERE model = 'Talis-3.2' AND role = 'source'""")
    con.close()
    rows = _sql(db, "SELECT mean, n_scored FROM target_means WHERE model = 'SourcesOnly'")
    assert rows and all(mean is None and n == 0 for mean, n in rows)
    avg_with, avg_without = _sql(db, """SELECT avg(mean), avg(mean) FILTER (WHERE model <> 'SourcesOnly')
                                        FROM target_means""")[0]
    assert avg_with == pytest.approx(avg_without)


def test_collapsed_cells(tmp_path):
    """A harness failure (one leaf at 0 while the model's sibling leaves are normal) is flagged; a model weak
    on a whole benchmark is not; a file listing only failed instances is flagged."""
    for leaf in ("a", "b", "c"):
        for model in ("M1", "M2", "M3"):
            write_csv(tmp_path / "tree" / "bench" / leaf / f"{model}.csv",
                      "id,score,metric_name\n" + "".join(f"{i},{1.0 if i % 10 < 8 else 0.0},acc\n" for i in range(40)))
        broken = "0.0" if leaf == "a" else None
        write_csv(tmp_path / "tree" / "bench" / leaf / "Broken.csv", "id,score,metric_name\n" + "".join(
            f"{i},{broken or (1.0 if i % 10 < 8 else 0.0)},acc\n" for i in range(40)))
        write_csv(tmp_path / "tree" / "bench" / leaf / "Weak.csv", "id,score,metric_name\n" + "".join(
            f"{i},{1.0 if i % 25 < 3 else 0.0},acc\n" for i in range(40)))
    write_csv(tmp_path / "tree" / "bench" / "a" / "FailOnly.csv",
              "id,score,metric_name\n" + "".join(f"{i},0.0,acc\n" for i in range(0, 40, 5)))
    con = connect(tmp_path / "c.duckdb", create=True)
    ingest_tree(con, tmp_path / "tree", tmp_path / "lake")
    flagged = {(m, s, r) for m, s, r in con.execute(
        "SELECT model, subdir, reason FROM collapsed_cells").fetchall()}
    assert flagged == {("Broken", "a", "near_zero"), ("FailOnly", "a", "failures_only")}
    # the ability leaves collapsed cells out
    assert con.execute("SELECT count(*) FROM collapsed_scores WHERE model = 'Broken'").fetchall()[0][0] == 40


def test_loocv_split_low_k_records_folds_and_extrapolates(work_db):
    db, summary = work_db
    tail = set(summary.models[-TAIL:])
    maes = {}
    for method in ("default", "mean"):
        budget = ["--count", "40"] if method == "default" else []      # mean reads no budget
        result = run_pace("loocv", "abs", "--method", method, "--split", "low-3", *budget,
                          "--db", db, "--out", db.parent / f"out-{method}", "--json")
        assert result.exit_code == 0, result.output
        payload = json.loads(result.stdout)
        run_id = payload["run_id"]
        assert _sql(db, "SELECT split FROM loocv_runs WHERE run_id = ?", run_id) == [("low-3",)]
        assert {m for (m,) in _sql(db, "SELECT model FROM loocv_folds WHERE run_id = ?", run_id)} == tail
        assert {m for (m,) in _sql(db, "SELECT DISTINCT model FROM loocv_predictions WHERE run_id = ?", run_id)} == tail
        avg = [r for r in payload["metrics"] if r["target"] == "AVERAGE"][0]
        assert avg["pair_accuracy_pct"] is not None
        truth = summary.expected_target_means
        errors = [abs(p - truth[t][m]) for m, t, p in _sql(
            db, "SELECT model, target, predicted FROM loocv_predictions WHERE run_id = ?", run_id)]
        maes[method] = sum(errors) / len(errors)
    assert maes["default"] < 0.5 * maes["mean"]          # the weak tail is predicted far below the training mean


def test_loocv_rejects_a_bad_split(tail_db):
    db, _ = tail_db
    for bad in ("low", "low-0", "medium-3", "lowest-3"):
        result = run_pace("loocv", "abs", "--split", bad, "--db", db)
        assert result.exit_code == 2 and bad in result.stderr
    result = run_pace("loocv", "abs", "--split", "low-11", "--db", db)
    assert result.exit_code == 2 and "at least 3" in result.stderr


@pytest.fixture(scope="module")
def fitted_without_tail(tail_db, tmp_path_factory):
    """The default method fitted on the 9 models above the tail (the tail excluded from the fit). No anchors
    item models: the tail's own target rows would be its anchors, and these tests are about the sources."""
    db, summary = tail_db
    copy = tmp_path_factory.mktemp("fit_tail") / "fit.duckdb"
    shutil.copy(db, copy)
    tail = summary.models[-TAIL:]
    result = run_pace("fit", "--task", "abs", "--count", "40", "--no-anchors", "--exclude", ",".join(tail),
                      "--db", copy, "--json")
    assert result.exit_code == 0, result.output
    return copy, summary, json.loads(result.stdout)


def test_fit_stores_the_link_and_the_view_reproduces_the_kernel(fitted_without_tail):
    db, _, report = fitted_without_tail
    assert all(gap <= 1e-9 for gap in report["view_gap"].values()), report["view_gap"]
    rows = _sql(db, """SELECT link, struct_slope, floor_slope, ability_lo < ability_hi, oor_lo <= resid_lo,
                              oor_hi >= resid_hi FROM current_fits WHERE task = 'abs'""")
    assert rows and all(r[0] == "logit" and r[1] >= 0 and r[2] >= 0 and all(r[3:]) for r in rows)
    assert _sql(db, "SELECT count(*) FROM proxy_leaves")[0][0] > 0


def test_predict_says_when_a_model_is_out_of_range(fitted_without_tail, tmp_path):
    db, summary, _ = fitted_without_tail
    db = shutil.copy(db, tmp_path / "oor.duckdb")      # predict may store a restricted fit: keep the fixture clean
    weakest = summary.models[-1]
    flags = _sql(db, "SELECT out_of_range, range_side FROM predictions WHERE model = ?", weakest)
    assert flags and all(oor and side == "below" for oor, side in flags)
    inside = _sql(db, "SELECT bool_or(out_of_range) FROM predictions WHERE model = ?", summary.models[0])[0][0]
    assert inside is False
    result = run_pace("predict", weakest, "--db", db)
    assert result.exit_code == 0, result.output
    assert "out of range" in result.stdout and "below" in result.stdout
    truth = summary.expected_target_means
    pred = dict(_sql(db, "SELECT target, predicted FROM predictions WHERE model = ?", weakest))
    train_mean = {t: sum(truth[t][m] for m in summary.models[:-TAIL]) / (12 - TAIL) for t in truth}
    # closer to its truth than the training mean is
    assert sum(abs(pred[t] - truth[t][weakest]) for t in pred) < sum(abs(train_mean[t] - truth[t][weakest])
                                                                     for t in pred)


def test_predict_fits_a_restricted_proxy_for_a_model_lacking_a_benchmark(fitted_without_tail, tmp_path):
    db, summary, _ = fitted_without_tail
    work = tmp_path / "restricted.duckdb"
    shutil.copy(db, work)
    # a newcomer with one model's source scores, but no lifbench at all
    donor = next(m for m in summary.multimodal_models if m not in summary.models[-TAIL:])
    con = connect(work)
    score_store.execute(con, """INSERT INTO scores SELECT 'Newcomer', benchmark, subdir, instance_id, score, metric_name, 'runner',
                   'run:t', now() FROM scores JOIN benchmarks USING (benchmark)
                   WHERE model = ? AND role = 'source' AND benchmark <> 'lifbench'""", [donor])
    con.close()
    fits_before = _sql(work, "SELECT count(DISTINCT fit_id) FROM proxy_fits")[0][0]
    result = run_pace("predict", "Newcomer", "--db", work, "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["missing_sources"] == ["lifbench"] and payload["made_fit"]
    restricted = [p for p in payload["predictions"] if p["restricted"]]
    assert restricted and all("lifbench" not in p["sources"] and p["coverage"] >= 0.9 for p in restricted)
    assert all(p["loocv_mae"] is not None for p in payload["predictions"])
    assert _sql(work, "SELECT restricted_for FROM restricted_fits LIMIT 1") == [("Newcomer",)]
    # the next prediction reuses it: no new fit
    again = json.loads(run_pace("predict", "Newcomer", "--db", work, "--json").stdout)
    assert not again["made_fit"] and again["restricted_fit"] == payload["restricted_fit"]
    assert _sql(work, "SELECT count(DISTINCT fit_id) FROM proxy_fits")[0][0] == fits_before + 1


def test_after_a_role_change_predict_refits_nothing_and_says_the_roles_changed(fitted_without_tail, tmp_path):
    """`pace benchmarks set swtbench source` then excluding a source the current fit uses: every model now lacks
    a fit source. No proxy is restricted from a fit made under other roles (it failed with "targets without any
    rows: swtbench"; a first fix trained one on the remaining targets, which a stranger's test showed reused
    after the role was set back, and served beside the old fit's rows of the dropped targets): one line says the
    roles changed and what to do; --no-restrict predicts with the current fit, noting the change."""
    db, summary, _ = fitted_without_tail
    work = shutil.copy(db, tmp_path / "roles.duckdb")
    fits_before = _sql(work, "SELECT count(DISTINCT fit_id) FROM proxy_fits")[0][0]
    for bench, role in (("swtbench", "source"), ("lifbench", "excluded")):
        assert run_pace("benchmarks", "set", bench, role, "--db", work).exit_code == 0
    result = run_pace("predict", summary.models[0], "--db", work)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert "roles changed since the current fit (swtbench: target -> source; lifbench: source -> excluded)" \
        in result.stderr and "run `pace fit` first, or pass --no-restrict" in result.stderr
    assert _sql(work, "SELECT count(DISTINCT fit_id) FROM proxy_fits")[0][0] == fits_before     # nothing fitted
    plain = run_pace("predict", summary.models[0], "--no-restrict", "--allow-partial", "--db", work, "--json")
    assert plain.exit_code == 0, plain.output
    assert any(n.startswith("the benchmarks' roles changed since the current fit") for n in json.loads(plain.stdout)["notes"])


def test_compat_and_pair_run_on_a_split(tail_db, tmp_path):
    """compat (published zeros: evaluated per held-out model on its fold's training models) and Goal B both
    take --split; every model of every fold is predicted once."""
    db, summary = tail_db
    work = shutil.copy(db, tmp_path / "split.duckdb")
    result = run_pace("loocv", "abs", "--method", "compat", "--strict-budget", "--split", "family", "--count", "20",
                      "--B", "10", "--db", work, "--out", tmp_path / "c", "--json")
    assert result.exit_code == 0, result.output
    run_id = json.loads(result.stdout)["run_id"]
    folds = dict(_sql(work, "SELECT model, fold FROM loocv_folds WHERE run_id = ?", run_id))
    assert len(folds) == 12 and len(set(folds.values())) < 12          # whole families held out together
    assert _sql(work, "SELECT count(*), count(predicted) FROM loocv_predictions WHERE run_id = ?", run_id) == [(48, 48)]
    result = run_pace("loocv", "pair", "--split", "low-3", "--count", "20", "--B", "10", "--db", work,
                      "--out", tmp_path / "p", "--json")
    assert result.exit_code == 0, result.output
    run_id = json.loads(result.stdout)["run_id"]
    rows = set(_sql(work, "SELECT DISTINCT model FROM loocv_pair_predictions WHERE run_id = ?", run_id))
    assert rows == {(m,) for m in summary.models[-TAIL:]}
