"""The ``anchors`` method (warehouse/methods/anchors.py): `pace loocv abs --method anchors` replays the
product's anchors path per fold. Synthetic data only: a synthetic Pace tree plus an OpenHands-Index-shaped
import (three models with agentic results only, metadata for four of the Pace-shaped models)."""
from __future__ import annotations

import shutil

import numpy as np
import pyarrow as pa
import pytest
from scipy.special import expit

from ingest.openhands_index import import_index
from models.anchors.target import estimate, sources_prior
from models.common.intervals import interval_offsets
from models.default.link import logit
from tests.helpers import run_pace, synthetic_warehouse, write_index
from warehouse import methods
from warehouse.anchors import fit_anchors
from warehouse.api import Warehouse, stored_run
from warehouse.connect import connect
from warehouse.errors import UserError, audience
from warehouse.evaluate import evaluate_split, resolve
from warehouse.matrices import build_matrices
from warehouse.methods.data import Fold, Folds
from ingest import score_store

SOURCES = "planbench ifeval"
COMMON = dict(count=10, seed=2, sources=SOURCES)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """(db, models with metadata, models with source rows): 8 Pace-shaped models (those with rows on every
    target first), 3 agentic-only ones."""
    tmp = tmp_path_factory.mktemp("anchors_method")
    db, _ = synthetic_warehouse(tmp, n_models=8, seed=4, scale=0.1)
    con = connect(db)
    ids = dict(con.execute("SELECT benchmark, list(DISTINCT instance_id ORDER BY instance_id) FROM scores "
                           "WHERE benchmark IN ('gaia', 'swebench') GROUP BY benchmark").fetchall())
    known = [m for (m,) in con.execute("SELECT model FROM models WHERE known ORDER BY model").fetchall()]
    # the models with rows on all four targets first (swebench_multimodal: about half of them)
    complete = {m for (m,) in con.execute("SELECT model FROM scores WHERE benchmark = 'swebench_multimodal'").fetchall()}
    known = sorted(known, key=lambda m: (m not in complete, m))
    rng = np.random.default_rng(0)
    runs = {f"Xeno-{k}": {"gaia": {i: bool(rng.random() < p) for i in ids["gaia"]},
                          "swe-bench": {i: bool(rng.random() < p) for i in ids["swebench"]}}
            for k, p in enumerate((0.2, 0.5, 0.8))}
    import_index(con, write_index(tmp / "index", runs, metadata_only=known[::2], synthetic=True))
    con.close()
    return db, known[::2], known


@pytest.fixture(scope="module")
def runs(warehouse):
    """run_id of anchors K = 0 and of default on the loo split (the same budget and seed)."""
    db, _, _ = warehouse
    wh = Warehouse(db)
    return {"k0": wh.loocv("abs", method="anchors", anchors=0, **COMMON).run_id,
            "default": wh.loocv("abs", method="default", **COMMON).run_id}


def _rows(db, run_id) -> dict:
    with Warehouse(db, read_only=True).connect() as con:
        return {(m, t): (p, a) for m, t, p, a in con.execute(
            "SELECT model, target, predicted, actual FROM loocv_predictions WHERE run_id = ? "
            "AND predicted IS NOT NULL", [run_id]).fetchall()}


def test_registered_with_its_own_option(cli_words):
    assert "anchors" in methods.names("abs") and "anchors" not in methods.names("pair")
    assert "anchors" not in methods.names(fit=True)                # evaluated only
    option = {o.name: o for o in methods.options("abs")}["anchors"]
    assert (option.flag, option.env, option.default) == ("--anchors", "PACE_ANCHOR_COUNT", 30)   # as pace plan
    r = run_pace("loocv", "abs", "--help")
    assert r.exit_code == 0 and "--anchors" in r.stdout and "PACE_ANCHOR_COUNT" in r.stdout
    anchors = methods.REGISTRY["anchors"]
    anchors.refuse("abs", {"anchors": 5, "count": 10, "seed": 1}, "family")
    with pytest.raises(UserError, match=r"--method anchors does not use --B"):
        anchors.refuse("abs", {"B": 10}, "loo")
    with pytest.raises(UserError, match=r"--method default does not use --anchors"):
        methods.REGISTRY["default"].refuse("abs", {"anchors": 5}, "loo")
    with pytest.raises(UserError, match=r"--anchors must be an integer >= 0, not -1"):
        option.check(-1)


@pytest.fixture
def cli_words():
    speaking = audience.set("cli")
    yield
    audience.reset(speaking)


def test_the_command_line_refuses_what_anchors_does_not_read(warehouse):
    db, _, _ = warehouse
    r = run_pace("loocv", "abs", "--method", "anchors", "--B", "5", "--db", db)
    assert r.exit_code == 2 and "--method anchors does not use --B" in r.stderr
    r = run_pace("loocv", "abs", "--method", "anchors", "--anchors", "-2", "--db", db)
    assert r.exit_code == 2 and "--anchors" in r.stderr


def test_the_intervals_are_stored_and_loocv_metrics_says_how_many_truths_they_hold(warehouse, runs):
    db, _, _ = warehouse
    with Warehouse(db, read_only=True).connect() as con:
        def rows(run_id):
            return con.execute("SELECT target, predicted, actual, low, high FROM loocv_predictions "
                               "WHERE run_id = ? AND predicted IS NOT NULL", [run_id]).fetchall()

        def coverage(run_id):
            return dict(con.execute("SELECT target, coverage FROM loocv_metrics WHERE run_id = ?", [run_id]).fetchall())

        anchors, default = rows(runs["k0"]), rows(runs["default"])
        assert anchors and all(lo is not None and lo <= p <= hi for _, p, _, lo, hi in anchors)
        assert all(lo is None and hi is None for *_, lo, hi in default)       # its LOOCV makes no interval
        inside: dict[str, list[bool]] = {}
        for target, _, actual, lo, hi in anchors:
            if actual is not None:
                inside.setdefault(target, []).append(lo <= actual <= hi)
        stored = coverage(runs["k0"])
        assert {t: stored[t] for t in inside} == pytest.approx({t: np.mean(v) for t, v in inside.items()})
        assert 0 < stored["AVERAGE"] < 1 and set(coverage(runs["default"]).values()) == {None}
        metrics = stored_run(con, runs["k0"], "abs", "anchors", "loo").metrics          # what `pace loocv` prints
    assert {m["target"]: m["coverage_pct"] for m in metrics} == pytest.approx({t: 100 * v for t, v in stored.items()})


def test_zero_anchors_give_the_prior_estimate(warehouse, runs):
    """Metadata models: the product's own item model and metadata prior (fit_anchors leaving the model out),
    estimated with no anchor. The others: the sources prior made from the default method's stored held-out
    predictions (the model's prediction, the training models' residuals as its interval)."""
    db, described, known = warehouse
    got, default = _rows(db, runs["k0"]), _rows(db, runs["default"])
    kinds = {}
    assert {m for m, _ in got} == set(known)                      # the agentic-only models are trained on only
    with Warehouse(db, read_only=True).connect() as con:
        for model in (described[0], known[1], known[-1]):
            fit = fit_anchors(con, exclude=[model])
            priors = {t: p for t, m, p in fit.priors if m == model}
            for target, item_model in fit.targets.items():
                keys = fit.items[target]
                has = {(s, i) for s, i in con.execute("SELECT subdir, instance_id FROM scores WHERE model = ? AND "
                                                     "benchmark = ? AND score IS NOT NULL", [model, target]).fetchall()}
                members = np.array([k in has for k in keys])
                members = members if members.any() else ~members          # no truth: a full run's estimate
                if target in priors:           # usable metadata (for half of the training models at least)
                    prior = priors[target]
                    assert model in described
                else:
                    train = [m for m in known if m != model and default.get((m, target), (0, None))[1] is not None]
                    residuals = np.array([logit(default[(m, target)][1], 1e-3) - logit(default[(m, target)][0], 1e-3)
                                          for m in train])
                    lo, hi = interval_offsets(residuals, 0.8)
                    z = logit(default[(model, target)][0], 1e-3)
                    prior = sources_prior(item_model, default[(model, target)][0], expit(z + lo), expit(z + hi), 0.8)
                zeros = np.zeros(len(keys))
                point, _, _ = estimate(item_model, prior, zeros, zeros.astype(bool), members)
                assert got[(model, target)][0] == pytest.approx(point, abs=1e-12), (model, target)
                kinds[prior.kind] = kinds.get(prior.kind, 0) + 1
    assert kinds["metadata"] >= 2 and kinds["sources"] >= 8          # both priors were checked


def test_every_item_revealed_gives_the_model_its_own_full_mean(warehouse):
    db, _, known = warehouse
    run = Warehouse(db).loocv("abs", method="anchors", anchors=10_000, **COMMON)
    assert any("3 model(s) with target rows but no source rows are trained on, not evaluated" in n for n in run.notes)
    rows = _rows(db, run.run_id)
    assert {m for m, _ in rows} == set(known) and len(rows) == 4 * len(known)
    scored = [(p, a) for p, a in rows.values() if a is not None]
    assert len(scored) > 3 * len(known) and max(abs(p - a) for p, a in scored) < 1e-9


def _one_fold(db, model: str):
    """A one-fold split holding ``model`` out, its inputs read as `pace loocv` reads them."""
    con = connect(db, read_only=True)
    m = build_matrices(con, sources=SOURCES.split())
    return con, Folds("custom", m, {"custom": [model]})


def test_the_held_out_targets_never_reach_the_estimator_but_the_anchors(warehouse, monkeypatch):
    """Every target cell of the held-out model that was not revealed is set to a sentinel (7.0) in its
    matrices and in the rows the item models read: the predictions do not move."""
    db, described, known = warehouse
    anchors = methods.REGISTRY["anchors"]
    opts = anchors.options({"anchors": 5, "count": 10, "seed": 2})
    revealed: list = []
    original = Fold.hide_targets

    def recording(self, reveal=None):
        revealed.append({k: list(v) for k, v in (reveal or {}).items()})
        return original(self, reveal)

    monkeypatch.setattr(Fold, "hide_targets", recording)
    for model in (described[0], known[1]):                    # a metadata prior, a sources prior
        con, folds = _one_fold(db, model)
        try:
            first = resolve(con, evaluate_split(con, anchors, "abs", folds, opts, SOURCES.split()).predictions)
            shown = revealed[-1][model]
            assert len(shown) == 5 * 4 and first.column("anchors").to_pylist() == [5] * 4
            row = folds.matrices.models.index(model)
            poisoned = [p.copy() for p in folds.matrices.P]
            for t, p in enumerate(poisoned):
                keep = [c for k, c in shown if k == t]
                values = p[row, keep]
                p[row, ~np.isnan(p[row])] = 7.0
                p[row, keep] = values
            rows = folds["target_rows"]
            mask = pa.array([m == model for m in rows.column("model").to_pylist()])
            score = rows.column("score").to_numpy(zero_copy_only=False)
            rows = rows.set_column(rows.schema.get_field_index("score"), "score",
                                   pa.array(np.where(mask.to_numpy(zero_copy_only=False), 7.0, score)))
            matrices = folds.matrices
            matrices = type(matrices)(matrices.models, matrices.columns, matrices.X, matrices.targets, poisoned,
                                      matrices.leaves, matrices.collapsed, matrices.leaf_benchmarks)
            again = anchors.evaluate("abs", Folds("custom", matrices, folds.held_out,
                                                  dict(folds.inputs, target_rows=rows)), opts)
            assert again.predictions.equals(first), model
        finally:
            con.close()


def test_deterministic_given_the_seed(warehouse):
    db, described, _ = warehouse
    anchors = methods.REGISTRY["anchors"]
    tables = []
    for _ in range(2):
        con, folds = _one_fold(db, described[1])
        try:
            opts = anchors.options({"anchors": 8, "count": 10, "seed": 5})
            tables.append(resolve(con, evaluate_split(con, anchors, "abs", folds, opts, SOURCES.split()).predictions))
        finally:
            con.close()
    assert tables[0].equals(tables[1]) and tables[0].num_rows == 4


def test_a_split_of_several_models_and_the_training_set(warehouse, tmp_path):
    """Under low-3 the three held-out models are predicted from the others; an agentic-only model removed
    from the warehouse changes the item models (it was trained on)."""
    db, _, known = warehouse
    copy = tmp_path / "copy.duckdb"
    shutil.copy(db, copy)
    first = _rows(copy, Warehouse(copy).loocv("abs", method="anchors", anchors=3, split="low-3", **COMMON).run_id)
    assert len({m for m, _ in first}) == 3
    with Warehouse(copy).connect(write=True) as con:
        score_store.execute(con, "DELETE FROM scores WHERE model = 'Xeno-2'")
    again = _rows(copy, Warehouse(copy).loocv("abs", method="anchors", anchors=3, split="low-3", **COMMON).run_id)
    assert again.keys() == first.keys()
    moved = [k for k in first if k[1] in ("gaia", "swebench") and first[k][0] != again[k][0]]
    assert moved and all(first[k] == pytest.approx(again[k], abs=1e-12) for k in first
                         if k[1] not in ("gaia", "swebench"))
