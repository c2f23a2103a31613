"""Methods as objects (warehouse.methods): one registry, options declared once, refusals derived from them,
the default method's combination in the SQL macros the serving views use, and a new method plugging in
with its own option and another method's predictions as an input. Synthetic data only."""
from __future__ import annotations

from typing import ClassVar

import numpy as np
import pyarrow.compute as pc
import pytest

from models.default.ability import leaf_logits
from scipy.special import expit
from warehouse import methods
from warehouse.api import Warehouse
from warehouse.connect import connect
from warehouse.errors import UserError, audience
from warehouse.evaluate import resolve
from warehouse.matrices import Matrices
from warehouse.methods.base import Method
from warehouse.methods.data import Folds, Prior, SqlRows
from warehouse.methods.default import COMBINE_SQL, Default
from warehouse.methods.options import Option
from warehouse.methods.results import Evaluation, Query


@pytest.fixture(scope="module")
def macros(tmp_path_factory):
    """A connection to an empty warehouse: every sql/ object, the formula macros included."""
    con = connect(tmp_path_factory.mktemp("macros") / "empty.duckdb")
    yield con
    con.close()


@pytest.fixture
def cli_words():
    """Refusals in the command line's words (--B, not B=...), as `pace` prints them."""
    speaking = audience.set("cli")
    yield
    audience.reset(speaking)


def test_every_method_reads_only_declared_options_and_offers_a_task():
    for name, method in methods.REGISTRY.items():
        declared = {o.name for o in method.declared()}
        assert method.name == name and method.reads, name
        for task, read in [*method.reads.items(), *method.fit_reads.items()]:
            assert task in ("abs", "pair") and set(read) <= declared, (name, task)
    assert methods.names("pair") == ["default", "instance", "compat"]
    assert methods.names(fit=True) == ["default", "instance", "compat"]
    flags = [o.flag for o in methods.options("abs")]
    assert flags[:3] == ["--count", "--B", "--seed"] and "--pin-task-a-selection" not in flags
    assert "--pin-task-a-selection" in [o.flag for o in methods.options("pair")]


def test_refusals_come_from_the_declarations(cli_words):
    default, compat = methods.REGISTRY["default"], methods.REGISTRY["compat"]
    with pytest.raises(UserError, match=r"--method default does not use --B, --q \(pace loocv abs\); drop them; "
                                        r"default reads --count, --seed"):
        default.refuse("abs", {"B": 10, "q": 0.5}, "loo")
    default.refuse("pair", {"B": 10}, "loo")                      # Goal B bootstraps
    with pytest.raises(UserError, match="add --strict-budget"):
        compat.refuse("abs", {"count": 10}, "loo")
    with pytest.raises(UserError, match=r"--method compat with --auto-tune does not use --m"):
        compat.refuse("abs", {"strict_budget": True, "auto_tune": True, "m": 0.5}, "loo")
    with pytest.raises(UserError, match="use --split loo"):
        compat.refuse("abs", {"strict_budget": True, "auto_tune": True}, "family")
    with pytest.raises(UserError, match="has no Goal B"):
        methods.REGISTRY["mean"].refuse("pair", {}, "loo")
    with pytest.raises(UserError, match="does not use --B for --task abs"):
        default.refuse_fit(("abs",), {"B": 10})
    with pytest.raises(UserError, match=r"--method 'mean' is not one of: default, instance, compat"):
        methods.get("mean", "pair")
    with pytest.raises(UserError, match=r"--count must be an integer >= 1, not 0"):
        methods.CATALOGUE["count"].check(0)


def test_the_sql_leaf_logit_is_the_clip_the_ability_scale_is_fitted_on(macros):
    means = np.array([0.0, 0.01, 0.02, 0.3, 0.5, 0.97, 0.98, 0.999, 1.0])
    sql = [v for (v,) in macros.execute("SELECT leaf_logit(p) FROM unnest(?::DOUBLE[]) AS u(p)",
                                        [means.tolist()]).fetchall()]
    assert np.allclose(sql, leaf_logits(means), atol=1e-12)


def _weak_tail(seed: int, n: int = 16, tail: int = 4, leaves: int = 10, per_leaf: int = 30) -> tuple[Matrices, np.ndarray]:
    """Matrices whose sources and target means follow one latent ability; the last ``tail`` models are far
    weaker than the others; returns them with the true target means (n, 2)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n)
    theta[n - tail:] = theta[: n - tail].min() - 2.0 + 0.3 * rng.normal(size=tail)
    difficulty = rng.normal(size=leaves * per_leaf)
    X = (rng.random((n, leaves * per_leaf)) < expit(theta[:, None] - difficulty[None, :])).astype(float)
    Y = expit(np.stack([1.2 * theta - 0.3, 0.9 * theta + 0.5], axis=1))
    leaf = np.repeat(np.arange(leaves), per_leaf)
    columns = [(f"b{leaf[c]}", "", f"i{c:04d}") for c in range(X.shape[1])]
    m = Matrices([f"m{i:02d}" for i in range(n)], columns, X, ["a", "b"], [Y[:, [0]], Y[:, [1]]], leaf,
                 np.zeros((0, 2), np.int64), [f"b{k}" for k in range(leaves)])
    return m, Y


def test_default_extrapolates_to_a_weak_tail_through_the_serving_formulas(macros):
    """The tail's targets are in the matrices (the evaluation scores against them) but never trained on."""
    m, Y = _weak_tail(seed=0)
    tail = m.models[-4:]
    folds = Folds("low-4", m, {"low-4": tail})
    evaluation = Default().evaluate("abs", folds, Default().options({"count": 40, "seed": 1}))
    assert isinstance(evaluation.predictions, Query)
    rows = resolve(macros, evaluation.predictions).to_pylist()
    assert sorted(r["model"] for r in rows if r["predicted"] is not None) == sorted(tail * 2)
    err = np.mean([abs(r["predicted"] - Y[m.models.index(r["model"]), "ab".index(r["target"])]) for r in rows])
    assert err < 0.4 * np.mean(np.abs(Y[:-4].mean(axis=0) - Y[-4:]))    # most of the gap to the tail is predicted
    hidden = Folds("low-4", Matrices(m.models, m.columns, m.X, m.targets, [p.copy() for p in m.P], m.leaves,
                                     m.collapsed, m.leaf_benchmarks), {"low-4": tail})
    for p in hidden.matrices.P:
        p[-4:] = 0.0                   # the held-out targets changed: the predictions do not move
    again = resolve(macros, Default().evaluate("abs", hidden, Default().options({"count": 40, "seed": 1})).predictions)
    assert again.sort_by("model").column("predicted").to_pylist() == \
        resolve(macros, evaluation.predictions).sort_by("model").column("predicted").to_pylist()


def test_the_gate_leans_on_the_link_outside_the_training_range(macros):
    m, Y = _weak_tail(seed=2)
    tail = m.models[-4:]
    m.P = [np.where(np.isin(m.models, tail)[:, None], np.nan, p) for p in m.P]
    folds = Folds("low-4", m, {"low-4": tail})
    parts = Default().parts(folds, Default().options({"count": 40}))
    rows = resolve(macros, Query(COMBINE_SQL, parts["tables"], {"w_base": 0.5, "gate": 4.0})).to_pylist()
    held = [r for r in rows if r["held"] and r["target"] == "a"]
    train = [r for r in rows if not r["held"] and r["target"] == "a"]
    assert all(r["distance"] == 0 for r in train) and all(r["distance"] > 0 for r in held)
    z = {(r["model"], r["target"]): r["z_pace"] for r in parts["tables"]["_pace"].to_pylist()}
    link = {r["target"]: r for r in parts["tables"]["_links"].to_pylist()}["a"]
    for r in held + train:      # expit((1 - w) z_pace + w link(theta)), w = 1/2 + 1/2 min(d / 4, 1)
        w = 0.5 + 0.5 * min(r["distance"] / 4.0, 1.0)
        expected = expit((1 - w) * z[(r["model"], "a")] + w * (link["intercept"] + link["slope"] * r["theta"]))
        assert r["predicted"] == pytest.approx(expected, abs=1e-12)


def test_a_held_out_fold_hides_its_targets_but_what_it_reveals():
    m, _ = _weak_tail(seed=1, n=6, tail=2, leaves=2, per_leaf=3)
    fold = Folds("f", m, {"f": [m.models[1], m.models[4]]}).fold("f")
    assert fold.matrices.models[fold.n_train:] == [m.models[1], m.models[4]]
    hidden = fold.hide_targets({m.models[4]: [(1, 0)]})
    assert np.isnan(hidden.P[0][fold.n_train:]).all()
    assert np.isnan(hidden.P[1][fold.n_train]).all() and hidden.P[1][fold.n_train + 1, 0] == m.P[1][4, 0]
    assert np.array_equal(hidden.P[0][: fold.n_train], fold.matrices.P[0][: fold.n_train])


class Shifted(Method):
    """A method of the shape the anchors issue needs: an option of its own (--shift), another method's
    held-out predictions as its prior, and rows read with SQL; it predicts the prior plus the shift."""

    name = "shifted"
    summary = "test method: the default prediction plus --shift"
    own_options: ClassVar = (Option("shift", float, 0.0, "Added to the prior.", lo=-1, hi=1),)
    reads = {"abs": frozenset({"count", "seed", "shift"})}
    inputs = (Prior("prior", "default"), SqlRows("models", "SELECT model FROM model_rows() ORDER BY row"))

    def evaluate(self, task, folds, opts, fitted=None):
        assert folds["models"].column("model").to_pylist() == folds.matrices.models
        prior = folds["prior"]
        shifted = pc.add(prior.column("predicted"), opts.shift)
        return Evaluation(prior.set_column(2, "predicted", shifted))


def test_a_new_method_is_one_class_and_one_registry_entry(cli_words, tmp_path, monkeypatch):
    from tests.helpers import synthetic_warehouse

    db, _ = synthetic_warehouse(tmp_path, n_models=7, seed=3, scale=0.1)
    monkeypatch.setitem(methods.REGISTRY, "shifted", Shifted())
    wh = Warehouse(db)
    sources = "planbench ifeval"
    base = wh.loocv("abs", count=10, seed=2, sources=sources)
    shifted = wh.loocv("abs", method="shifted", count=10, seed=2, shift=0.25, sources=sources)
    rows = {}
    for run in (base, shifted):
        rows[run.method] = dict(((m, t), p) for m, t, p in wh.sql(
            "SELECT model, target, predicted FROM loocv_predictions WHERE run_id = ? AND predicted IS NOT NULL",
            [run.run_id], output="tuples")[1])
    assert rows["shifted"].keys() == rows["default"].keys() and rows["default"]
    assert all(rows["shifted"][k] == pytest.approx(v + 0.25, abs=1e-12) for k, v in rows["default"].items())
    with pytest.raises(UserError, match="--method default does not use --shift"):
        wh.loocv("abs", shift=0.1)
    with pytest.raises(UserError, match=r"--shift must be in \[-1, 1\], not 3"):
        wh.loocv("abs", method="shifted", shift=3.0)


def test_only_the_methods_storing_logit_offsets_are_judged_on_the_logit_scale():
    """The report and bench/accuracy.py judge coverage with the interval the method's fit stores: logit
    residual offsets for default (its proxies carry a link), score-scale offsets for the others."""
    from warehouse.methods import REGISTRY
    assert {name for name, m in REGISTRY.items() if m.logit_intervals} == {"default"}
