"""``default`` Pace method, Goal B (pairwise): the published pair model with the flaws of
spec §18–§20 fixed. The drivers; pure array functions (no I/O, no SQL).

Inputs as ``models.default.goal_a``: X (n × S float64, NaN = missing, unfiltered), P (per target an
n × N_t float64 matrix, NaN = missing instance), target names. Truth = mean over a model's
observed target instances (NaN when none → that model is excluded from training and evaluation
of that target, listed in ``result.excluded``).

Per (training set, target) — everything from the training rows only:

* **Selection** = the ``default`` Goal A machinery (``basis.TrainingBasis``, ``default_fold``): usable
  columns (observed for ≥ 75 % of the training models and, in LOOCV, for the predicted model —
  its *source* row only), training-mean imputation and centring, zero-variance filter,
  deduplication of identical columns, inductive rank-truncated global SVD, stable float64
  orders, the strict joint budget |H ∪ D| = C (§4.4) with share q.
* **Embeddings**: H = rank-truncated SVD of the centred training block on the H set (training
  embeddings U = X̃·Π exactly, Π = V/S, no 1e-12 blow-up, §18 item 23); D-pt = least-squares
  coordinates in the inductive global basis, Π = pinv(V_sel, rcond 1e-8)ᵀ. Both sides use the
  same nc (nc_h = nc_d = nc).
* **Soft labels** (§6 identity, §20 item 6): per target, B paired bootstrap replicates over
  target instances (NaN-aware, ``pooling.bootstrap_means``, seed + 31·t); for the ordered
  training pairs (a, b) f_ab = P(y_b[a] > y_b[b]) + ½·P(tie) — a tie is half a win for each
  side (the published rule counts it as a loss for a, §8), so f_ab + f_ba = 1 and the fit is
  symmetric. One 156-row (m(m−1)-row) fit replaces the B·156-row pool.
* **Fit**: no-intercept ridge logistic on pair differences, mean BCE + (α/2)‖w‖², α = 0.1 as
  published, solved to convergence by Newton's method (the exact optimum; compat keeps
  L-BFGS-B). Margin(k, j) = (x̃_k − x̃_j)[sel] · β with β = m·Π_H w_H + (1 − m)·Π_D w_D on the
  imputed raw scores — exactly linear.
* **Degenerate folds** (every training soft label ½, e.g. all training models tied, or an empty
  selection) give w = 0, margin 0 → p = ½; an evaluated pair with margin 0 counts as **half
  correct** (neutral), never as a loss (§18 item 14, §20 item 9).
* **Clean pair protocol** (§18 item 15, §20 item 9): in LOOCV the unordered pair {k, j} is
  predicted in fold k and in fold j; the two directed predictions are **averaged**:
  margin_sym(k, j) = (margin_k(k, j) − margin_j(j, k)) / 2 and
  p_sym(k, j) = (p_k(k, j) + 1 − p_j(j, k)) / 2, so margins are antisymmetric and
  p(k, j) + p(j, k) = 1. Accuracy is over unordered pairs with |Δy| ≥ 1e-9 (truth ties excluded),
  with half credit for a zero margin.
* **Nested tuning** (§20 item 1): for held-out model i and target t the config (q, nc, m) of a
  small grid (``PairGrid``: q ∈ {.25, .5, .75}, nc ∈ {1, 2, 3, 4}, m ∈ {0, .5, 1}; 36 configs) is
  chosen by an inner LOOCV over the training models only (same protocol: averaged directed
  margins, half credit): maximal inner accuracy, ties → lower inner mean log-loss of σ(margin),
  then grid order. Model i's target values never enter its config, selection, basis, fit or
  calibration.
* **Cross-fitted calibration** (§18 item 13, §20 item 8): Platt (a, b) for fold i is fitted on
  fold i's *inner* LOOCV directed margins of the chosen config (pairs among the training models
  only, never involving model i), by a logistic fit with a mild ridge (λ = 1 on a; keeps a finite
  under separation); p_i(i, j) = σ(a_i·margin + b_i).

``fit_pair_default`` fits the proxy on all models with a target value: config by LOOCV over them,
Platt on those LOOCV margins (out-of-fold per model), weights β on the full fit; it returns per
target a ``PairProxy`` — margin(k, j) = Σ_s w_s (x̃_k[s] − x̃_j[s]) with x̃ = x imputed by the
training column mean (``centre``), p_win = σ(a·margin + b). The per-fold machinery is
``pair_default_fold``; both drivers run with single-threaded BLAS.
"""
from __future__ import annotations

from collections import Counter
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
from models.common.special import expit

from models.common.autotune import PairGrid, best_pair_config
from models.default.basis import MIN_OBS, TrainingBasis, training_basis
from models.pair.calibration import platt_ridge_pairs
from models.common.configs import DefaultPairConfig
from models.common.folds import KFOLD, KFOLD_ABOVE, kfold_sets, loo_jobs, loo_training_set, without
from models.common.inputs import default_inputs
from models.common.metrics import sym_accuracy
from models.default.goal_b_fold import PairTargetFit, embedding_scores, pair_fold_selection
from models.pair.regress import ALPHA
from models.pair.pairwise import antisymmetric, pair_values, win_matrix
from models.common.parallel import map_jobs, single_blas
from models.common.pooling import bootstrap_means
from models.common.proxies import PairProxy
from models.common.results import DefaultPairResult, FoldSelection, model_names

__all__ = ["loocv_pair_default", "fit_pair_default"]


def _accuracies(dM: np.ndarray, Y: np.ndarray, targets: Sequence[str]):
    """Per target (and AVERAGE) accuracy of averaged directed margins; pairs and neutral counts."""
    acc_d, cnt_d, neu_d = {}, {}, {}
    for t, name in enumerate(targets):
        a_, c_, n_ = sym_accuracy(dM[:, :, t], Y[:, t])
        acc_d[name], cnt_d[name], neu_d[name] = float(a_[0]), c_, int(n_[0])
    acc_d["AVERAGE"] = float(np.mean([acc_d[t] for t in targets]))
    return acc_d, cnt_d, neu_d


@single_blas
def loocv_pair_default(X: np.ndarray, P, targets: Sequence[str], *,
                       models: Optional[Sequence[str]] = None, count: int = 100, B: int = 300,
                       seed: int = 42, grid: PairGrid = PairGrid(), min_obs: float = MIN_OBS,
                       mask_new: bool = True, alpha: float = ALPHA,
                       config: Optional[Mapping[str, DefaultPairConfig]] = None,
                       n_jobs: int = 1) -> DefaultPairResult:
    """Leave-one-model-out Goal B of the ``default`` method (nested config, cross-fitted Platt).

    X: (n, S) raw sources (NaN = missing); P: per target (n, N_t) (NaN = missing).
    ``config`` (target → DefaultPairConfig) fixes the config instead of nested tuning (the
    Platt fit still uses the inner LOOCV margins). Returns ``DefaultPairResult``: margins / prob
    (n, n, T) symmetrised (averaged directed predictions), directed_* the per-fold rows,
    accuracy per target (unordered pairs, half credit for margin 0) and AVERAGE.
    """
    X, Pl, Y = default_inputs(X, P, targets)
    n, T = X.shape[0], len(targets)
    names = model_names(models, n)
    cfgs = grid.configs()
    K = len(cfgs)
    valid = [np.isfinite(Y[:, t]) for t in range(T)]
    envs = [bootstrap_means(Pl[t], B, seed + 31 * t) for t in range(T)]
    wins = [win_matrix(envs[t] if envs[t].shape[0] else Y[:, t][None, :]) for t in range(T)]
    jobs = loo_jobs(valid, nested=True)
    allrows = np.arange(n)

    def run(key):
        R, i = key
        rows = np.asarray(R, dtype=np.int64)
        bs = TrainingBasis(X, rows, np.asarray([i]) if mask_new else np.zeros(0, np.int64), min_obs)
        Xc = bs.centred(X, allrows)
        out = {}
        for t in sorted(set(jobs[key])):
            pf = PairTargetFit(bs, Y[rows, t], pair_values(wins[t], rows), Xc, grid, count, alpha)
            s = pf.scores(allrows)  # (K, n)
            out[t] = (s[:, i][:, None] - s, pf)  # (K, n) margins of i vs every model
        return key, out

    results = dict(map_jobs(run, list(jobs), n_jobs))

    dM = np.full((n, n, T), np.nan)
    dP = np.full((n, n, T), np.nan)
    fold_cfg: Dict[Tuple[int, str], DefaultPairConfig] = {}
    fold_platt: Dict[Tuple[int, str], Tuple[float, float]] = {}
    sels: List[FoldSelection] = []
    excluded, warns = {}, []
    for t, name in enumerate(targets):
        excluded[name] = [names[j] for j in range(n) if not valid[t][j]]
        if excluded[name]:
            warns.append(f"{name}: no target value for {', '.join(excluded[name])} "
                         "(excluded from training and evaluation)")
        for i in range(n):
            R = loo_training_set(n, i, valid[t])
            Rl = list(R)
            # inner LOOCV directed margins (K, n, n) among R
            inner = np.full((K, n, n), np.nan)
            for k in Rl:
                mk = results[(without(R, k), k)][t][0]
                cols = [j for j in Rl if j != k]
                inner[:, k, cols] = mk[:, cols]
            yR = np.where(np.isin(allrows, Rl), Y[:, t], np.nan)
            c_i = cfgs.index(config[name]) if config is not None else best_pair_config(inner, yR)
            cfg = cfgs[c_i]
            fold_cfg[(i, name)] = cfg
            # cross-fitted Platt on the inner directed margins of the chosen config
            a, b = platt_ridge_pairs(inner[c_i], Y[:, t])
            fold_platt[(i, name)] = (a, b)
            m_out, pf = results[(R, i)][t]
            row = m_out[c_i].copy()
            row[i] = np.nan
            dM[i, :, t] = row
            dP[i, :, t] = expit(a * row + b)
            sels.append(pair_fold_selection(pf, cfg, i, name))
    M = antisymmetric(np.moveaxis(dM, 2, 0))
    Pr = 0.5 * (np.moveaxis(dP, 2, 0) + 1.0 - np.swapaxes(np.moveaxis(dP, 2, 0), -1, -2))
    margins = np.moveaxis(M, 0, 2)
    prob = np.moveaxis(Pr, 0, 2)
    acc_d, cnt_d, neu_d = _accuracies(dM, Y, targets)
    configs = {name: Counter(fold_cfg[(i, name)] for i in range(n)).most_common(1)[0][0] for name in targets}
    platt = {name: tuple(np.median([fold_platt[(i, name)] for i in range(n)], axis=0).tolist())
             for name in targets}
    mode = "loocv-pair-default-nested" if config is None else "loocv-pair-default-fixed"
    return DefaultPairResult(mode, names, list(targets), margins, prob, Y, acc_d, cnt_d, configs, {},
                             platt, sels, warnings=warns, directed_margins=dM, directed_prob=dP,
                             fold_configs=fold_cfg, fold_platt=fold_platt, excluded=excluded,
                             neutral=neu_d)


@single_blas
def fit_pair_default(X: np.ndarray, P, targets: Sequence[str], *,
                     models: Optional[Sequence[str]] = None, count: int = 100, B: int = 300,
                     seed: int = 42, grid: PairGrid = PairGrid(), min_obs: float = MIN_OBS,
                     alpha: float = ALPHA, config: Optional[Mapping[str, DefaultPairConfig]] = None,
                     n_jobs: int = 1, kfold_above: int = KFOLD_ABOVE, kfold: int = KFOLD) -> DefaultPairResult:
    """Fit the ``default`` pair proxy per target on all models with a target value.

    Config: chosen by LOOCV over those models (same criterion as the nested inner loop), unless
    ``config`` fixes it; Platt (a, b) fitted on those LOOCV directed margins (each model's
    margins from a fit without its target, i.e. out-of-fold); weights from the fit on all of
    them (columns usable from the training rows alone). With more than ``kfold_above`` models the
    out-of-fold margins come from ``kfold``-fold instead of leave-one-out fits. ``proxies[target]`` is the stored
    linear form; ``directed_margins`` hold the in-sample margins computed from the embeddings
    (U·w for H, X̃Π·w for D-pt), which the proxy reproduces (tests: 1e-9). ``n_jobs``: threads
    over the out-of-fold training sets.
    """
    X, Pl, Y = default_inputs(X, P, targets)
    n, T = X.shape[0], len(targets)
    names = model_names(models, n)
    cfgs = grid.configs()
    envs = [bootstrap_means(Pl[t], B, seed + 31 * t) for t in range(T)]
    shared = None if models is None else names        # bases by model name (models.default.basis.shared_bases)
    # every ordered pair's soft label once per target: a training set's labels are a sub-matrix of it
    wins = [win_matrix(envs[t] if envs[t].shape[0] else Y[:, t][None, :]) for t in range(T)]
    allrows = np.arange(n)
    proxies: Dict[str, PairProxy] = {}
    dM = np.full((n, n, T), np.nan)
    sels, excluded, warns, chosen, platt = [], {}, [], {}, {}
    bases: Dict[Tuple[int, ...], TrainingBasis] = {}

    def basis(rows):
        key = tuple(int(r) for r in rows)
        b = bases.get(key)
        if b is None:
            b = bases[key] = training_basis(X, np.asarray(key, dtype=np.int64), np.zeros(0, np.int64), min_obs,
                                            names=shared)
        return b

    # LOOCV (K-fold above kfold_above) over each target's valid models: config choice and out-of-fold
    # Platt. A training set's basis is shared by the targets with the same training rows; only the scores
    # (configs x models) are kept per (training set, target), the (configs, n, n) margins built per target.
    train_rows = [np.flatnonzero(np.isfinite(Y[:, t])) for t in range(T)]
    users: Dict[Tuple[int, ...], List[Tuple[int, int]]] = {}
    for t in range(T):
        rows = train_rows[t]
        held_sets = kfold_sets(rows, kfold) if rows.size > kfold_above else [np.asarray([k]) for k in rows]
        for held in held_sets:
            key = tuple(int(r) for r in rows[~np.isin(rows, held)])
            users.setdefault(key, []).extend((t, int(k)) for k in held)

    def fold_scores(item):
        key, uses = item
        Rk = np.asarray(key, dtype=np.int64)
        bk = training_basis(X, Rk, np.zeros(0, np.int64), min_obs, names=shared)
        Xc = bk.centred_rows(X, allrows)
        held_of: Dict[int, List[int]] = {}
        for t, k in uses:                      # a K-fold set holds out many models: one fit per target
            held_of.setdefault(t, []).append(k)
        return [(t, Rk, held, PairTargetFit(bk, Y[Rk, t], pair_values(wins[t], Rk), Xc, grid, count, alpha)
                 .scores(allrows)) for t, held in held_of.items()]

    def job(item):
        key, uses = item
        if uses is None:                       # the final fit's basis (below), built beside the last folds
            basis(np.asarray(key, dtype=np.int64))
            return []
        return fold_scores(item)

    finals = [(key, None) for key in dict.fromkeys(tuple(int(r) for r in train_rows[t]) for t in range(T))]
    fold_results = [r for part in map_jobs(job, list(users.items()) + finals, n_jobs) for r in part]

    for t, name in enumerate(targets):
        rows = train_rows[t]
        excluded[name] = [names[j] for j in range(n) if j not in set(rows.tolist())]
        if excluded[name]:
            warns.append(f"{name}: no target value for {', '.join(excluded[name])} (not trained on)")
        loo = np.full((len(cfgs), n, n), np.nan)
        for tt, Rk, held, s in fold_results:
            if tt == t:
                for k in held:
                    loo[:, k, Rk] = s[:, [k]] - s[:, Rk]
        if config is not None:
            c_i = cfgs.index(config[name])
        else:
            c_i = best_pair_config(loo, np.where(np.isin(allrows, rows), Y[:, t], np.nan))
        cfg = cfgs[c_i]
        chosen[name] = cfg
        a, b = platt_ridge_pairs(loo[c_i], Y[:, t])
        platt[name] = (a, b)
        bs = basis(rows)
        pf = PairTargetFit(bs, Y[rows, t], pair_values(wins[t], rows), bs.centred_rows(X, allrows),
                           grid, count, alpha)
        idx, w, sel, wh, wd = pf.linear(cfg)
        # in-sample margins from the embeddings (independent of the proxy arithmetic)
        s_emb = embedding_scores(pf, sel, cfg, rows, allrows)
        dM[:, :, t] = s_emb[:, None] - s_emb[None, :]
        o = np.argsort(bs.rep_cols[idx], kind="stable")
        proxies[name] = PairProxy(target=name, cols=bs.rep_cols[idx][o], weight=w[o],
                                  centre=bs.rep_mu[idx][o], a=a, b=b, config=cfg,
                                  multiplicity=bs.mult[idx][o], trained_on=[names[j] for j in rows])
        sels.append(pair_fold_selection(pf, cfg, -1, name))
    dM[np.arange(n), np.arange(n), :] = np.nan
    prob = np.full_like(dM, np.nan)
    for t, name in enumerate(targets):
        a, b = platt[name]
        prob[:, :, t] = expit(a * dM[:, :, t] + b)
    acc_d, cnt_d, neu_d = _accuracies(dM, Y, targets)
    return DefaultPairResult("fit-pair-default", names, list(targets), dM, prob, Y, acc_d, cnt_d,
                             chosen, {}, platt, sels, warnings=warns, directed_margins=dM,
                             directed_prob=prob, excluded=excluded, neutral=neu_d, proxies=proxies)
