"""``default`` Pace method, Goal A (absolute scores): the published idea with the
flaws of spec §18–§20 fixed. The drivers; pure array functions (no I/O, no SQL).

Inputs: X (n × S float64, NaN = missing score, *unfiltered* — e.g.
``warehouse.matrices.Matrices.X``), P (per target an n × N_t float64 matrix,
NaN = missing instance), the target names. Outputs are ``AbsResult`` objects
(the subclass ``DefaultAbsResult`` adds per-fold configs, exclusions and the
linear proxies), so every table / report / plot written for ``compat`` works.
The machinery: ``basis`` (training basis), ``default_fold`` (per target fit),
``folds`` (outer and inner training sets), ``autotune`` (grid, objective).

What is fixed, and how (spec §20 item numbers):

* (1) **Nested tuning.** ``loocv_abs_default(nested=True)``: for held-out model
  i and target t the configuration is chosen by an inner LOOCV over the
  training models only (objective 100·MAE − Spearman as in §9, first minimum in
  grid order). Model i's target values never enter its own configuration, its
  selection, its basis or its regression.
* (2) **Smaller grid.** q ∈ {0, .25, .5, .75, 1}, nc_h = nc_d ∈ {1, 2, 3, 4, 6, 8},
  m ∈ {0, .25, .5, .75, 1} with the §9.1 loop order and skips (492 configs;
  ``autotune.DefaultGrid``).
* (3) **Inductive basis.** The usable-column mask, the zero-variance filter,
  the column centres and the global SVD are computed per training set, from
  the training rows only.
* (4) **Missing data are masked.** A column is usable in a fold iff it is
  observed for ≥ ``min_obs`` (default 75 %) of the training models (missing
  training cells are imputed with the training column mean, i.e. 0 after
  centring) and, in LOOCV, observed for the model being predicted (the
  instances a new model would actually run; this uses only its *source* row,
  never its target). Target mean = mean over the model's observed target
  instances, NaN when it has none; NaN-target models are excluded from
  training and evaluation of that target and listed in ``result.excluded``.
* (5) **Deterministic ties.** Identical source columns (identical vectors over
  the training models, after imputation) are deduplicated before ranking: the
  first column in (benchmark, subdir, instance_id) order represents the group
  (its multiplicity weights the global SVD, so the basis equals the SVD of the
  non-deduplicated block). Orders are stable descending sorts with the column
  order as explicit secondary key; all scores are float64. Embedding weights
  are Pearson correlations (no rank ties).
* (6) **Exact pooling.** With Pearson weights the pooled (tiled) regression
  reduces exactly to quantities of the per-model bootstrap-mean labels; we use
  their B → ∞ limit (the observed target means — the expectation of the
  bootstrap mean), so neither the weights nor the OLS depend on resampling.
  The B bootstrap replicates (seed + 31·t, paired over instances, NaN-aware)
  are only used for the clamp envelope.
* (11) **Numerics.** Columns are centred on the training means; the H basis
  and the D-pt pseudo-inverse are truncated at the numerical rank
  s > s_max · ``RANK_RTOL`` (1e-8); nc larger than the rank uses the rank.

Missing-score treatment (``missing=``, default "mask" = item (4) above). "zero"
counts a missing score as a failure (0), the published convention; "auto" makes
the choice one more dimension of the nested tuning (inner LOOCV on the training
models, candidates = the grid under both treatments, top-k over the union).
Why it matters (measured, see bench/accuracy.py): on the real data whole
benchmarks are absent for the text-only models (mmmu, visualpuzzles,
visualwebbench for 6 of 14 models); masking drops exactly the columns whose
absence carries the "text-only ⇒ weaker agent" signal, which is most of what
compat's better ranking on swtbench / gaia came from. On synthetic data, where
absence is random, zero-filling hurts, so the treatment is tuned, not fixed.
Proxies fitted in "zero" mode carry ``fill`` = 0 (the value a NaN is replaced
by before centring); a consumer that stores proxies must keep ``fill``.

Prediction, per (fold, target), is linear in the raw selected scores:
``ŷ(z) = clip(ȳ + Σ_s w_s (x_z[s] − μ_s), lo, hi)`` with ȳ the mean training
target, μ_s the training column means, w_s = m·w^H_s + (1 − m)·w^D_s and
[lo, hi] = [min_b − R/4, max_b + R/4] ∩ [0, 1] (min_b, max_b: extreme pooled
bootstrap labels of the training models, R = max_b − min_b; the exact
training range when B = 0). A missing selected score is imputed with μ_s (it
contributes 0). ``fit_abs_default`` returns these rows per target
(``proxies.LinearProxy``). Both drivers run with single-threaded BLAS.
"""
from __future__ import annotations

from collections import Counter
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from models.common.autotune import DefaultGrid, first_best, tuning_objective
from models.default.basis import MIN_OBS, TrainingBasis, training_basis
from models.common.configs import AbsConfig
from models.default.goal_a_fold import AbsTargetFit, fold_selection
from models.common.folds import KFOLD, KFOLD_ABOVE, kfold_sets, loo_jobs, loo_training_set, without
from models.common.inputs import default_inputs, fill_missing, missing_treatments
from models.common.metrics import masked_metrics
from models.common.parallel import map_jobs, single_blas
from models.common.pooling import bootstrap_means, clamp_envelope
from models.common.proxies import LinearProxy
from models.common.results import DefaultAbsResult, FoldSelection, model_names

__all__ = ["loocv_abs_default", "fit_abs_default"]


def _selection(tf: AbsTargetFit, cfg: AbsConfig, fold: int, target: str) -> FoldSelection:
    _, _, _, sel, wh, wd = tf.linear(cfg)
    return fold_selection(fold, target, tf.bs, sel, tf.order_h, tf.order_d(cfg.nc_d), tf.count,
                          wh if cfg.m > 0 else np.zeros(sel.H.size),
                          wd if cfg.m < 1 else np.zeros(sel.D.size), cfg.nc_h, cfg.nc_d)


@single_blas
def loocv_abs_default(X: np.ndarray, P, targets: Sequence[str], *,
                      models: Optional[Sequence[str]] = None, count: int = 100, B: int = 300,
                      seed: int = 42, nested: bool = True, n_jobs: int = 1,
                      grid: DefaultGrid = DefaultGrid(), min_obs: float = MIN_OBS,
                      mask_new: bool = True, score_range: Optional[Tuple[float, float]] = (0.0, 1.0),
                      config: Optional[Mapping[str, AbsConfig]] = None,
                      top_k: int = 10, missing: str = "mask",
                      rank_weight: float = 1.0, selections: bool = True) -> DefaultAbsResult:
    """Leave-one-model-out evaluation of the ``default`` method.

    X: (n, S) raw sources (NaN = missing); P: per target (n, N_t) (NaN = missing).
    nested=True: per (fold, target) the config is tuned by inner LOOCV on the
    training models only. nested=False: one config per target chosen on the
    outer LOOCV predictions themselves (the published, optimistic protocol —
    for comparison only). ``config`` (target → AbsConfig, each in ``grid``)
    fixes the config instead of tuning. top_k > 1 (nested only): the
    prediction is the mean of the top_k configs by inner objective (stable
    order; ``fold_configs`` records the best one). mask_new: a fold only uses columns the
    predicted model has observed. Models with a NaN target mean are predicted
    (pred row filled) but excluded from training and from the metrics.

    missing: how a missing source score is treated. "mask" — masked (coverage
    rule, mean imputation; see the module doc); "zero" — counted as a failure
    (score 0, the published convention); "auto" — both candidate sets are
    computed and the choice is one more tuned dimension (inner LOOCV on the
    training models, like the grid configs; ties keep "mask").
    ``fold_missing[(fold, target)]`` records the winner's treatment.
    rank_weight: the tuning objective is 100·MAE − rank_weight·Spearman (1 = §9).
    selections=False: no per-fold selection records (``fit_abs_default`` only needs the configs); the
    per-fold fits are then dropped as soon as their predictions are taken, so memory stays at one
    training basis per worker instead of one per fold (at 100 models × 90k instances ~300 MB each).
    """
    X, Pl, Y = default_inputs(X, P, targets)
    n, T = X.shape[0], len(targets)
    names = model_names(models, n)
    fills = missing_treatments(missing)
    Xf = {f: fill_missing(X, f) for f in fills}
    K = grid.configs().shape[0]
    F = len(fills)
    valid = [np.isfinite(Y[:, t]) for t in range(T)]
    envs = [bootstrap_means(Pl[t], B, seed + 31 * t) for t in range(T)]
    if config is not None:
        allowed = {name: np.asarray([f * K + grid.index(config[name]) for f in range(F)])
                   for name in targets}
    else:
        allowed = {name: np.arange(F * K) for name in targets}
    need_inner = nested and any(a.size > 1 for a in allowed.values())
    jobs = loo_jobs(valid, need_inner)
    # only the outer folds' fits are read again (their selections); inner fits give predictions only
    outer_keys = {(loo_training_set(n, i, valid[t]), i) for t in range(T) for i in range(n)} if selections else set()

    def run(key):
        R, i = key
        rows = np.asarray(R, dtype=np.int64)
        newr = np.asarray([i])
        ts = sorted(set(jobs[key]))
        preds = {t: [] for t in ts}
        tfs = {t: [] for t in ts}
        bounds = {t: clamp_envelope(envs[t], rows, Y[rows, t], score_range) for t in ts}
        for f in fills:
            bs = TrainingBasis(Xf[f], rows, newr if mask_new else np.zeros(0, np.int64), min_obs)
            new_c = bs.centred(Xf[f], newr)
            for t in ts:
                tf = AbsTargetFit(bs, Y[rows, t], new_c, grid, count)
                lo, hi = bounds[t]
                preds[t].append(np.clip(tf.all_configs()[:, 0], lo, hi))
                if key in outer_keys:
                    tfs[t].append(tf)
        return key, {t: (np.concatenate(preds[t]), tfs[t]) for t in ts}

    results = dict(map_jobs(run, list(jobs), n_jobs))

    pred = np.full((n, T), np.nan)
    fold_cfg: Dict[Tuple[int, str], AbsConfig] = {}
    fold_fill: Dict[Tuple[int, str], str] = {}
    sels: List[FoldSelection] = []
    warns: List[str] = []
    excluded = {targets[t]: [names[j] for j in range(n) if not valid[t][j]] for t in range(T)}
    for t, name in enumerate(targets):
        if excluded[name]:
            warns.append(f"{name}: no target value for {', '.join(excluded[name])} "
                         "(excluded from training and metrics)")
        al = allowed[name]
        outer = np.full((al.size, n), np.nan)
        for i in range(n):
            outer[:, i] = results[(loo_training_set(n, i, valid[t]), i)][t][0][al]
        chosen_global = None
        if al.size == 1:
            chosen_global = 0
        elif not nested:
            v = valid[t]
            chosen_global = first_best(tuning_objective(outer[:, v], Y[v, t], rank_weight))
        for i in range(n):
            R = loo_training_set(n, i, valid[t])
            if chosen_global is not None:
                k = chosen_global
                pred[i, t] = outer[k, i]
            else:
                inner = np.stack([results[(without(R, kk), kk)][t][0][al] for kk in R], axis=1)
                sc = tuning_objective(inner, Y[np.asarray(R), t], rank_weight)
                k = first_best(sc)
                if top_k > 1:
                    best = np.argsort(np.where(np.isnan(sc), np.inf, sc), kind="stable")[:top_k]
                    pred[i, t] = float(outer[best, i].mean())
                else:
                    pred[i, t] = outer[k, i]
            fi, kc = divmod(int(al[k]), K)
            cfg = grid.config(kc)
            fold_cfg[(i, name)] = cfg
            fold_fill[(i, name)] = fills[fi]
            if selections:
                tf = results[(R, i)][t][1][fi]
                sels.append(_selection(tf, cfg, i, name))
    mode = "loocv-default-nested" if (nested and config is None) else (
        "loocv-default-fixed" if config is not None else "loocv-default-insample-tuned")
    configs = {}
    fill_of = {}
    for name in targets:
        c = Counter((fold_fill[(i, name)], fold_cfg[(i, name)]) for i in range(n))
        fill_of[name], configs[name] = c.most_common(1)[0][0]
    return DefaultAbsResult(mode, names, list(targets), pred, Y, configs, sels,
                            masked_metrics(pred, Y, targets), warnings=warns, fold_configs=fold_cfg,
                            excluded=excluded, fold_missing=fold_fill, missing=fill_of)


def _kfold_configs(X: np.ndarray, Y: np.ndarray, targets: Sequence[str], envs, k: int, *, grid: DefaultGrid,
                   count: int, min_obs: float, score_range, rank_weight: float, n_jobs: int,
                   names: Optional[Sequence[str]] = None) -> Dict[str, AbsConfig]:
    """Per target the grid config with the best ``k``-fold objective (missing scores masked): the models
    with a target value are dealt round-robin into k held-out sets; each set is predicted by every config
    fitted on the others (no new-model mask, as ``fit_abs_default``'s leave-one-out tuning); the first
    minimum of 100·MAE − rank_weight·Spearman over all held-out predictions wins. ``names``: the models of
    X's rows, to share bases (``models.default.basis.training_basis``)."""
    n, T = X.shape[0], len(targets)
    valid = [np.isfinite(Y[:, t]) for t in range(T)]
    jobs: Dict[Tuple[Tuple[int, ...], Tuple[int, ...]], List[int]] = {}
    for t in range(T):
        rows = np.flatnonzero(valid[t])
        for held in kfold_sets(rows, k):
            train = tuple(int(r) for r in rows if r not in set(held.tolist()))
            jobs.setdefault((train, tuple(int(h) for h in held)), []).append(t)

    def run(key):
        train, held = key
        rows, new = np.asarray(train, dtype=np.int64), np.asarray(held, dtype=np.int64)
        bs = training_basis(X, rows, np.zeros(0, np.int64), min_obs, names=names)
        new_c = bs.centred_rows(X, new)
        out = {}
        for t in jobs[key]:
            lo, hi = clamp_envelope(envs[t], rows, Y[rows, t], score_range)
            out[t] = np.clip(AbsTargetFit(bs, Y[rows, t], new_c, grid, count).all_configs(), lo, hi)  # (K, h)
        return key, out

    K = grid.configs().shape[0]
    outer = [np.full((K, n), np.nan) for _ in range(T)]
    for (train, held), out in map_jobs(run, list(jobs), n_jobs):
        for t, pred in out.items():
            outer[t][:, list(held)] = pred
    return {name: grid.config(first_best(tuning_objective(outer[t][:, valid[t]], Y[valid[t], t], rank_weight)))
            for t, name in enumerate(targets)}


@single_blas
def fit_abs_default(X: np.ndarray, P, targets: Sequence[str], *,
                    models: Optional[Sequence[str]] = None, count: int = 100, B: int = 300,
                    seed: int = 42, n_jobs: int = 1, grid: DefaultGrid = DefaultGrid(),
                    min_obs: float = MIN_OBS, score_range: Optional[Tuple[float, float]] = (0.0, 1.0),
                    config: Optional[Mapping[str, AbsConfig]] = None, missing: str = "mask",
                    rank_weight: float = 1.0, kfold_above: int = KFOLD_ABOVE, kfold: int = KFOLD
                    ) -> DefaultAbsResult:
    """Fit the ``default`` proxy on all models with a target value (per target).

    The config per target is chosen by LOOCV over those models (``config``
    fixes it); the predictor is then fitted on all of them with columns usable
    from the training rows alone (no new-model mask). ``pred`` holds the
    in-sample predictions for every row (NaN-target rows are predicted too);
    ``proxies[target]`` is the stored linear form (``LinearProxy``) that
    reproduces them. missing ("mask" / "zero" / "auto") as in ``loocv_abs_default``; with
    "auto" the treatment is tuned together with the config; ``missing[target]`` records it and
    the proxy's ``fill`` (0 for "zero") says what replaces a missing score.
    With more than ``kfold_above`` models (and missing="mask") the config is tuned by ``kfold``-fold
    cross-validation instead of leave-one-out (``_kfold_configs``).
    """
    X, Pl, Y = default_inputs(X, P, targets)
    n, T = X.shape[0], len(targets)
    names = model_names(models, n)
    fills = missing_treatments(missing)
    if config is not None and not isinstance(config, Mapping):
        config = {name: config[t] for t, name in enumerate(targets)}
    if config is None and fills == ("mask",) and n > kfold_above:
        envs = [bootstrap_means(Pl[t], B, seed + 31 * t) for t in range(T)]
        config = _kfold_configs(X, Y, targets, envs, kfold, grid=grid, count=count, min_obs=min_obs,
                                score_range=score_range, rank_weight=rank_weight, n_jobs=n_jobs,
                                names=None if models is None else names)
        fill_of = {t: "mask" for t in targets}
    elif config is None or len(fills) > 1:
        # in-sample-tuned mode: every fold has the same config
        tuned = loocv_abs_default(X, Pl, targets, models=names, count=count, B=B, seed=seed,
                                  nested=False, n_jobs=n_jobs, grid=grid, min_obs=min_obs,
                                  mask_new=False, score_range=score_range, config=config,
                                  missing=missing, rank_weight=rank_weight, selections=False)
        config = {t: tuned.configs[t] for t in targets}
        fill_of = dict(tuned.missing)
    else:
        fill_of = {t: fills[0] for t in targets}
    Xf = {f: fill_missing(X, f) for f in set(fill_of.values())}
    envs = [bootstrap_means(Pl[t], B, seed + 31 * t) for t in range(T)]
    pred = np.full((n, T), np.nan)
    proxies: Dict[str, LinearProxy] = {}
    sels = []
    excluded = {}
    warns = []
    bases: Dict[Tuple[str, Tuple[int, ...]], TrainingBasis] = {}
    for t, name in enumerate(targets):
        rows = np.flatnonzero(np.isfinite(Y[:, t]))
        excluded[name] = [names[j] for j in range(n) if j not in set(rows.tolist())]
        if excluded[name]:
            warns.append(f"{name}: no target value for {', '.join(excluded[name])} (not trained on)")
        fl = fill_of[name]
        key = (fl, tuple(rows.tolist()))
        bs = bases.get(key)
        if bs is None:
            bs = bases[key] = training_basis(Xf[fl], rows, np.zeros(0, np.int64), min_obs,
                                             names=None if models is None or fl != "mask" else names)
        tf = AbsTargetFit(bs, Y[rows, t], bs.centred_rows(Xf[fl], np.arange(n)), grid, count)
        cfg = config[name]
        idx, w, side, sel, wh, wd = tf.linear(cfg)
        lo, hi = clamp_envelope(envs[t], rows, Y[rows, t], score_range)
        o = np.argsort(bs.rep_cols[idx], kind="stable")
        prox = LinearProxy(target=name, cols=bs.rep_cols[idx][o], weight=w[o], centre=bs.rep_mu[idx][o],
                           intercept=tf.ybar, lo=lo, hi=hi, config=cfg, multiplicity=bs.mult[idx][o],
                           side=side[o], trained_on=[names[j] for j in rows],
                           fill=None if fl == "mask" else np.zeros(idx.size), missing=fl)
        proxies[name] = prox
        pred[:, t] = prox.predict(X)
        sels.append(_selection(tf, cfg, -1, name))
    return DefaultAbsResult("fit-default", names, list(targets), pred, Y, dict(config), sels,
                            masked_metrics(pred, Y, targets), warnings=warns, excluded=excluded,
                            proxies=proxies, missing=fill_of)
