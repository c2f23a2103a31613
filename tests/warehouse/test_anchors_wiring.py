"""Agentic anchors in the warehouse (issue 23): `pace fit` stores each target's item model as rows, the
SQL estimate equals the numpy reference, `predictions` serves it to a model the item models were not
trained on, and `pace plan --anchors K` picks the next anchors adaptively. Synthetic data only."""
from __future__ import annotations

import json
from collections import Counter
import shutil

import numpy as np
import pytest

from ingest.synthetic import generate_tree
from models.anchors.target import Prior, estimate
from tests.helpers import run_pace
from warehouse.anchors import set_stored_factors, stored_target
from warehouse.api import Warehouse
from ingest import score_store

TARGETS = ("gaia", "swebench", "swebench_multimodal", "swtbench")


@pytest.fixture(scope="module")
def anchored(tmp_path_factory):
    """A synthetic warehouse fitted with one model left out (it plays the new model); (db, held model)."""
    tmp = tmp_path_factory.mktemp("anchors")
    generate_tree(tmp / "tree", n_models=10, seed=3, scale=0.15)
    wh = Warehouse(tmp / "pace.duckdb")
    wh.ingest(tmp / "tree")
    with wh.connect() as con:
        held = con.execute("SELECT min(model) FROM scores WHERE benchmark = 'swebench'").fetchone()[0]
    report = wh.fit(count=12, task="abs", exclude=[held])
    assert set(report.anchors) == set(TARGETS) and all(m == 9 for m, _ in report.anchors.values())
    assert any("commit0" in w for w in report.warnings)        # no model has commit0 rows here
    return tmp / "pace.duckdb", held


@pytest.fixture
def copy(anchored, tmp_path):
    db, held = anchored
    shutil.copy(db, tmp_path / "pace.duckdb")
    return tmp_path / "pace.duckdb", held


def test_a_model_with_every_item_gets_its_own_full_mean(anchored):
    db, held = anchored
    with Warehouse(db, read_only=True).connect() as con:
        truth = dict(con.execute("SELECT target, mean FROM target_means WHERE model = ?", [held]).fetchall())
        rows = con.execute("SELECT target, method, anchors, predicted, low, high FROM predictions WHERE model = ?",
                           [held]).fetchall()
        trained = con.execute("SELECT DISTINCT method FROM predictions WHERE model <> ?", [held]).fetchall()
    assert {r[0] for r in rows} == set(TARGETS)
    for target, method, anchors, predicted, low, high in rows:
        assert method == "anchors" and anchors > 0
        assert predicted == pytest.approx(truth[target], abs=1e-9)          # nothing left to estimate
        assert low <= predicted <= high
    assert trained == [("default",)]                                       # training models: the sources' answer


def _keep_anchors(db, model: str, keep: int, seed: int = 0) -> dict[str, set]:
    """Delete all but ``keep`` random target rows of ``model`` per target; returns the kept keys."""
    rng = np.random.default_rng(seed)
    kept = {}
    with Warehouse(db).connect(write=True) as con:
        con.execute("CREATE TABLE held_back AS SELECT * FROM scores WHERE model = ?", [model])   # its true results
        for target in TARGETS:
            keys = con.execute("SELECT subdir, instance_id FROM scores WHERE model = ? AND benchmark = ? "
                               "ORDER BY 1, 2", [model, target]).fetchall()
            chosen = {keys[i] for i in rng.choice(len(keys), size=keep, replace=False)}
            for key in set(keys) - chosen:
                score_store.execute(con, "DELETE FROM scores WHERE model = ? AND benchmark = ? AND subdir = ? AND instance_id = ?",
                            [model, target, *key])
            kept[target] = chosen
    return kept


def test_the_sql_estimate_is_the_numpy_estimate(copy):
    db, held = copy
    _keep_anchors(db, held, keep=5)
    with Warehouse(db, read_only=True).connect() as con:
        sql = {r[0]: r[1:] for r in con.execute(
            "SELECT target, anchors, predicted, low, high, prior_kind, prior_mean, prior_sd, fit_id "
            "FROM anchor_estimates WHERE model = ?", [held]).fetchall()}
        for target, (anchors, predicted, low, high, kind, mean, sd, fit_id) in sql.items():
            assert anchors == 5 and kind == "sources"            # it has source rows, no metadata
            model, keys = stored_target(con, fit_id, target)
            set_stored_factors(con, model, fit_id, target)
            got = dict(((s, i), y) for s, i, y in con.execute(
                "SELECT subdir, instance_id, score FROM scores WHERE model = ? AND benchmark = ?",
                [held, target]).fetchall())
            y = np.array([got.get(k, np.nan) for k in keys])
            reference = estimate(model, Prior(mean, sd, kind), y, np.isfinite(y))
            assert (predicted, low, high) == pytest.approx(reference, abs=2e-3), target
            assert 0 <= low <= predicted <= high <= 1


def test_an_estimate_outside_the_training_range_is_widened_by_the_outside_factor_in_sql_and_numpy(copy):
    """The stored range and factor_outside decide the interval: squeeze the range so that every estimate is
    out of it and double the outside factors; SQL then widens with those, as the numpy reference does, and the
    intervals grow; a fit stored before these columns (NULLs) keeps its one factor."""
    db, held = copy
    _keep_anchors(db, held, keep=5)

    def served(con):
        return {r[0]: r[1:] for r in con.execute("SELECT target, predicted, low, high, fit_id, prior_kind, "
                                                 "prior_mean, prior_sd FROM anchor_estimates WHERE model = ?",
                                                 [held]).fetchall()}

    with Warehouse(db).connect(write=True) as con:
        con.execute("UPDATE anchor_fits SET range_lo = 0.0, range_hi = 1.0")       # every estimate inside
        before = served(con)
        con.execute("UPDATE anchor_fits SET range_lo = 0.999, range_hi = 1.0")     # every estimate outside
        con.execute("UPDATE anchor_factors SET factor_outside = 2 * factor")
        after = served(con)
        for target, (predicted, low, high, fit_id, kind, mean, sd) in after.items():
            assert predicted == pytest.approx(before[target][0], abs=1e-12)
            assert high - low > before[target][2] - before[target][1] + 1e-6, target
            model, keys = stored_target(con, fit_id, target)
            set_stored_factors(con, model, fit_id, target)
            assert model.range_lo == 0.999 and model.factors_outside == {k: 2 * f for k, f in model.factors.items()}
            got = dict(((s, i), y) for s, i, y in con.execute(
                "SELECT subdir, instance_id, score FROM scores WHERE model = ? AND benchmark = ?",
                [held, target]).fetchall())
            y = np.array([got.get(k, np.nan) for k in keys])
            assert (predicted, low, high) == pytest.approx(estimate(model, Prior(mean, sd, kind), y, np.isfinite(y)),
                                                           abs=2e-3), target
        con.execute("UPDATE anchor_fits SET range_lo = NULL, range_hi = NULL")
        con.execute("UPDATE anchor_factors SET factor_outside = NULL")
        older = served(con)
    assert older.keys() == before.keys()
    for target, values in older.items():
        assert values[:3] == pytest.approx(before[target][:3], abs=1e-12), target


def test_zero_anchors_give_the_sources_answer_and_metadata_only_a_prior_estimate(copy):
    db, held = copy
    with Warehouse(db).connect(write=True) as con:
        score_store.execute(con, "DELETE FROM scores WHERE model = ? AND benchmark IN (SELECT benchmark FROM benchmarks "
                    "WHERE role = 'target')", [held])
        sources = dict(con.execute("SELECT target, predicted FROM source_predictions WHERE model = ?",
                                   [held]).fetchall())
        served = {r[0]: r[1:] for r in con.execute("SELECT target, method, anchors, predicted FROM predictions "
                                                   "WHERE model = ?", [held]).fetchall()}
    assert {t: (m, k) for t, (m, k, _) in served.items()} == {t: ("default", 0) for t in TARGETS}
    assert {t: p for t, (_, _, p) in served.items()} == pytest.approx(sources)
    # a model known only by its metadata (how a new model arrives): every target from the population prior
    r = run_pace("predict", "Newcomer-1", "--json", "--db", db)
    assert r.exit_code == 2 and "no score rows" in r.stderr           # nothing known about it yet
    with Warehouse(db).connect(write=True) as con:
        con.execute("""INSERT INTO model_metadata (model, index_model, agent, source, release_date, output_price,
                                                   source_ref, recorded_at)
                       VALUES ('Newcomer-1', 'newcomer-1', 'openhands', 'openhands-index', DATE '2026-10-01', 3.0,
                               'synthetic', now())""")
    r = run_pace("predict", "Newcomer-1", "--json", "--db", db)
    assert r.exit_code == 0, r.stderr
    rows = json.loads(r.stdout)["predictions"]
    assert {p["target"] for p in rows} == set(TARGETS)
    assert all(p["method"] == "anchors" and p["anchors"] == 0 and p["prior"] == "population" for p in rows)
    assert all(0 <= p["low"] <= p["predicted"] <= p["high"] <= 1 and p["high"] - p["low"] > 0.1 for p in rows)


def test_plan_lists_k_unseen_anchors_per_target_and_follows_the_results(copy):
    db, held = copy
    kept = _keep_anchors(db, held, keep=3)
    r = run_pace("plan", held, "--anchors", "4", "--json", "--db", db)
    assert r.exit_code == 0, r.stderr
    plan = json.loads(r.stdout)
    anchors = [row for row in plan["rows"] if row.get("kind") == "anchor"]
    per_target = {t: [(a["subdir"], a["instance_id"]) for a in anchors if a["benchmark"] == t] for t in TARGETS}
    assert all(len(v) == 4 and len(set(v)) == 4 for v in per_target.values())
    assert all(not set(v) & kept[t] for t, v in per_target.items())              # never one it has
    assert {a["anchors_now"] for a in plan["anchors"]} == {3}
    # run the first target's batch: the next plan moves on
    first = TARGETS[0]
    with Warehouse(db).connect(write=True) as con:
        before = con.execute("SELECT count(*) FROM scores WHERE model = ? AND benchmark = ?", [held, first]).fetchone()
        for subdir, instance_id in per_target[first]:          # its own results, as an import would bring them
            score_store.execute(con, "INSERT INTO scores SELECT * FROM held_back WHERE benchmark = ? AND subdir = ? "
                        "AND instance_id = ?", [first, subdir, instance_id])
        after = con.execute("SELECT count(*) FROM scores WHERE model = ? AND benchmark = ?", [held, first]).fetchone()
    assert after[0] == before[0] + 4
    again = json.loads(run_pace("plan", held, "--anchors", "4", "--json", "--db", db).stdout)
    following = [(a["subdir"], a["instance_id"]) for a in again["rows"]
                 if a.get("kind") == "anchor" and a["benchmark"] == first]
    assert len(following) == 4 and not set(following) & set(per_target[first])
    assert {a["target"]: a["anchors_now"] for a in again["anchors"]}[first] == 7
    # more than any target has left: every unrun instance listed, and a note says so (not silently fewer)
    everything = json.loads(run_pace("plan", held, "--anchors", "100000", "--json", "--db", db).stdout)
    left = {t["target"]: t["anchors_available"] for t in everything["anchors"]}
    listed = Counter(a["benchmark"] for a in everything["rows"] if a.get("kind") == "anchor")
    assert dict(listed) == left and all(0 < n < 100000 for n in left.values())
    assert [n for n in everything["notes"] if n.startswith("--anchors 100000 is more than")] == [
        "--anchors 100000 is more than " + ", ".join(f"{t} ({n})" for t, n in left.items())
        + " has left to run: those targets list every instance the model has not run"]


def test_plan_flags_are_checked(copy, tmp_path):
    db, held = copy
    r = run_pace("plan", held, "--anchors", "-1", "--db", db)
    assert r.exit_code == 2 and "--anchors" in r.stderr
    for budget in ("-5", "inf", "nan"):
        r = run_pace("plan", held, "--anchors", "3", "--budget", budget, "--db", db)
        assert r.exit_code == 2 and "--budget" in r.stderr, budget
    r = run_pace("plan", held, "--budget", "5", "--db", db)
    assert r.exit_code == 2 and "add --anchors K" in r.stderr
    trained = run_pace("sql", "SELECT max(model) FROM models WHERE known", "--format", "csv", "--db", db)
    model = trained.stdout.strip().splitlines()[-1]
    r = run_pace("plan", model, "--anchors", "3", "--json", "--db", db)      # the source plan, and why no anchors
    assert r.exit_code == 0 and any("trained on" in n for n in json.loads(r.stdout)["notes"])
    r = run_pace("plan", "Nobody-9", "--anchors", "3", "--json", "--db", db)
    assert r.exit_code == 0 and any("not in this warehouse" in n for n in json.loads(r.stdout)["notes"])
    # --out holds the calls `pace run --plan` runs (no agentic anchors), and never replaces a user's file
    mine = tmp_path / "mine.csv"
    mine.write_text("my notes\n")
    r = run_pace("plan", held, "--anchors", "2", "--out", mine, "--db", db)
    assert r.exit_code == 2 and "not a benchmark,subdir,instance_id CSV" in r.stderr
    assert mine.read_text() == "my notes\n"
    out = tmp_path / "plan.csv"
    assert run_pace("plan", held, "--anchors", "2", "--out", out, "--db", db).exit_code == 0
    header, *lines = out.read_text().splitlines()
    assert header == "benchmark,subdir,instance_id" and not {line.split(",")[0] for line in lines} & set(TARGETS)
    assert run_pace("plan", held, "--out", out, "--db", db).exit_code == 0      # its own file: replaced


def test_a_fit_without_anchors_leaves_none_in_use(copy):
    db, held = copy
    _keep_anchors(db, held, keep=5)
    wh = Warehouse(db)
    report = wh.fit(count=12, task="abs", exclude=[held], anchors=False, intervals=False)
    assert report.anchors == {}
    with wh.connect() as con:
        assert con.execute("SELECT count(*) FROM anchor_fits").fetchone()[0] == len(TARGETS)   # the older fit's rows stay
        assert con.execute("SELECT count(*) FROM current_anchor_fits").fetchone()[0] == 0
        methods = {m for (m,) in con.execute("SELECT DISTINCT method FROM predictions WHERE model = ?",
                                             [held]).fetchall()}
    assert methods == {"default"}                  # the sources' answer, not an older fit's anchors


def test_the_item_matrix_read_as_arrow_is_the_one_built_from_rows(copy):
    # target_matrix numbers the rows in SQL; item_matrix builds the same matrix from Python tuples
    from warehouse.anchors import TARGET_ROWS, item_matrix, target_matrix
    db, excluded = copy
    with Warehouse(db).connect(write=True) as con:
        held = con.execute("SELECT max(model) FROM scores WHERE benchmark = 'gaia'").fetchone()[0]
        con.execute("INSERT INTO model_holds VALUES (?, 'second_spelling', NULL, now())", [held])
        for target in ("gaia", "swebench"):
            rows = con.execute(TARGET_ROWS, [[target], [excluded]]).fetchall()
            models, keys, y = target_matrix(con, target, [excluded])
            assert (models, keys) == item_matrix(r[1:] for r in rows)[:2]
            np.testing.assert_array_equal(y, item_matrix(r[1:] for r in rows)[2])
            assert held not in models and excluded not in models and len(models) == 8
            assert y.shape == (8, len({(r[2], r[3]) for r in rows})) and np.isfinite(y).sum() == len(rows)


def test_an_anchors_fit_that_fails_beside_the_proxy_fit_stores_nothing(copy, monkeypatch):
    # the item models are fitted on a thread beside the proxy fit; their error must stop the fit before
    # the proxy's rows are written, as when they were fitted first
    import warehouse.api as api_mod
    from warehouse.errors import UserError

    def broken(inputs, fit_id="", **options):
        assert [t for t, *_ in inputs.targets] == ["commit0", *TARGETS]   # read before the thread started
        raise ValueError("item model diverged")

    monkeypatch.setattr(api_mod, "fit_anchor_inputs", broken)
    db, _ = copy
    wh = Warehouse(db)
    with wh.connect() as con:
        before = con.execute("SELECT count(*), count(DISTINCT fit_id) FROM proxy_fits").fetchone()
    with pytest.raises(UserError, match="the anchors fit failed: item model diverged .nothing was stored"):
        wh.fit(count=12, task="abs")
    with wh.connect() as con:
        assert con.execute("SELECT count(*), count(DISTINCT fit_id) FROM proxy_fits").fetchone() == before
