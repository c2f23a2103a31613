"""The sources prior of bench/anchors.py: the `default` method's honest held-out predictions of the 14 Pace
models, with the interval `pace fit` would give them, from a scratch warehouse built in a temporary folder.

Protocol (why each number is honest):
- the warehouse holds ``pace-results`` (DeepSeek-V3.2-Reasoner aliased to DeepSeek-V3.2) and
  ``unlabelled-sources`` (the older models pin the ability scale's lower end), duplicates as published;
- a held-out model's prediction comes from a fold that holds out *at least* the Pace models the anchors
  split holds out with it: the warehouse's own ``loo`` and ``family`` splits (the Pace members of a family of
  the 27 models are exactly the warehouse's family folds), and for ``low-K`` / ``high-K`` of the 27 models one
  custom fold holding out the Pace members of that set (``warehouse.evaluate.evaluate_split`` over a one-fold
  ``Folds``, the path `pace loocv` takes);
- the interval follows bench/accuracy.py: split-conformal offsets (``warehouse.fit.interval_offsets``) of the
  logit residuals of the *other* Pace models' leave-one-out predictions (the model's own residual never sets its
  interval); for a model whose source ability lies outside its fold's training Pace models' range, pooled with
  those models' residuals from the warehouse's family / low-3 / high-3 runs, as `pace fit` stores them. (As in
  bench/accuracy.py, the other models' leave-one-out predictions came from fits that saw the held-out model's
  target rows; a strictly nested interval would need a leave-one-out per fold.)
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SOURCE_TARGETS = ["gaia", "swebench", "swebench_multimodal", "swtbench"]
LEVEL = 0.8


@dataclass
class SourcePrediction:
    """One held-out (model, target): the default method's prediction and its interval (shares)."""
    predicted: float
    low: float
    high: float
    out_of_range: bool


def _logit(p):
    q = np.clip(np.asarray(p, float), 1e-3, 1 - 1e-3)
    return np.log(q / (1 - q))


def _expit(z):
    return 1.0 / (1.0 + np.exp(-np.asarray(z, float)))


def scratch_warehouse(shared: Path, tmp: Path):
    """A warehouse in ``tmp`` holding pace-results (DeepSeek aliased) and unlabelled-sources, as published."""
    from ingest.load import ingest_tree
    from warehouse.aliases import add_alias
    from warehouse.connect import connect

    con = connect(tmp / "sources.duckdb", create=True)
    ingest_tree(con, shared / "pace-results" / "standardized_results", tmp / "lake")
    add_alias(con, "DeepSeek-V3.2-Reasoner", "DeepSeek-V3.2")
    unlabelled = shared / "unlabelled-sources" / "standardized_results"
    if unlabelled.is_dir():
        ingest_tree(con, unlabelled, tmp / "lake")
    return con


def run_split(con, split: str) -> dict:
    """{(model, target): predicted} of the warehouse's own split (held-out rows only)."""
    from warehouse.evaluate import EvalRequest, run_abs

    run_id = run_abs(con, EvalRequest(method="default", split=split))
    return {(m, t): p for m, t, p in con.execute(
        "SELECT model, target, predicted FROM loocv_predictions WHERE run_id = ? AND predicted IS NOT NULL",
        [run_id]).fetchall()}


def _run_custom(con, held_out: list[str]) -> dict:
    """{(model, target): predicted} of one custom fold holding out ``held_out`` together (the `default`
    method over a Folds of one fold, the path `pace loocv` takes for its own splits)."""
    from warehouse import methods
    from warehouse.evaluate import evaluate_split, resolve
    from warehouse.matrices import build_matrices
    from warehouse.methods.data import Folds

    m = build_matrices(con)
    method = methods.get("default", "abs")
    folds = Folds("custom", m, {"custom": sorted(set(held_out) & set(m.models))})
    evaluation = evaluate_split(con, method, "abs", folds, method.options({"count": 100, "seed": 42}))
    rows = resolve(con, evaluation.predictions)
    return {(model, t): float(p) for model, t, p in zip(*(rows.column(c).to_pylist()
                                                         for c in ("model", "target", "predicted")))
            if model in held_out and p is not None and np.isfinite(p)}


def abilities(con) -> dict:
    """{model: source_ability} (sql/020)."""
    return dict(con.execute("SELECT model, ability FROM source_ability").fetchall())


def truths(con) -> dict:
    """{(model, target): mean_observed}."""
    return {(m, t): v for m, t, v in con.execute(
        "SELECT model, target, mean_observed FROM target_means WHERE n_scored > 0").fetchall()}


def source_predictions(shared: Path, folds_by_split: dict[str, list[list[str]]], log=print) -> dict:
    """{split: {(model, target): SourcePrediction}} for the Pace models each split holds out.

    folds_by_split: the anchors bench's held-out sets per split (any model names; only the Pace models of
    each set are held out here). Splits named loo / family use the warehouse's own folds (checked to match)."""
    out: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        con = scratch_warehouse(shared, Path(tmp))
        pace = {m for (m,) in con.execute("SELECT DISTINCT model FROM target_means WHERE n_scored > 0").fetchall()}
        truth, ability = truths(con), abilities(con)
        log("  sources: default loo (14 Pace models)")
        loo = run_split(con, "loo")
        runs = {}
        for split in ("family", "low-3", "high-3"):
            log(f"  sources: default {split} (extrapolation residuals for out-of-range intervals)")
            runs[split] = run_split(con, split)
        ext: dict = {}
        for preds in runs.values():
            for key, v in preds.items():
                ext.setdefault(key, []).append(v)
        families: dict[str, list[str]] = {}
        for fold, model in con.execute("SELECT fold, model FROM split_folds('family')").fetchall():
            families.setdefault(fold, []).append(model)
        family_folds = {tuple(sorted(ms)): {k: v for k, v in runs["family"].items() if k[0] in ms}
                        for ms in families.values()}
        for split, folds in folds_by_split.items():
            preds: dict = {}
            for fold in folds:
                held = sorted(set(fold) & pace)
                if not held:
                    continue
                if split == "loo":
                    preds.update({k: v for k, v in loo.items() if k[0] in held})
                    continue
                if split == "family":
                    fold_preds = family_folds.get(tuple(held))
                    if fold_preds is None:
                        raise ValueError(f"family fold {held} is not one of the warehouse's family folds")
                    preds.update(fold_preds)
                    continue
                log(f"  sources: default, custom fold {split} holding out {', '.join(held)}")
                preds.update(_run_custom(con, held))
            out[split] = {}
            for (model, target), p in preds.items():
                train = pace - next(set(f) & pace for f in folds if model in f)
                out[split][(model, target)] = source_interval(model, target, p, train, loo, ext, truth, ability)
        con.close()
    return out


def source_interval(model: str, target: str, predicted: float, train: set, loo: dict, ext: dict, truth: dict,
                    ability: dict) -> SourcePrediction:
    """The interval `pace fit` would give ``model`` (module doc): split-conformal offsets of the training Pace
    models' leave-one-out logit residuals, pooled with their extrapolation-split residuals when the model's
    source ability lies outside theirs."""
    from warehouse.fit import interval_offsets

    lo_a = min(ability[m] for m in train if m in ability)
    hi_a = max(ability[m] for m in train if m in ability)
    oor = model in ability and not (lo_a <= ability[model] <= hi_a)
    pool = [_logit(truth[k]) - _logit(loo[k]) for k in loo if k[1] == target and k[0] in train]
    if oor:
        pool += [_logit(truth[k]) - _logit(v) for k, vs in ext.items() if k[1] == target and k[0] in train
                 for v in vs]
    lo, hi = interval_offsets(np.asarray(pool, float), LEVEL)
    z = _logit(predicted)
    return SourcePrediction(float(predicted), float(_expit(z + lo)), float(_expit(z + hi)), bool(oor))
