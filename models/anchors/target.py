"""The anchors estimator of one target, as bench/anchors.py chose it (bench/results/anchors_experiments.md):
a 1PL item model with slips fitted on the training models, a Student-t ability prior (from metadata, else
from the sources' prediction, else the population), the posterior median of the full mean, and its
interval widened by a split-conformal factor learnt on inner folds of the training models. Pure numpy.

The factor (bench/results/anchors_experiments.md, "calibration"): the inner folds are the round-robin groups
plus the EXTREMES weakest and strongest training models held out together, so the scores include estimates
made outside their training range; every target's scores are pooled (each in units of its own interval,
so ~5x the scores behind one factor); and an estimate outside its training range (``range_lo`` ..
``range_hi``: the second-lowest and second-highest training mean) is widened by the factor of the
out-of-range scores (never below the factor of all of them).

``fit_target`` returns everything a warehouse stores as rows (item parameters, the grid, the curve a
sources prior inverts, the widening factor per anchor count); ``estimate`` is the reference the SQL view
``anchor_estimates`` computes the same way, and ``plan`` the adaptive choice of the next anchors.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from models.common.parallel import blas_limit, map_jobs

from .calibration import conformal_factor, interval_scores, outside_factor, widen
from .choice import next_anchors, variance_path
from .grid import Grid, ability_grid, normal_log_prior
from .items import ItemParams, fit_items
from .posterior import estimate_full_mean, mean_curve
from .prior import ability_curve, prediction_prior, regression_prior

__all__ = ["KS", "TargetModel", "Prior", "fit_target", "pool_factors", "metadata_prior", "sources_prior",
           "log_prior", "estimate", "plan", "factor_for", "model_factor", "expected_widths", "anchors_to_reach"]

KS = (0, 5, 10, 20, 30, 50)      # anchor counts the widening factor is learnt at (the largest <= K applies)
BATCH = 5                        # anchors are chosen this many at a time, each batch after the last's results
DOF = 4.0                        # the prior's Student-t degrees of freedom
POPULATION_SD = 1.0
FIT_POINTS = 61                  # abilities of the item fit's grid (the estimate uses the full grid)
EXTREMES = 3                     # the weakest and the strongest training models each make one more inner fold
SCORED_PER_GROUP = 40            # members of an inner group estimated for the calibration, at most (evenly
                                 # spaced in name order): 5 x 40 = 200 scores per K are plenty for a quantile,
                                 # and at 1,000 models scoring every one would cost as much as the refits


@dataclass(frozen=True)
class Prior:
    """A model's ability prior on one target: Student-t(``DOF``) centred at ``mean`` with scale ``sd``;
    ``kind`` says where it came from (metadata | sources | population)."""
    mean: float
    sd: float
    kind: str


@dataclass
class TargetModel:
    """One target's fitted estimator. params: the items (n,); grid: the estimation grid (P points);
    slip_weights: (S,) the learnt weights of the grid's slip levels; models / abilities: (m,) the training
    models and their posterior mean abilities; features: (m, f) their metadata features; curve_theta /
    curve: (G,) the full mean (every item unrun) at each ability, slip levels averaged (a sources prior
    inverts it); factors: K -> conformal widening factor (inf: too few models to learn it), factors_outside
    the same for an estimate outside [range_lo, range_hi] (shares: the second-lowest and second-highest
    training mean); scores: the inner folds' interval scores behind them ({K: (inside, outside)})."""
    params: ItemParams
    grid: Grid
    slip_weights: np.ndarray
    models: list[str]
    abilities: np.ndarray
    features: np.ndarray
    curve_theta: np.ndarray
    curve: np.ndarray
    level: float
    factors: dict[int, float] = field(default_factory=dict)
    factors_outside: dict[int, float] = field(default_factory=dict)
    range_lo: float = -np.inf
    range_hi: float = np.inf
    scores: dict[int, tuple[list[float], list[float]]] = field(default_factory=dict)

    @property
    def n_items(self) -> int:
        return int(self.params.a.size)


def metadata_prior(train_features: np.ndarray, train_abilities: np.ndarray, features: np.ndarray) -> Prior | None:
    """The regression prior of a model with ``features`` (f,), or None when it has none usable (all NaN,
    or no feature known for at least half of the training models)."""
    features = np.asarray(features, dtype=np.float64)
    usable = (np.isfinite(train_features).mean(0) >= 0.5) & np.isfinite(features)
    if not usable.any() or train_features.shape[0] < 3:
        return None
    mean, sd = regression_prior(train_features[:, usable], train_abilities, features[usable][None, :])
    return Prior(float(mean[0]), max(sd, 0.05), "metadata")


def sources_prior(model: TargetModel, predicted: float, low: float, high: float, level: float) -> Prior:
    """The prior whose median full mean is the sources' prediction, its spread the prediction's interval."""
    centre, sd = prediction_prior(model.curve_theta, model.curve, predicted, low, high, level)
    return Prior(centre, sd, "sources")


def log_prior(model: TargetModel, prior: Prior) -> np.ndarray:
    """(P,) the prior's normalised log weights over the grid (the slip levels weighted as learnt)."""
    return normal_log_prior(model.grid, prior.mean, prior.sd, model.slip_weights, DOF)


def factor_for(factors: dict[int, float], k: int) -> float:
    """The widening factor learnt at the largest anchor count <= k."""
    usable = [c for c in factors if c <= k]
    return factors[max(usable)] if usable else float("inf")


def model_factor(model: TargetModel, k: int, point: float | None) -> float:
    """The widening factor of an estimate ``point`` (share; None: taken as in range) made from k anchors:
    the out-of-range one when the point lies outside [range_lo, range_hi] and one was learnt, else the
    in-range one."""
    outside = point is not None and model.factors_outside and not (model.range_lo <= point <= model.range_hi)
    return factor_for(model.factors_outside if outside else model.factors, k)


def estimate(model: TargetModel, prior: Prior, y: np.ndarray, observed: np.ndarray,
             members: np.ndarray | None = None) -> tuple[float, float, float]:
    """(point, low, high): the posterior median of the full mean over the target's items (``members`` (n,)
    bool; None: every item, a new model's full run) from the anchors (``observed`` (n,) bool, results ``y``
    (n,)), its interval widened by the factor of that many anchors. Shares in [0, 1]."""
    members = np.ones(model.n_items, dtype=bool) if members is None else np.asarray(members, dtype=bool)
    est = estimate_full_mean(model.params, model.grid, log_prior(model, prior), np.nan_to_num(y), observed,
                             members, model.level)
    point = float(est.median[0])
    low, high = widen(est.median, est.low, est.high, model_factor(model, int(np.sum(observed)), point))
    return point, float(low[0]), float(high[0])


def plan(model: TargetModel, prior: Prior, y: np.ndarray, observed: np.ndarray, count: int,
         cost: np.ndarray | None = None, members: np.ndarray | None = None) -> np.ndarray:
    """Indices of the next ``count`` items to run (adaptive: the most posterior variance of the full mean
    removed per item, or per unit of ``cost`` when given), never one already observed nor one outside
    ``members`` (n,) bool (None: every item)."""
    members = np.ones(model.n_items, dtype=bool) if members is None else np.asarray(members, dtype=bool)
    return next_anchors(model.params, model.grid, log_prior(model, prior), np.nan_to_num(y), observed, members,
                        count, cost)


def expected_widths(model: TargetModel, prior: Prior, y: np.ndarray, observed: np.ndarray, order: np.ndarray,
                    width_now: float | None = None, point: float | None = None) -> np.ndarray:
    """(len(order) + 1,) the interval width (shares, at most 1) expected after running the first k items of
    ``order`` (k = 0 .. len(order)), before their results are known.

    width(k) = 2 z f(K + k) sqrt(Var(k)): Var the linearised variance of the full mean left
    (:func:`models.anchors.choice.variance_path`), f the widening factor learnt at that anchor count (K the
    anchors run so far), z the normal quantile of the level. ``width_now`` (the interval the estimate has
    now) rescales the path so that width(0) is it: the posterior is not Gaussian, the ratios are what the
    linearisation gets right. A factor not learnt (inf) means [0, 1]: width 1. ``point`` (the estimate now,
    share) picks the in-range or out-of-range factors (None: in range)."""
    members = np.ones(model.n_items, dtype=bool)
    var = variance_path(model.params, model.grid, log_prior(model, prior), np.nan_to_num(y), observed, members,
                        order)
    k0 = int(np.sum(observed))
    factor = np.array([model_factor(model, k0 + k, point) for k in range(var.size)])
    z = NormalDist().inv_cdf((1 + model.level) / 2)
    with np.errstate(invalid="ignore"):
        raw = 2 * z * factor * np.sqrt(var)
    scale = 1.0
    if width_now is not None and np.isfinite(raw[0]) and raw[0] > 0:
        scale = width_now / raw[0]
    return np.minimum(np.where(np.isfinite(raw), raw * scale, 1.0), 1.0)


def anchors_to_reach(widths: np.ndarray, width_now: float, target: float) -> int | None:
    """How many of the planned anchors bring the interval to at most ``target`` (shares): 0 when the width
    served now already is, else the smallest k >= 1 with widths[k] <= target (the first anchor switches
    a model served by its sources to the anchors estimate, whose path ``widths`` is); None when no k does."""
    if width_now <= target:
        return 0
    hits = np.flatnonzero(np.asarray(widths)[1:] <= target)
    return int(hits[0]) + 1 if hits.size else None


def _fit(y: np.ndarray, grid: Grid, fit_grid: Grid):
    fit = fit_items(y, slopes="shared", grid=fit_grid)
    return fit.params, fit.slip_weights, fit.ability


def _curve(params: ItemParams, grid: Grid, slip_weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = params.a.size
    values = mean_curve(params, grid, np.zeros(n), np.zeros(n, bool), np.ones(n, bool))[0]
    return ability_curve(grid, values, slip_weights)


def fit_target(y: np.ndarray, models: list[str], features: np.ndarray, *, level: float = 0.8,
               ks: tuple[int, ...] = KS, inner_folds: int = 5, grid: Grid | None = None,
               n_jobs: int = 1) -> TargetModel:
    """Fit one target's estimator on the training models' results.

    y: (m, n) 0/1, NaN where a model has no result for an item; models: (m,) names (inner folds deal them
    round-robin in name order); features: (m, f) metadata features (NaN: unknown). The widening factors at
    each K of ``ks`` are learnt on ``inner_folds`` folds of the training models and on the two EXTREMES
    groups (module doc): each group held out of a refitted item model, its members estimated as a new model
    is (metadata prior, else the population's; K anchors chosen adaptively from the group member's own
    items), then the split-conformal factors of their interval scores, this target's alone
    (:func:`pool_factors` pools several targets'). The inner groups run on ``n_jobs`` threads; the result
    is the same for any ``n_jobs``. Deterministic."""
    y = np.asarray(y, dtype=np.float64)
    features = np.asarray(features, dtype=np.float64)
    grid = ability_grid() if grid is None else grid
    fit_grid = ability_grid(points=FIT_POINTS, slips=tuple(grid.levels))
    params, slip_weights, abilities = _fit(y, grid, fit_grid)
    theta, curve = _curve(params, grid, slip_weights)
    target = TargetModel(params, grid, slip_weights, list(models), abilities, features, theta, curve, level)
    target.range_lo, target.range_hi = training_range(y)
    target.scores = _scores(y, target, ks, inner_folds, fit_grid, n_jobs)
    pool_factors([target])
    return target


def training_range(y: np.ndarray) -> tuple[float, float]:
    """(lo, hi) shares: the second-lowest and second-highest of the models' means over the items each has
    (y (m, n), NaN: not run), so one odd model cannot stretch it; (-inf, inf) with fewer than 4 models."""
    with np.errstate(all="ignore"):
        means = np.sort(np.nanmean(np.asarray(y, dtype=np.float64), axis=1))
    means = means[np.isfinite(means)]
    return (float(means[1]), float(means[-2])) if means.size >= 4 else (-np.inf, np.inf)


def pool_factors(targets: list[TargetModel]) -> None:
    """Set every target's factors from the inner scores of all of ``targets`` together (each score is in
    units of its own estimate's interval, so targets pool): per K the split-conformal factor of the
    in-range and out-of-range scores together (inf when there are too few), and for out-of-range estimates
    the factor of those alone (with too few, their largest score), never below the first."""
    if not targets:
        return
    ks = sorted({k for t in targets for k in t.scores})
    inside = {k: [s for t in targets for s in t.scores.get(k, ([], []))[0]] for k in ks}
    outside = {k: [s for t in targets for s in t.scores.get(k, ([], []))[1]] for k in ks}
    both = {k: conformal_factor(np.asarray(inside[k] + outside[k]), targets[0].level) for k in ks}
    for t in targets:
        t.factors = {k: both[k] for k in t.scores}
        t.factors_outside = {k: outside_factor(np.asarray(outside[k]), np.asarray(inside[k] + outside[k]), t.level)
                             for k in t.scores}


def _inner_groups(y: np.ndarray, models: list[str], inner_folds: int) -> list[list[int]]:
    """The round-robin groups (name order) and, with at least 4 EXTREMES models, the EXTREMES weakest and
    the EXTREMES strongest (by their mean over the items each has) as two more groups."""
    order = sorted(range(len(models)), key=lambda i: models[i])
    groups = [order[g::inner_folds] for g in range(inner_folds)] if inner_folds > 1 else []
    if inner_folds > 1 and len(models) >= 4 * EXTREMES:
        with np.errstate(all="ignore"):
            means = np.nanmean(y, axis=1)
        ranked = sorted(range(len(models)), key=lambda i: (means[i], models[i]))
        groups += [ranked[:EXTREMES], ranked[-EXTREMES:]]
    return groups


def scored_members(group: list[int], most: int = SCORED_PER_GROUP) -> list[int]:
    """The members of an inner group the calibration estimates: all of them up to ``most``, else ``most``
    evenly spaced over the group's order (deterministic)."""
    if len(group) <= most:
        return list(group)
    return [group[i] for i in np.linspace(0, len(group) - 1, most).round().astype(int)]


def _scores(y: np.ndarray, whole: TargetModel, ks: tuple[int, ...], inner_folds: int, fit_grid: Grid,
            n_jobs: int = 1) -> dict:
    """{K: (inside, outside)}: the inner groups' interval scores, split by whether each estimate lies inside
    its inner training range; exact estimates (every item run: no interval to widen) are left out. The
    groups are independent: on ``n_jobs`` threads (single-threaded BLAS), their scores joined in group order,
    so the result does not depend on ``n_jobs``."""
    scores: dict[int, tuple[list[float], list[float]]] = {k: ([], []) for k in ks}
    groups = [g for g in _inner_groups(y, whole.models, inner_folds) if g and y.shape[0] - len(g) >= 2]
    if n_jobs > 1 and len(groups) > 1:
        with blas_limit():
            per_group = map_jobs(lambda g: _group_scores(y, whole, ks, fit_grid, g), groups, n_jobs)
    else:
        per_group = [_group_scores(y, whole, ks, fit_grid, g) for g in groups]
    for found in per_group:
        for k, inside, score in found:
            scores[k][0 if inside else 1].append(score)
    return scores


def _group_scores(y: np.ndarray, whole: TargetModel, ks: tuple[int, ...], fit_grid: Grid,
                  group: list[int]) -> list[tuple[int, bool, float]]:
    """(K, inside the inner training range, interval score) of each estimate of one inner group: the item
    model refitted without the group, its scored members estimated as new models at each K."""
    train = np.setdiff1d(np.arange(y.shape[0]), group)
    # a cold start, as the whole fit's: started from the whole fit's items (fitted on this group too), EM stops
    # within tol of that start, and the held-out members look easier to estimate than new models are (the
    # factors at K = 10 came out 12 % narrower at 1,000 models; converging to 1e-5 instead costs more than
    # the cold start saves)
    params, slip_weights, abilities = _fit(y[train], whole.grid, fit_grid)
    theta, curve = _curve(params, whole.grid, slip_weights)
    inner = TargetModel(params, whole.grid, slip_weights, [whole.models[i] for i in train], abilities,
                        whole.features[train], theta, curve, whole.level)
    lo, hi = training_range(y[train])
    found: list[tuple[int, bool, float]] = []
    for r in scored_members(group):
        members = np.isfinite(y[r])
        if not members.any():
            continue
        prior = (metadata_prior(inner.features, inner.abilities, whole.features[r])
                 or Prior(0.0, POPULATION_SD, "population"))
        weights = log_prior(inner, prior)
        results = np.nan_to_num(y[r])
        truth = float(results[members].mean())
        observed = np.zeros(y.shape[1], dtype=bool)
        for k in sorted(ks):
            while observed.sum() < min(k, members.sum()):
                step = next_anchors(params, whole.grid, weights, results, observed, members,
                                    min(BATCH, k - int(observed.sum())))
                if step.size == 0:
                    break
                observed[step] = True
            est = estimate_full_mean(params, whole.grid, weights, results, observed, members, whole.level)
            if not est.high[0] > est.low[0]:
                continue
            point = float(est.median[0])
            score = interval_scores(est.median, est.low, est.high, np.array([truth]))
            found.extend((k, lo <= point <= hi, float(v)) for v in score)
    return found
