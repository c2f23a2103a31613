"""Agentic anchors, measured honestly (issue 23, item 4): a model's full mean on each target estimated from K of
its own target instances (its anchors), against the spec's baselines, under every split.

Data (bench/anchors_data.py, a stop-gap until `pace import openhands-index`): the 27 models with target rows
(26 of the OpenHands Index with instance results, plus Kimi-K2 from the Pace files), five targets (gaia,
swebench, swebench_multimodal, swtbench, commit0); for the 14 Pace models the Pace files are the truth on the
four Pace targets. A model's full mean on a target is the plain mean over the instances it has.

Held-out protocol: for every fold the held-out models' target rows are hidden from every fitted quantity
(the item model, the strata, the expected costs, the metadata regression, the sources prior's interval); a
held-out model reveals only the anchors chosen for it. Splits over the 27 models:
  loo      each model alone
  family   each family (the leading letters of the name, case folded: claude-opus-4-7 is a Claude)
  low-3    the 3 models with the lowest, high-3 the 3 with the highest target means (average over the targets
           of the logit mean on the items every model has, z-scored per target)

Methods (each at K = 0, 5, 10, 20, 30, 50 anchors per target; commit0 has 16 instances, so K is capped):
  random-mean      baseline 1: the mean of K random instances (DRAWS draws per model)
  stratified-mean  baseline 2: one instance per difficulty stratum, stratum-weighted (DRAWS draws)
  sources          baseline 3 (the 14 Pace models, four targets): today's default prediction, no anchors
  <variants>       the item-model estimators (VARIANTS below: item model, prior, anchor choice, point estimate)

Figures per split, target, method and K: MAE (pp), Spearman (held-out estimates against truths), pair
accuracy (%: each held-out model's estimate against every other model's truth), coverage of the 80 %
interval (%), and cost (USD per model: the anchors' cost from the model's own per-instance costs, an unknown
cost imputed by the model's median on that target, or the training models' median of the instance when
the model has none). Averages over targets are unweighted; costs are summed over targets.

    .venv/bin/python bench/anchors.py [--variants a,b] [--splits loo,family] [--draws 50] [--quick]
        [--sources-cache FILE] [--out accuracy.json section 'anchors'] [--experiments]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(1, str(REPO / "bench"))

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import pickle  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
import zlib  # noqa: E402
from dataclasses import asdict, dataclass, replace  # noqa: E402

import numpy as np  # noqa: E402

from anchors_data import TARGETS, AgenticData, load_targets  # noqa: E402
from models.anchors import (ability_curve, ability_grid, estimate_full_mean, fit_items, mean_curve,  # noqa: E402
                            next_anchors, normal_log_prior, prediction_prior, random_draws, regression_prior,
                            stratified_draws)
from models.anchors.calibration import conformal_factor, interval_scores, outside_factor, widen  # noqa: E402
from models.anchors.features import metadata_features  # noqa: E402   (the features `pace fit` uses)
from models.anchors.posterior import log_likelihood, posterior_weights  # noqa: E402
from models.anchors.prior import conditional_prior  # noqa: E402
from models.anchors.target import training_range  # noqa: E402
from models.common.metrics import spearman  # noqa: E402

SHARED = REPO.parent / "shared"
KS = [0, 5, 10, 20, 30, 50]
SPLITS = ["loo", "family", "low-3", "high-3"]
DRAWS = 50
BATCH = 5          # adaptive choice: anchors are chosen BATCH at a time, each batch after the last one's results
LEVEL = 0.8
SEED = 23
FIT_POINTS = 61    # abilities of the item fit's grid (estimates use the full 121-point grid)
INNER_FOLDS = 5    # calibration: inner folds of each fold's training models
INNER_DRAWS = 5    # calibration draws per inner model for the random / stratified choices


@dataclass(frozen=True)
class Variant:
    """An item-model estimator. slopes/slope_sd/intercept_sd: the item model (models.anchors.items);
    prior: pop (N(0, pop_sd)) | src (the sources prior where there is one, else pop) | meta (metadata
    regression) | src-meta (src where there is one, else meta); choice: random | stratified (the baselines'
    own draws, paired) | adaptive (BATCH at a time) | static (all K chosen before any result) |
    adaptive-cost (adaptive, per expected USD); point: mean | median of the posterior full mean."""
    slopes: str = "free"
    slope_sd: float = 0.5
    intercept_sd: float = 3.0
    prior: str = "pop"
    pop_sd: float = 1.0
    cross: bool = False       # then the prior on each target is conditioned on the model's anchors on the others
    dof: float | None = None  # Student-t prior tails (None: normal)
    prior_scale: float = 1.0  # the prior's sd times this
    choice: str = "adaptive"
    point: str = "median"
    noise: bool = True
    slips: bool = True
    # interval calibration: folds (inner folds) | extremes (also the inner weakest / strongest groups) |
    # range (extremes, a factor per side of the inner training range) | pooled, pooled-range (every target's
    # scores of the fold together)
    calibration: str = "folds"

    def items_key(self):
        return (self.slopes, self.slope_sd, self.intercept_sd, self.slips)


ONE_PL = {"slopes": "shared"}
EXTREMES = 3       # calibration "extremes"/"range": the inner groups of the weakest and strongest training models
VARIANTS = {
    # the chosen estimator (bench/results/anchors_experiments.md): 1PL with slips, adaptive anchors, posterior
    # median, a Student-t prior from the metadata (else from the sources, else the population), its interval
    # calibrated on inner folds and the extreme groups, every target's scores pooled, a factor per side of the
    # training range (section 7)
    "anchors": Variant(prior="meta-src", dof=4.0, calibration="pooled-range", **ONE_PL),
    # the two baselines of item 4, calibrated the same way so that coverage compares the priors only
    "anchors+sources": Variant(prior="src*meta", calibration="pooled-range", **ONE_PL),   # sources x metadata, normal
    "anchors-flat": Variant(prior="pop", calibration="pooled-range", **ONE_PL),   # anchors without sources or metadata
}
EXPERIMENTS = {
    **VARIANTS,
    # item model (population prior, adaptive choice)
    "2pl": Variant(),
    "2pl-noslip": Variant(slips=False),
    "1pl-noslip": Variant(slips=False, **ONE_PL),
    "2pl-tight": Variant(slope_sd=0.25, intercept_sd=2.0),
    "2pl-tight-noslip": Variant(slope_sd=0.25, intercept_sd=2.0, slips=False),
    "2pl-loose-noslip": Variant(slope_sd=2.0, intercept_sd=10.0, slips=False),
    "2pl-meta": Variant(prior="meta"),
    # prior
    "anchors-wide": Variant(pop_sd=1.5, **ONE_PL),
    "anchors+sources-only": Variant(prior="src", **ONE_PL),
    "anchors-cross": Variant(prior="meta", cross=True, **ONE_PL),
    "anchors-meta-t": Variant(prior="meta", dof=4.0, **ONE_PL),
    "anchors-meta-wide": Variant(prior="meta", prior_scale=1.5, **ONE_PL),
    "anchors-src-meta": Variant(prior="src-meta", **ONE_PL),
    "anchors+sources-t": Variant(prior="src*meta", dof=4.0, **ONE_PL),
    "anchors-meta": Variant(prior="meta", **ONE_PL),
    # choice of the anchors, point estimate, interval
    "anchors-static": Variant(prior="meta", choice="static", **ONE_PL),
    "anchors-cost": Variant(prior="meta", choice="adaptive-cost", **ONE_PL),
    "anchors-random": Variant(prior="meta", choice="random", **ONE_PL),
    "anchors-stratified": Variant(prior="meta", choice="stratified", **ONE_PL),
    "anchors-mean": Variant(prior="meta", point="mean", **ONE_PL),
    "anchors-nonoise": Variant(prior="meta", noise=False, **ONE_PL),
    # calibration of the interval
    "anchors-folds": Variant(prior="meta-src", dof=4.0, **ONE_PL),     # the calibration before section 7
    "anchors-extremes": Variant(prior="meta-src", dof=4.0, calibration="extremes", **ONE_PL),
    "anchors-range": Variant(prior="meta-src", dof=4.0, calibration="range", **ONE_PL),
    "anchors-pooled": Variant(prior="meta-src", dof=4.0, calibration="pooled", **ONE_PL),
}


# ----------------------------------------------------------------------------------------------- splits

def family(model: str) -> str:
    """The leading letters of the name, case folded (the warehouse's model_family, but claude == Claude)."""
    return (re.match(r"[A-Za-z]+", model) or [model])[0].lower()


def model_strength(data: AgenticData) -> dict[str, float]:
    """Average over targets of the z-scored logit mean on the items every model of the target has."""
    totals: dict[str, list[float]] = {}
    for tr in data.targets.values():
        common = np.all(np.isfinite(tr.y), axis=0)
        cols = common if common.sum() >= 10 else np.ones(tr.y.shape[1], bool)
        p = np.clip(np.nanmean(tr.y[:, cols], axis=1), 0.01, 0.99)
        z = np.log(p / (1 - p))
        z = (z - z.mean()) / z.std()
        for m, v in zip(tr.models, z):
            totals.setdefault(m, []).append(float(v))
    return {m: float(np.mean(v)) for m, v in totals.items()}


def make_splits(data: AgenticData, k: int = 3) -> dict[str, list[list[str]]]:
    strength = model_strength(data)
    models = sorted(strength)
    families: dict[str, list[str]] = {}
    for m in models:
        families.setdefault(family(m), []).append(m)
    ranked = sorted(models, key=lambda m: (strength[m], m))
    return {"loo": [[m] for m in models], "family": [families[f] for f in sorted(families)],
            f"low-{k}": [ranked[:k]], f"high-{k}": [ranked[-k:]]}


# ------------------------------------------------------------------------------------------- evaluation

@dataclass
class Record:
    split: str
    target: str
    model: str
    method: str
    k: int
    truth: float
    pace: bool
    estimate: np.ndarray      # (D,) one value per draw (deterministic methods: D = 1)
    low: np.ndarray
    high: np.ndarray
    cost: np.ndarray


def _rng(seed: int, *parts) -> np.random.Generator:
    return np.random.default_rng([seed, *(zlib.crc32(str(p).encode()) for p in parts)])


def _own_costs(cost_row: np.ndarray, members: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """(n,) the model's own cost per instance; unknown -> its median on the target, or the training median."""
    own = cost_row.copy()
    known = np.isfinite(own) & members
    if known.any():
        own[~np.isfinite(own)] = np.median(own[known])
    else:
        own = fallback.copy()
    return np.where(np.isfinite(own), own, np.nanmedian(fallback))


class TargetFold:
    """One (fold, target): the training models' item fits (per item-model setting), strata and costs."""

    def __init__(self, tr, held: list[str], grid):
        self.tr, self.grid = tr, grid
        self.plain_grid = ability_grid(slips=(0.0,))
        # the item fit runs on a coarser ability grid (the items' parameters are continuous; 3x faster)
        self.fit_grids = {True: ability_grid(points=FIT_POINTS), False: ability_grid(points=FIT_POINTS, slips=(0.0,))}
        self.train = np.array([i for i, m in enumerate(tr.models) if m not in held])
        ytr = tr.y[self.train]
        with np.errstate(all="ignore"):
            self.solve_rate = np.nanmean(ytr, axis=0)
            expected = np.nanmedian(tr.cost[self.train], axis=0)
        self.expected_cost = np.where(np.isfinite(expected), expected, np.nanmedian(expected))
        self._fits: dict = {}

    def grid_for(self, variant: Variant):
        return self.grid if variant.slips else self.plain_grid

    def fit(self, variant: Variant):
        key = variant.items_key()
        if key not in self._fits:
            self._fits[key] = fit_items(self.tr.y[self.train], slopes=variant.slopes, slope_sd=variant.slope_sd,
                                        intercept_sd=variant.intercept_sd, grid=self.fit_grids[variant.slips])
        return self._fits[key]


def _prior(variant: Variant, fold: TargetFold, model: str, members: np.ndarray, source, features: dict):
    """(P,) log prior of one held-out model under the variant (the fit's learnt slip weights throughout):
    src (the sources prior), meta (metadata regression), src-meta (src where there is one, else meta),
    src*meta (the product of the two normals where there is a source), meta-src (meta if the model has
    metadata, else src), pop (N(0, pop_sd)); then else pop."""
    fit = fold.fit(variant)
    grid, slips = fold.grid_for(variant), fit.slip_weights
    kind = variant.prior
    if kind == "meta-src":       # the metadata prior if the model has metadata, else the sources prior
        kind = "meta" if np.isfinite(features[model]).any() else "src"
    found = []
    if kind in ("src", "src-meta", "src*meta") and source is not None:
        values = mean_curve(fit.params, grid, np.zeros(members.size), np.zeros(members.size, bool), members)[0]
        theta, curve = ability_curve(grid, values, slips)
        found.append(prediction_prior(theta, curve, source.predicted, source.low, source.high, LEVEL))
    if kind in ("meta", "src*meta") or (kind == "src-meta" and not found):
        names = [fold.tr.models[i] for i in fold.train]
        x = np.stack([features[m] for m in names])
        usable = np.isfinite(x).mean(0) >= 0.5
        mean, sd = regression_prior(x[:, usable], fit.ability, features[model][usable][None, :])
        found.append((float(mean[0]), sd))
    if not found:
        found.append((0.0, variant.pop_sd))
    precision = sum(1 / sd ** 2 for _, sd in found)
    centre = sum(c / sd ** 2 for c, sd in found) / precision
    return normal_log_prior(grid, centre, variant.prior_scale / np.sqrt(precision), slips, variant.dof)


ADAPTIVE = ("adaptive", "adaptive-cost", "static")


def _adaptive_sequence(variant: Variant, fold: TargetFold, log_prior, y, members, kmax: int) -> np.ndarray:
    """The order in which the variant's choice reveals the model's items, up to kmax (adaptive: BATCH at a
    time, each batch chosen after the previous results are in; static: all kmax chosen up front)."""
    fit = fold.fit(variant)
    observed = np.zeros(y.size, bool)
    order: list[int] = []
    cost = fold.expected_cost if variant.choice == "adaptive-cost" else None
    batch = kmax if variant.choice == "static" else BATCH
    while len(order) < min(kmax, int(members.sum())):
        step = next_anchors(fit.params, fold.grid_for(variant), log_prior, y, observed, members,
                            min(batch, kmax - len(order)), cost)
        if step.size == 0:
            break
        observed[step] = True
        order.extend(int(j) for j in step)
    return np.asarray(order, dtype=np.int64)


def baseline_draws(fold: TargetFold, y, members, ks, draws: int, seed: int, model: str) -> dict:
    """{K: {"random": Draws, "stratified": Draws}} for one model (K > 0)."""
    out = {}
    for k in ks:
        if k > 0:
            rng = _rng(seed, fold.tr.target, model, k)
            out[k] = {"random": random_draws(y, members, k, draws, rng, LEVEL),
                      "stratified": stratified_draws(y, members, fold.solve_rate, k, draws, rng, LEVEL)}
    return out


def estimate_path(variant: Variant, fold: TargetFold, y, members, log_prior, ks, base) -> dict:
    """{K: (point, low, high, observed)}: the variant's estimate after K anchors, (D,) per draw (one draw for
    the adaptive choices), observed (D, n) the anchors."""
    fit = fold.fit(variant)
    order = None
    if variant.choice in ("adaptive", "adaptive-cost"):
        order = _adaptive_sequence(variant, fold, log_prior, y, members, max(ks))
    out = {}
    for k in ks:
        if k == 0:
            chosen = np.zeros((1, 0), np.int64)
        elif variant.choice == "static":
            chosen = _adaptive_sequence(variant, fold, log_prior, y, members, k)[None, :]
        elif order is not None:
            chosen = order[:k][None, :]
        else:
            chosen = base[k][variant.choice].items
        observed = np.zeros((chosen.shape[0], y.size), bool)
        if chosen.shape[1]:
            np.put_along_axis(observed, chosen, True, axis=1)
        est = estimate_full_mean(fit.params, fold.grid_for(variant), log_prior, np.broadcast_to(y, observed.shape), observed,
                                 np.broadcast_to(members, observed.shape), LEVEL, noise=variant.noise)
        out[k] = (est.median if variant.point == "median" else est.mean, est.low, est.high, observed)
    return out


def inner_folds(fold: TargetFold, held: list[str]) -> list[tuple[list[str], TargetFold]]:
    """The fold's training models dealt round-robin (name order) into INNER_FOLDS groups, each with an item
    model refitted without it (fits are made on first use and shared by every variant)."""
    names = sorted(fold.tr.models[i] for i in fold.train)
    groups = [names[g::INNER_FOLDS] for g in range(INNER_FOLDS)]
    return [(group, TargetFold(fold.tr, list(held) + group, fold.grid)) for group in groups if group]


def extreme_folds(fold: TargetFold, held: list[str]) -> list[tuple[list[str], TargetFold]]:
    """The EXTREMES weakest and the EXTREMES strongest training models (by their mean on the target), each
    group held out of a refitted item model: how the estimate fares on a model outside its training range."""
    means = np.nanmean(fold.tr.y[fold.train], axis=1)
    ranked = [fold.tr.models[fold.train[i]] for i in np.argsort(means, kind="stable")]
    if len(ranked) < 4 * EXTREMES:
        return []
    return [(group, TargetFold(fold.tr, list(held) + group, fold.grid))
            for group in (ranked[:EXTREMES], ranked[-EXTREMES:])]


def fold_range(fold: TargetFold) -> tuple[float, float]:
    """The fold's training range on its target (the product's rule, models.anchors.target.training_range):
    an estimate outside it is 'out of range' for the range calibrations."""
    return training_range(fold.tr.y[fold.train])


def calibration_scores(variant: Variant, inner: list, extremes: list, ks, features, loo_sources, seed: int):
    """({K: scores inside}, {K: scores outside}): the interval scores of the INNER folds' models (each group
    held out in turn from a refitted item model, its members estimated exactly as a held-out model is),
    split by whether the estimate lies inside its inner training range (training_range); calibrations
    other than 'folds' add the extreme groups. The outer held-out models' rows are in none of it. Exact
    estimates (every item run: a zero-width interval) say nothing about widening and are left out."""
    groups = inner + (extremes if variant.calibration in ("extremes", "range", "pooled-range") else [])
    inside: dict = {k: [] for k in ks}
    outside: dict = {k: [] for k in ks}
    for group, fold in groups:
        tr = fold.tr
        lo, hi = fold_range(fold)
        for model in group:
            r = tr.models.index(model)
            members = np.isfinite(tr.y[r])
            y = np.nan_to_num(tr.y[r])
            truth = float(y[members].mean())
            prior = _prior(variant, fold, model, members, loo_sources.get((model, tr.target)), features)
            base = baseline_draws(fold, y, members, ks, INNER_DRAWS, seed, model) \
                if variant.choice in ("random", "stratified") else {}
            for k, (point, low, high, _) in estimate_path(variant, fold, y, members, prior, ks, base).items():
                keep = high > low
                s = interval_scores(point, low, high, np.full(point.shape, truth))[keep]
                out = ((point < lo) | (point > hi))[keep]
                inside[k].extend(s[~out])
                outside[k].extend(s[out])
    return inside, outside


def calibration_factors(variant: Variant, inside: dict, outside: dict) -> dict:
    """{K: widening factor}: the split-conformal factor of the scores (calibration 'folds', 'extremes',
    'pooled'); with a 'range' calibration {K: (factor inside, factor outside)} (the product's rule,
    models.anchors.calibration.outside_factor)."""
    out = {}
    for k in inside:
        every = np.asarray(inside[k] + outside[k])
        both = conformal_factor(every, LEVEL)
        out[k] = (both, outside_factor(np.asarray(outside[k]), every, LEVEL)) \
            if variant.calibration.endswith("range") else both
    return out


def evaluate(data: AgenticData, sources: dict, variants: dict[str, Variant], splits: list[str], ks: list[int],
             draws: int, seed: int, calibrate: bool = True, log=print) -> list[Record]:
    grid = ability_grid()
    folds_by_split = make_splits(data)
    features = {m: metadata_features(data.metadata.get(m)) for m in model_names(data)}
    loo_sources = sources.get("loo", {})
    records: list[Record] = []
    for split in splits:
        started = time.perf_counter()
        for held in folds_by_split[split]:
            plain = {n: v for n, v in variants.items() if not v.cross}
            target_folds, scores = {}, {}
            for target in TARGETS:
                tr = data.targets[target]
                here = [m for m in held if m in tr.models]
                if not here:
                    continue
                fold = target_folds[target] = TargetFold(tr, held, grid)
                inner = inner_folds(fold, held) if calibrate else []
                extremes = extreme_folds(fold, held) if calibrate and any(
                    v.calibration != "folds" for v in plain.values()) else []
                scores[target] = {name: calibration_scores(v, inner, extremes, ks, features, loo_sources, seed)
                                  for name, v in plain.items()} if calibrate else {}
            for target, fold in target_folds.items():
                factors = {}
                for name, v in plain.items():
                    if not calibrate:
                        continue
                    # pooled: every target's scores of this fold, each target's own half-widths their units
                    pool = [t for t in scores if t == target or v.calibration.startswith("pooled")]
                    factors[name] = calibration_factors(
                        v, *({k: [x for t in pool for x in scores[t][name][side][k]] for k in ks} for side in (0, 1)))
                for model in [m for m in held if m in fold.tr.models]:
                    records += _model_records(split, model, fold, features, sources.get(split, {}), data,
                                              plain, factors, ks, draws, seed)
            for name, variant in variants.items():
                if variant.cross:
                    records += _cross_records(split, name, variant, held, target_folds, features,
                                              sources.get(split, {}), data, ks)
        log(f"  {split}: {time.perf_counter() - started:.1f} s", flush=True)
    return records


def _theta_moments(variant: Variant, fold: TargetFold, log_prior, y, observed, members):
    """(mean, variance) of the ability under the model's posterior from its anchors ``observed``."""
    grid = fold.grid_for(variant)
    w = posterior_weights(log_prior, log_likelihood(fold.fit(variant).params, grid, y, observed))[0]
    mean = float(w @ grid.theta)
    return mean, float(w @ (grid.theta - mean) ** 2)


def _cross_records(split, name, variant, held, target_folds, features, sources, data, ks):
    """A cross variant: each target's anchors (the variant's own choice under its base prior) also inform
    the others, through a prior conditioned on the ability the model's anchors show on the other targets
    (models.anchors.prior.conditional_prior over the fold's training models' abilities). Not calibrated."""
    base = replace(variant, cross=False)
    order = list(target_folds)
    out = []
    for model in held:
        state = {}
        for target, fold in target_folds.items():
            tr = fold.tr
            if model not in tr.models:
                continue
            r = tr.models.index(model)
            members, y = np.isfinite(tr.y[r]), np.nan_to_num(tr.y[r])
            prior = _prior(base, fold, model, members, sources.get((model, target)), features)
            seq = _adaptive_sequence(base, fold, prior, y, members, max(ks))
            moments = {}
            for k in ks:
                observed = np.zeros(y.size, bool)
                observed[seq[:k]] = True
                moments[k] = _theta_moments(base, fold, prior, y, observed, members) if k else (np.nan, np.inf)
            state[target] = (fold, r, members, y, seq, moments)
        names = sorted(set.intersection(*[set(f.tr.models[i] for i in f.train) for f in target_folds.values()]))
        train = np.array([[dict(zip([f.tr.models[i] for i in f.train], f.fit(base).ability))[m]
                           for f in target_folds.values()] for m in names])
        for target, (fold, r, members, y, seq, moments) in state.items():
            t = order.index(target)
            cost = _own_costs(fold.tr.cost[r], members, fold.expected_cost)
            for k in ks:
                est_o = np.array([state[o][5][k][0] if o in state else np.nan for o in order])
                var_o = np.array([state[o][5][k][1] if o in state else np.inf for o in order])
                use = np.isfinite(est_o) & np.isfinite(var_o)
                if k == 0 or not use.any():
                    prior = _prior(base, fold, model, members, sources.get((model, target)), features)
                else:
                    mean, sd = conditional_prior(train, t, est_o, var_o, use)
                    prior = normal_log_prior(fold.grid_for(base), mean, sd, fold.fit(base).slip_weights)
                observed = np.zeros(y.size, bool)
                observed[seq[:k]] = True
                est = estimate_full_mean(fold.fit(base).params, fold.grid_for(base), prior, y, observed, members,
                                         LEVEL, noise=base.noise)
                point = est.median if base.point == "median" else est.mean
                out.append(Record(split, target, model, name, k, float(y[members].mean()), model in data.pace_models,
                                  np.atleast_1d(point), est.low, est.high, np.atleast_1d((observed * cost).sum())))
    return out


def _model_records(split, model, fold, features, sources, data, variants, factors, ks, draws, seed):
    tr = fold.tr
    r = tr.models.index(model)
    members = np.isfinite(tr.y[r])
    y = np.nan_to_num(tr.y[r])
    truth = float(y[members].mean())
    pace = model in data.pace_models
    cost = _own_costs(tr.cost[r], members, fold.expected_cost)
    source = sources.get((model, tr.target))
    out = []

    def record(method, k, est, low, high, spent):
        out.append(Record(split, tr.target, model, method, k, truth, pace, np.atleast_1d(est).astype(float),
                          np.atleast_1d(low).astype(float), np.atleast_1d(high).astype(float),
                          np.atleast_1d(spent).astype(float)))

    if source is not None:
        record("sources", 0, source.predicted, source.low, source.high, 0.0)
    base = baseline_draws(fold, y, members, ks, draws, seed, model)
    for k, d in base.items():
        for name, draw in d.items():
            record(f"{name}-mean", k, draw.estimate, draw.low, draw.high, cost[draw.items].sum(1))
    for name, variant in variants.items():
        log_prior = _prior(variant, fold, model, members, source, features)
        for k, (point, low, high, observed) in estimate_path(variant, fold, y, members, log_prior, ks, base).items():
            if name in factors:
                factor = factors[name][k]
                if isinstance(factor, tuple):      # range calibration: the factor of the estimate's side
                    lo, hi = fold_range(fold)
                    factor = factor[1] if float(np.mean(point)) < lo or float(np.mean(point)) > hi else factor[0]
                low, high = widen(point, low, high, factor)
            record(name, k, point, low, high, (observed * cost).sum(1))
    return out


def model_names(data: AgenticData) -> list[str]:
    return sorted({m for tr in data.targets.values() for m in tr.models})


# ---------------------------------------------------------------------------------------------- metrics

def summarise(records: list[Record], data: AgenticData, subset: str = "all") -> dict:
    """{split: {method: {K: {target | AVERAGE: {mae_pp, spearman, pair_accuracy_pct, coverage_pct, cost_usd,
    n}}}}}; subset 'pace' keeps the 14 Pace models only."""
    truths = {t: dict(zip(tr.models, np.nanmean(tr.y, axis=1))) for t, tr in data.targets.items()}
    groups: dict = {}
    for rec in records:
        if subset == "pace" and not rec.pace:
            continue
        groups.setdefault((rec.split, rec.method, rec.k, rec.target), []).append(rec)
    out: dict = {}
    for (split, method, k, target), recs in sorted(groups.items()):
        draws = max(r.estimate.size for r in recs)
        est = np.stack([np.resize(r.estimate, draws) for r in recs])        # (models, D)
        low = np.stack([np.resize(r.low, draws) for r in recs])
        high = np.stack([np.resize(r.high, draws) for r in recs])
        truth = np.array([r.truth for r in recs])
        others = truths[target]
        pair = []
        for r, rec in enumerate(recs):
            for other, t_other in others.items():
                if other == rec.model or t_other == rec.truth:
                    continue
                pair.append(np.mean(np.sign(est[r] - t_other) == np.sign(rec.truth - t_other)))
        sp = [spearman(est[:, d], truth) for d in range(draws)] if len(recs) >= 3 else [np.nan]
        cell = {"mae_pp": 100 * float(np.mean(np.abs(est - truth[:, None]))),
                "bias_pp": 100 * float(np.mean(est - truth[:, None])),
                "spearman": float(np.nanmean(sp)) if np.isfinite(sp).any() else float("nan"),
                "pair_accuracy_pct": 100 * float(np.mean(pair)) if pair else float("nan"),
                "coverage_pct": 100 * float(np.mean((low <= truth[:, None] + 1e-12) & (truth[:, None] <= high + 1e-12))),
                "width_pp": 100 * float(np.mean(high - low)),
                "cost_usd": float(np.mean([r.cost.mean() for r in recs])),
                "n": len(recs)}
        out.setdefault(split, {}).setdefault(method, {}).setdefault(str(k), {})[target] = cell
    for split in out.values():
        for method in split.values():
            for cells in method.values():
                per = [v for t, v in cells.items() if t in TARGETS]
                cells["AVERAGE"] = {key: float(np.nanmean([v[key] for v in per])) for key in
                                    ("mae_pp", "bias_pp", "spearman", "pair_accuracy_pct", "coverage_pct", "width_pp")}
                cells["AVERAGE"]["cost_usd"] = float(sum(v["cost_usd"] for v in per))
                cells["AVERAGE"]["targets"] = len(per)
    return out


def per_model_errors(records: list[Record], method: str, k: int) -> dict:
    """{target: {model: mean absolute error (pp) over splits' loo}} for the error analysis."""
    out: dict = {}
    for rec in records:
        if rec.method == method and rec.k == k and rec.split == "loo":
            out.setdefault(rec.target, {})[rec.model] = round(100 * float(np.mean(np.abs(rec.estimate - rec.truth))), 2)
    return out


# ------------------------------------------------------------------------------------------- reporting

def plot(summary: dict, methods: list[str], path: Path) -> None:
    """Error against cost: per split, each method's average MAE over the targets against the average cost of
    its anchors per model (USD, summed over the targets), one point per K."""
    from warehouse.plots import pyplot

    plt = pyplot()
    splits = ordered(summary)
    fig, axes = plt.subplots(1, len(splits), figsize=(4.2 * len(splits), 3.6), sharey=True)
    for ax, split in zip(np.atleast_1d(axes), splits):
        for method in methods:
            cells = summary[split].get(method, {})
            ks = sorted((int(k) for k in cells), key=int)
            if not ks:
                continue
            xs = [cells[str(k)]["AVERAGE"]["cost_usd"] for k in ks]
            ys = [cells[str(k)]["AVERAGE"]["mae_pp"] for k in ks]
            ax.plot(xs, ys, marker="o", ms=3, label=method)
        ax.set_title(split)
        ax.set_xlabel("anchors' cost per model (USD, 5 targets)")
        ax.grid(alpha=0.3)
    np.atleast_1d(axes)[0].set_ylabel("MAE (pp, average of the targets)")
    np.atleast_1d(axes)[-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def markdown(result: dict, methods: list[str]) -> str:
    """The summary tables (per split: MAE / Spearman / pair % / coverage % / cost at K = 0, 10, 30), then MAE
    per target at K = 30."""
    summary = result["summary"]["all"]
    out = [f"All {len(result['folds']['loo'])} models with target rows; cells: MAE pp / Spearman / pair accuracy % / "
           f"coverage of the 80 % interval % / anchors' cost per model USD (5 targets).", ""]
    for k in (0, 10, 30):
        shown = [m for m in methods if any(str(k) in summary[s].get(m, {}) for s in summary)]
        out += [f"K = {k} anchors per target", "", table(summary, shown, k), ""]
    pace = result["summary"]["pace"]
    shown = ["sources"] + [m for m in methods if any("0" in pace[s].get(m, {}) for s in pace)]
    four = TARGETS[:4]
    out += ["The 14 Pace models at K = 0, the four targets the sources predict: MAE pp / coverage % "
            "('sources' is today's `default` prediction)", "",
            "| method | " + " | ".join(ordered(pace)) + " |", "|---" * (len(pace) + 1) + "|"]
    for method in shown:
        cells = []
        for split in ordered(pace):
            c = pace[split].get(method, {}).get("0", {})
            cells.append(f"{np.mean([c[t]['mae_pp'] for t in four]):.2f} / "
                         f"{np.mean([c[t]['coverage_pct'] for t in four]):.0f}" if all(t in c for t in four) else "")
        out.append(f"| {method} | " + " | ".join(cells) + " |")
    out.append("")
    out += ["MAE (pp) per target at K = 30", ""]
    targets = [*TARGETS, "AVERAGE"]
    out.append("| split | method | " + " | ".join(targets) + " |")
    out.append("|---" * (len(targets) + 2) + "|")
    for split in ordered(summary):
        for method in methods:
            cells = summary[split].get(method, {}).get("0" if method == "sources" else "30")
            if cells:
                out.append(f"| {split} | {method} | " + " | ".join(
                    f"{cells[t]['mae_pp']:.2f}" if t in cells else "" for t in targets) + " |")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------------------ main

def report(result: dict, methods: list[str]) -> None:
    """bench/results/anchors.md (the tables) and anchors.png (error against cost)."""
    results = REPO / "bench" / "results"
    (results / "anchors.md").write_text("# Agentic anchors: bench/anchors.py\n\n" + markdown(result, methods))
    plot(result["summary"]["all"], methods, results / "anchors.png")
    print(f"wrote {results / 'anchors.md'} and {results / 'anchors.png'}")


def rounded(value, digits: int = 3):
    """``value`` with every float rounded (the figures are pp and %: 3 decimals are plenty; the file stays small)."""
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(v, digits) for v in value]
    return value


def store_section(name: str, result: dict, path: Path | None = None) -> Path:
    """Write ``result`` (floats rounded) to ``path``, or as section ``name`` of bench/results/accuracy.json
    (keeping the rest)."""
    result = rounded(result)
    if path is None:
        path = REPO / "bench" / "results" / "accuracy.json"
        saved = json.loads(path.read_text()) if path.is_file() else {}
        saved[name] = result
        result = saved
    path.write_text(json.dumps(result, indent=1, default=float))
    return path


def load_sources(data: AgenticData, splits: list[str], cache: Path | None, log=print) -> dict:
    if cache is not None and cache.is_file():
        log(f"sources prior from the cache {cache}")
        return pickle.loads(cache.read_bytes())
    from anchors_sources import source_predictions

    folds = {s: f for s, f in make_splits(data).items() if s in splits or s == "loo"}   # loo: inner priors
    started = time.perf_counter()
    preds = source_predictions(SHARED, folds, log=log)
    log(f"  sources: {time.perf_counter() - started:.0f} s")
    if cache is not None:
        cache.write_bytes(pickle.dumps(preds))
    return preds


def ordered(summary: dict) -> list[str]:
    """The summary's splits in SPLITS order (then any other)."""
    return [s for s in SPLITS if s in summary] + sorted(s for s in summary if s not in SPLITS)


def table(summary: dict, methods: list[str], k: int, metric: str = "mae_pp") -> str:
    splits = ordered(summary)
    lines = ["| method | " + " | ".join(splits) + " |", "|---" * (len(splits) + 1) + "|"]
    for method in methods:
        cells = []
        for split in splits:
            kk = "0" if method == "sources" else str(k)
            a = summary[split].get(method, {}).get(kk, {}).get("AVERAGE")
            cells.append("" if a is None else f"{a['mae_pp']:.2f} / {a['spearman']:.2f} / "
                         f"{a['pair_accuracy_pct']:.1f} / {a['coverage_pct']:.0f} / ${a['cost_usd']:.0f}")
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", default=",".join(VARIANTS), help="item-model variants (see EXPERIMENTS)")
    ap.add_argument("--experiments", action="store_true", help="every variant of EXPERIMENTS")
    ap.add_argument("--splits", default=",".join(SPLITS))
    ap.add_argument("--ks", default=",".join(map(str, KS)))
    ap.add_argument("--draws", type=int, default=DRAWS)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--prefer", default="pace", help="truth of the 13 Pace models in both sources: pace | openhands")
    ap.add_argument("--sources-cache", type=Path, default=None, help="pickle of the sources prior (reused if present)")
    ap.add_argument("--no-sources", action="store_true", help="skip the sources prior (no warehouse run)")
    ap.add_argument("--no-calibration", action="store_true", help="nominal intervals (no inner-fold widening)")
    ap.add_argument("--records", type=Path, default=None, help="also pickle every estimate here (analysis)")
    ap.add_argument("--json", type=Path, default=None, help="write the summary here instead of accuracy.json")
    ap.add_argument("--report", action="store_true", help="also write bench/results/anchors.md and anchors.png")
    ap.add_argument("--table", action="store_true",
                    help="only rewrite anchors.md and anchors.png from accuracy.json's anchors section")
    args = ap.parse_args()
    if args.table:
        result = json.loads((REPO / "bench" / "results" / "accuracy.json").read_text())["anchors"]
        report(result, ["random-mean", "stratified-mean", *result["variants"]])
        return
    if not (SHARED / "openhands-index").is_dir():
        print(f"skipped: needs the agentic results at {SHARED / 'openhands-index'}")
        return
    names = list(EXPERIMENTS) if args.experiments else [v for v in args.variants.split(",") if v]
    unknown = [v for v in names if v not in EXPERIMENTS]
    if unknown:
        sys.exit(f"unknown variant(s) {unknown}; known: {', '.join(EXPERIMENTS)}")
    variants = {n: EXPERIMENTS[n] for n in names}
    splits = [s for s in args.splits.split(",") if s]
    ks = [int(k) for k in args.ks.split(",")]
    started = time.perf_counter()
    data = load_targets(SHARED, prefer=args.prefer)
    sources = {} if args.no_sources else load_sources(data, splits, args.sources_cache)
    records = evaluate(data, sources, variants, splits, ks, args.draws, args.seed, not args.no_calibration)
    if args.records is not None:
        args.records.write_bytes(pickle.dumps([asdict(r) for r in records]))
    summary = {"all": summarise(records, data), "pace": summarise(records, data, "pace")}
    result = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
              "seconds": round(time.perf_counter() - started, 1), "level": LEVEL, "draws": args.draws,
              "seed": args.seed, "batch": BATCH, "ks": ks, "prefer": args.prefer,
              "variants": {n: asdict(v) for n, v in variants.items()},
              "folds": make_splits(data), "summary": summary,
              "per_model_abs_error_pp": {n: {str(k): per_model_errors(records, n, k) for k in ks if k in (0, 30)}
                                         for n in ["random-mean", "stratified-mean", *variants]}}
    methods = ["random-mean", "stratified-mean", *variants]
    for k in (0, 30):
        print(f"\nK = {k}: MAE pp / Spearman / pair % / coverage % / cost USD (all 27 models)")
        print(table(summary["all"], methods, k))
    print("\nK = 30, the 14 Pace models")
    print(table(summary["pace"], ["sources", *methods], 30))
    if args.report:
        report(result, methods)
    print(f"wrote {store_section('anchors', result, args.json)} ({result['seconds']} s)")


if __name__ == "__main__":
    main()
