"""``default`` Pace method, Goal B (pairwise): the published pair model with the flaws of
spec §18–§20 fixed. Pure array functions (no I/O, no SQL).

Inputs as ``models.default``: X (n × S float64, NaN = missing, unfiltered), P (per target an
n × N_t float64 matrix, NaN = missing instance), target names. Truth = mean over a model's
observed target instances (NaN when none → that model is excluded from training and evaluation
of that target, listed in ``result.excluded``).

Per (training set, target) — everything from the training rows only:

* **Selection** = the ``default`` Goal A machinery (``default._Basis`` / ``_TargetFit``): usable
  columns (observed for ≥ 75 % of the training models and, in LOOCV, for the predicted model —
  its *source* row only), training-mean imputation and centring, zero-variance filter,
  deduplication of identical columns, inductive rank-truncated global SVD, stable float64
  orders, the strict joint budget |H ∪ D| = C (§4.4) with share q.
* **Embeddings**: H = rank-truncated SVD of the centred training block on the H set (training
  embeddings U = X̃·Π exactly, Π = V/S, no 1e-12 blow-up, §18 item 23); D-pt = least-squares
  coordinates in the inductive global basis, Π = pinv(V_sel, rcond 1e-8)ᵀ. Both sides use the
  same nc (nc_h = nc_d = nc).
* **Soft labels** (§6 identity, §20 item 6): per target, B paired bootstrap replicates over
  target instances (NaN-aware, ``default._bootstrap_envelope``, seed + 31·t); for the ordered
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
training column mean (``centre``), p_win = σ(a·margin + b).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
from scipy.special import expit

from .compat import FoldSelection, SideSelection
from .default import (MIN_OBS, RANK_RTOL, DefaultGrid, _Basis, _bootstrap_envelope, _map, _models,
                      _prep, _rank_trunc, _TargetFit)
from .pair import ALPHA, TIE_EPS, PairResult, pair_index, single_blas
from .selection import strict_joint_select

__all__ = [
    "PairGrid",
    "DefaultPairConfig",
    "PairProxy",
    "DefaultPairResult",
    "soft_labels_half",
    "fit_logit_newton",
    "sym_accuracy",
    "loocv_pair_default",
    "fit_pair_default",
]

PLATT_RIDGE = 1.0


@dataclass(frozen=True)
class DefaultPairConfig:
    """q: H share of the strict joint budget; nc: embedding rank of both sides; m: H weight."""

    q: float
    nc: int
    m: float


@dataclass(frozen=True)
class PairGrid:
    q: Tuple[float, ...] = (0.25, 0.5, 0.75)
    nc: Tuple[int, ...] = (1, 2, 3, 4)
    m: Tuple[float, ...] = (0.0, 0.5, 1.0)

    def configs(self) -> List[DefaultPairConfig]:
        """Loop order q → nc → m."""
        return [DefaultPairConfig(q, nc, m) for q in self.q for nc in self.nc for m in self.m]


@dataclass
class PairProxy:
    """Stored pair predictor of one target.

    cols: (k,) ascending indices into the columns of X; weight: (k,); centre: (k,) training
    column means (imputation of a missing score); margin(k, j) = Σ weight·(x̃_k − x̃_j);
    p_win(k, j) = σ(a·margin + b). multiplicity: size of each column's duplicate group.
    """

    target: str
    cols: np.ndarray
    weight: np.ndarray
    centre: np.ndarray
    a: float
    b: float
    config: DefaultPairConfig
    multiplicity: np.ndarray
    trained_on: List[str] = field(default_factory=list)

    def scores(self, X: np.ndarray) -> np.ndarray:
        """X: (h, S) raw scores (NaN → centre) → (h,) linear scores s, margin = s_k − s_j."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        D = X[:, self.cols] - self.centre
        D = np.where(np.isnan(D), 0.0, D)
        return D @ self.weight

    def margins(self, X: np.ndarray) -> np.ndarray:
        s = self.scores(X)
        return s[:, None] - s[None, :]

    def prob(self, X: np.ndarray) -> np.ndarray:
        return expit(self.a * self.margins(X) + self.b)


@dataclass
class DefaultPairResult(PairResult):
    """``PairResult`` (margins / prob are the symmetrised, averaged predictions) plus:
    directed_margins / directed_prob (n, n, T) — row k from fold k (LOOCV); fold_configs,
    fold_platt[(fold, target)]; excluded[target]; neutral[target] = number of evaluated
    unordered pairs with margin 0 (half credit); pairs[target] = evaluated unordered pairs."""

    directed_margins: Optional[np.ndarray] = None
    directed_prob: Optional[np.ndarray] = None
    fold_configs: Dict[Tuple[int, str], DefaultPairConfig] = field(default_factory=dict)
    fold_platt: Dict[Tuple[int, str], Tuple[float, float]] = field(default_factory=dict)
    excluded: Dict[str, List[str]] = field(default_factory=dict)
    neutral: Dict[str, int] = field(default_factory=dict)


# --------------------------------------------------------------------------- kernels
def soft_labels_half(Yb: np.ndarray) -> np.ndarray:
    """Yb: (B, m) replicate labels (NaN = undefined → tie) → f (m(m−1),) for ``pair_index`` pairs:
    P(y[a] > y[b]) + ½·P(tie). With B = 0 rows, use the observed means as one replicate."""
    Yb = np.asarray(Yb, dtype=np.float64)
    A, Bi = pair_index(Yb.shape[1])
    d = Yb[:, A] - Yb[:, Bi]
    win = np.where(np.isnan(d), 0.5, np.where(d > 0, 1.0, np.where(d < 0, 0.0, 0.5)))
    return win.mean(axis=0)


def fit_logit_newton(Dp: np.ndarray, f: np.ndarray, alpha: float = ALPHA, tol: float = 1e-12,
                     maxiter: int = 100) -> np.ndarray:
    """Exact minimiser of mean_p[softplus(Dp_p·w) − f_p·Dp_p·w] + (α/2)‖w‖² (Newton with
    step halving). Dp: (P, k), f: (P,) → w (k,). Strictly convex (α > 0), so unique."""
    Dp = np.asarray(Dp, dtype=np.float64)
    P, k = Dp.shape
    w = np.zeros(k)
    if k == 0 or P == 0:
        return w

    def loss(v):
        z = Dp @ v
        return float((np.logaddexp(0.0, z) - f * z).mean() + 0.5 * alpha * v @ v)

    cur = loss(w)
    for _ in range(maxiter):
        z = Dp @ w
        s = expit(z)
        g = Dp.T @ (s - f) / P + alpha * w
        if np.max(np.abs(g)) < tol:
            break
        H = (Dp * (s * (1 - s))[:, None]).T @ Dp / P + alpha * np.eye(k)
        step = np.linalg.solve(H, g)
        t = 1.0
        while True:
            nw = w - t * step
            nl = loss(nw)
            if nl <= cur + 1e-15 * max(1.0, abs(cur)) or t < 1e-10:
                break
            t *= 0.5
        if np.max(np.abs(nw - w)) < 1e-15:
            w = nw
            break
        w, cur = nw, nl
    return w


def _sym(M: np.ndarray) -> np.ndarray:
    """(…, n, n) directed margins → antisymmetric average (M − Mᵀ)/2 (NaN propagates)."""
    return 0.5 * (M - np.swapaxes(M, -1, -2))


def sym_accuracy(M: np.ndarray, y: np.ndarray, rows: Optional[np.ndarray] = None
                 ) -> Tuple[np.ndarray, int, np.ndarray]:
    """Accuracy of averaged directed margins over unordered pairs.

    M: (K, n, n) or (n, n) directed margins; y: (n,) truth (NaN = excluded); rows: models to
    evaluate (default all finite y). Pairs k < j with |y_k − y_j| ≥ 1e-9 and finite averaged
    margin; correct = sign agreement, margin 0 = half credit. Returns (acc (K,), pairs,
    neutral (K,)).
    """
    M = np.asarray(M, dtype=np.float64)
    single = M.ndim == 2
    if single:
        M = M[None]
    y = np.asarray(y, dtype=np.float64)
    n = y.size
    ok_row = np.isfinite(y) if rows is None else np.isin(np.arange(n), rows) & np.isfinite(y)
    S = _sym(M)
    dy = y[:, None] - y[None, :]
    iu = np.triu(np.ones((n, n), dtype=bool), 1)
    mask = iu & ok_row[:, None] & ok_row[None, :] & (np.abs(np.nan_to_num(dy)) >= TIE_EPS)
    mask = mask[None] & np.isfinite(S)
    win = (dy > 0)[None]
    credit = np.where(S == 0, 0.5, ((S > 0) == win).astype(np.float64))
    cnt = mask.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(cnt > 0, (credit * mask).sum(axis=(1, 2)) / np.maximum(cnt, 1), np.nan)
    neutral = ((S == 0) & mask).sum(axis=(1, 2))
    return acc, int(cnt.max()) if cnt.size else 0, neutral


def _sym_logloss(M: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Mean log-loss of σ(averaged margin) on the same unordered pairs (K,)."""
    S = _sym(M)
    n = y.size
    dy = y[:, None] - y[None, :]
    iu = np.triu(np.ones((n, n), dtype=bool), 1)
    mask = iu & np.isfinite(dy) & (np.abs(np.nan_to_num(dy)) >= TIE_EPS)
    mask = mask[None] & np.isfinite(S)
    z = np.where(mask, np.where(dy > 0, S, -S), 0.0)
    ll = np.logaddexp(0.0, -z)
    cnt = np.maximum(mask.sum(axis=(1, 2)), 1)
    return np.where(mask, ll, 0.0).sum(axis=(1, 2)) / cnt


def _platt_ridge(margins: np.ndarray, labels: np.ndarray, lam: float = PLATT_RIDGE) -> Tuple[float, float]:
    """Logistic fit of labels on a·margin + b, penalty (λ/2)·a² on the summed loss (Newton)."""
    mv = np.asarray(margins, dtype=np.float64)
    lab = np.asarray(labels, dtype=np.float64)
    if mv.size == 0 or not np.any(mv != 0):
        return 0.0, 0.0
    X = np.stack([mv, np.ones_like(mv)], axis=1)
    p = np.zeros(2)
    R = np.diag([lam, 1e-8])

    def loss(v):
        z = X @ v
        return float((np.logaddexp(0.0, z) - lab * z).sum() + 0.5 * v @ R @ v)

    cur = loss(p)
    for _ in range(100):
        s = expit(X @ p)
        g = X.T @ (s - lab) + R @ p
        if np.max(np.abs(g)) < 1e-10:
            break
        H = (X * (s * (1 - s))[:, None]).T @ X + R
        step = np.linalg.solve(H, g)
        t = 1.0
        while True:
            np_ = p - t * step
            nl = loss(np_)
            if nl <= cur + 1e-15 * max(1.0, abs(cur)) or t < 1e-10:
                break
            t *= 0.5
        p, cur = np_, nl
    return float(p[0]), float(p[1])


# --------------------------------------------------------------------------- per (basis, target)
class _PairTargetFit:
    """All grid configs of one (training basis, target): scores β·x̃ for every row of X.

    bs: ``default._Basis`` of the training rows; y_tr: (m,) training truth; f: (m(m−1),) soft
    labels; Xc: (n, p_rep) centred / imputed rows of all models on the basis' representatives.
    """

    def __init__(self, bs: _Basis, y_tr: np.ndarray, f: np.ndarray, Xc: np.ndarray, grid: PairGrid,
                 count: int, alpha: float):
        self.bs, self.grid, self.count, self.alpha = bs, grid, count, alpha
        self.tf = _TargetFit(bs, y_tr, np.zeros((0, bs.reps.size)), DefaultGrid(), count)
        self.f = f
        self.A, self.Bi = pair_index(bs.m)
        self.Xc = Xc
        self._h: Dict[Tuple[bytes, int], np.ndarray] = {}
        self._d: Dict[Tuple[bytes, int], np.ndarray] = {}
        self._sel: Dict[Tuple[float, int], object] = {}

    def _w(self, E_tr: np.ndarray) -> np.ndarray:
        Dp = E_tr[self.A] - E_tr[self.Bi]
        return fit_logit_newton(Dp, self.f, self.alpha)

    def select(self, q: float, nc: int):
        key = (q, nc)
        s = self._sel.get(key)
        if s is None:
            s = strict_joint_select(self.tf.order_h, self.tf.order_d(nc), self.count, q)
            self._sel[key] = s
        return s

    def beta_h(self, H: np.ndarray, nc: int) -> np.ndarray:
        """(|H|,) weights on centred scores of the H side."""
        key = (H.tobytes(), nc)
        b = self._h.get(key)
        if b is None:
            if H.size == 0:
                b = np.zeros(0)
            else:
                U, S, Vt = np.linalg.svd(self.bs.Bc[:, H], full_matrices=False)
                k = min(_rank_trunc(S), nc)
                if k == 0:
                    b = np.zeros(H.size)
                else:
                    Pi = Vt[:k].T / S[:k]
                    b = Pi @ self._w(U[:, :k])
            self._h[key] = b
        return b

    def beta_d(self, D: np.ndarray, nc: int) -> np.ndarray:
        key = (D.tobytes(), nc)
        b = self._d.get(key)
        if b is None:
            if D.size == 0 or self.bs.Vr.shape[0] == 0:
                b = np.zeros(D.size)
            else:
                Pi = np.linalg.pinv(self.bs.Vr[:nc, D].T, rcond=RANK_RTOL).T
                b = Pi @ self._w(self.bs.Bc[:, D] @ Pi)
            self._d[key] = b
        return b

    def linear(self, cfg: DefaultPairConfig):
        """(rep indices (k,), weights (k,), StrictSelection, βH, βD) of one config."""
        sel = self.select(cfg.q, cfg.nc)
        bh = self.beta_h(sel.H, cfg.nc) if cfg.m > 0 else np.zeros(sel.H.size)
        bd = self.beta_d(sel.D, cfg.nc) if cfg.m < 1 else np.zeros(sel.D.size)
        idx = np.union1d(sel.H, sel.D)
        w = np.zeros(idx.size)
        np.add.at(w, np.searchsorted(idx, sel.H), cfg.m * bh)
        np.add.at(w, np.searchsorted(idx, sel.D), (1.0 - cfg.m) * bd)
        return idx, w, sel, cfg.m * bh, (1.0 - cfg.m) * bd

    def scores(self, rows: np.ndarray) -> np.ndarray:
        """(K, |rows|) linear scores of every grid config for the given model rows."""
        cfgs = self.grid.configs()
        out = np.zeros((len(cfgs), rows.size))
        Xr = self.Xc[rows]
        for c_i, cfg in enumerate(cfgs):
            idx, w, *_ = self.linear(cfg)
            out[c_i] = Xr[:, idx] @ w if idx.size else 0.0
        return out


# --------------------------------------------------------------------------- LOOCV
def _soft_for(env: np.ndarray, rows: np.ndarray, y: np.ndarray) -> np.ndarray:
    if env.shape[0] == 0:
        return soft_labels_half(y[rows][None, :])
    return soft_labels_half(env[:, rows])


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
    X, Pl, Y = _prep(X, P, targets)
    n, T = X.shape[0], len(targets)
    names = _models(models, n)
    cfgs = grid.configs()
    K = len(cfgs)
    valid = [np.isfinite(Y[:, t]) for t in range(T)]
    envs = [_bootstrap_envelope(Pl[t], B, seed + 31 * t) for t in range(T)]
    jobs: Dict[Tuple[Tuple[int, ...], int], List[int]] = {}
    for t in range(T):
        for i in range(n):
            R = tuple(j for j in range(n) if j != i and valid[t][j])
            jobs.setdefault((R, i), []).append(t)
            for k in R:
                jobs.setdefault((tuple(j for j in R if j != k), k), []).append(t)
    keys = list(jobs)
    allrows = np.arange(n)

    def run(key):
        R, i = key
        rows = np.asarray(R, dtype=np.int64)
        bs = _Basis(X, rows, np.asarray([i]) if mask_new else np.zeros(0, np.int64), min_obs)
        Xc = bs.centred(X, allrows)
        out = {}
        for t in sorted(set(jobs[key])):
            pf = _PairTargetFit(bs, Y[rows, t], _soft_for(envs[t], rows, Y[:, t]), Xc, grid, count, alpha)
            s = pf.scores(allrows)  # (K, n)
            out[t] = (s[:, i][:, None] - s, pf)  # (K, n) margins of i vs every model
        return key, out

    results = dict(_map(run, keys, n_jobs))

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
            R = tuple(j for j in range(n) if j != i and valid[t][j])
            Rl = list(R)
            # inner LOOCV directed margins (K, n, n) among R
            inner = np.full((K, n, n), np.nan)
            for k in Rl:
                mk = results[(tuple(j for j in R if j != k), k)][t][0]
                cols = [j for j in Rl if j != k]
                inner[:, k, cols] = mk[:, cols]
            yR = np.where(np.isin(allrows, Rl), Y[:, t], np.nan)
            if config is not None:
                c_i = cfgs.index(config[name])
            else:
                acc, _, _ = sym_accuracy(inner, yR)
                ll = _sym_logloss(inner, yR)
                acc = np.where(np.isnan(acc), -np.inf, acc)
                best = np.flatnonzero(acc == acc.max())
                c_i = int(best[np.argmin(ll[best])])
            cfg = cfgs[c_i]
            fold_cfg[(i, name)] = cfg
            # cross-fitted Platt on the inner directed margins of the chosen config
            Mi = inner[c_i]
            dy = Y[:, t][:, None] - Y[:, t][None, :]
            ok = np.isfinite(Mi) & np.isfinite(dy) & (np.abs(np.nan_to_num(dy)) >= TIE_EPS)
            a, b = _platt_ridge(Mi[ok], (dy[ok] > 0).astype(np.float64))
            fold_platt[(i, name)] = (a, b)
            m_out, pf = results[(R, i)][t]
            row = m_out[c_i].copy()
            row[i] = np.nan
            dM[i, :, t] = row
            dP[i, :, t] = expit(a * row + b)
            sels.append(_fold_selection(pf, cfg, i, name))
    M = _sym(np.moveaxis(dM, 2, 0))
    Pr = 0.5 * (np.moveaxis(dP, 2, 0) + 1.0 - np.swapaxes(np.moveaxis(dP, 2, 0), -1, -2))
    margins = np.moveaxis(M, 0, 2)
    prob = np.moveaxis(Pr, 0, 2)
    acc_d, cnt_d, neu_d = {}, {}, {}
    for t, name in enumerate(targets):
        a_, c_, n_ = sym_accuracy(dM[:, :, t], Y[:, t])
        acc_d[name], cnt_d[name], neu_d[name] = float(a_[0]), c_, int(n_[0])
    acc_d["AVERAGE"] = float(np.mean([acc_d[t] for t in targets]))
    configs = {name: Counter(fold_cfg[(i, name)] for i in range(n)).most_common(1)[0][0] for name in targets}
    platt = {name: tuple(np.median([fold_platt[(i, name)] for i in range(n)], axis=0).tolist())
             for name in targets}
    mode = "loocv-pair-default-nested" if config is None else "loocv-pair-default-fixed"
    return DefaultPairResult(mode, names, list(targets), margins, prob, Y, acc_d, cnt_d, configs, {},
                             platt, sels, warnings=warns, directed_margins=dM, directed_prob=dP,
                             fold_configs=fold_cfg, fold_platt=fold_platt, excluded=excluded,
                             neutral=neu_d)


def _fold_selection(pf: _PairTargetFit, cfg: DefaultPairConfig, fold: int, target: str) -> FoldSelection:
    idx, w, sel, wh, wd = pf.linear(cfg)
    rc = pf.bs.rep_cols
    lim = 3 * pf.count + 2
    pos_h = {int(c): r for r, c in enumerate(pf.tf.order_h[:lim])}
    pos_d = {int(c): r for r, c in enumerate(pf.tf.order_d(cfg.nc)[:lim])}
    H = SideSelection(rc[sel.H], np.asarray([pos_h.get(int(c), -1) for c in sel.H], dtype=np.int64),
                      wh, int(cfg.nc))
    D = SideSelection(rc[sel.D], np.asarray([pos_d.get(int(c), -1) for c in sel.D], dtype=np.int64),
                      wd, int(cfg.nc))
    return FoldSelection(fold=fold, target=target, H=H, D=D)


# --------------------------------------------------------------------------- fit-all
@single_blas
def fit_pair_default(X: np.ndarray, P, targets: Sequence[str], *,
                     models: Optional[Sequence[str]] = None, count: int = 100, B: int = 300,
                     seed: int = 42, grid: PairGrid = PairGrid(), min_obs: float = MIN_OBS,
                     alpha: float = ALPHA, config: Optional[Mapping[str, DefaultPairConfig]] = None,
                     n_jobs: int = 1) -> DefaultPairResult:
    """Fit the ``default`` pair proxy per target on all models with a target value.

    Config: chosen by LOOCV over those models (same criterion as the nested inner loop), unless
    ``config`` fixes it; Platt (a, b) fitted on those LOOCV directed margins (each model's
    margins from a fit without its target, i.e. out-of-fold); weights from the fit on all of
    them (columns usable from the training rows alone). ``proxies[target]`` is the stored
    linear form; ``directed_margins`` hold the in-sample margins computed from the embeddings
    (U·w for H, X̃Π·w for D-pt), which the proxy reproduces (tests: 1e-9).
    """
    X, Pl, Y = _prep(X, P, targets)
    n, T = X.shape[0], len(targets)
    names = _models(models, n)
    cfgs = grid.configs()
    envs = [_bootstrap_envelope(Pl[t], B, seed + 31 * t) for t in range(T)]
    allrows = np.arange(n)
    proxies: Dict[str, PairProxy] = {}
    dM = np.full((n, n, T), np.nan)
    sels, excluded, warns, chosen, platt = [], {}, [], {}, {}
    bases: Dict[Tuple[int, ...], _Basis] = {}

    def basis(rows):
        key = tuple(int(r) for r in rows)
        b = bases.get(key)
        if b is None:
            b = bases[key] = _Basis(X, np.asarray(key, dtype=np.int64), np.zeros(0, np.int64), min_obs)
        return b

    for t, name in enumerate(targets):
        rows = np.flatnonzero(np.isfinite(Y[:, t]))
        excluded[name] = [names[j] for j in range(n) if j not in set(rows.tolist())]
        if excluded[name]:
            warns.append(f"{name}: no target value for {', '.join(excluded[name])} (not trained on)")
        # LOOCV over the valid models: config choice and out-of-fold Platt
        loo = np.full((len(cfgs), n, n), np.nan)
        for k in rows:
            Rk = rows[rows != k]
            bk = basis(Rk)
            pf = _PairTargetFit(bk, Y[Rk, t], _soft_for(envs[t], Rk, Y[:, t]), bk.centred(X, allrows),
                                grid, count, alpha)
            s = pf.scores(allrows)
            loo[:, k, Rk] = s[:, [k]] - s[:, Rk]
        if config is not None:
            c_i = cfgs.index(config[name])
        else:
            yv = np.where(np.isin(allrows, rows), Y[:, t], np.nan)
            acc, _, _ = sym_accuracy(loo, yv)
            ll = _sym_logloss(loo, yv)
            acc = np.where(np.isnan(acc), -np.inf, acc)
            best = np.flatnonzero(acc == acc.max())
            c_i = int(best[np.argmin(ll[best])])
        cfg = cfgs[c_i]
        chosen[name] = cfg
        Mi = loo[c_i]
        dy = Y[:, t][:, None] - Y[:, t][None, :]
        ok = np.isfinite(Mi) & np.isfinite(dy) & (np.abs(np.nan_to_num(dy)) >= TIE_EPS)
        a, b = _platt_ridge(Mi[ok], (dy[ok] > 0).astype(np.float64))
        platt[name] = (a, b)
        bs = basis(rows)
        pf = _PairTargetFit(bs, Y[rows, t], _soft_for(envs[t], rows, Y[:, t]), bs.centred(X, allrows),
                            grid, count, alpha)
        idx, w, sel, wh, wd = pf.linear(cfg)
        # in-sample margins from the embeddings (independent of the proxy arithmetic)
        s_emb = _embedding_scores(pf, sel, cfg, rows, allrows)
        dM[:, :, t] = s_emb[:, None] - s_emb[None, :]
        o = np.argsort(bs.rep_cols[idx], kind="stable")
        proxies[name] = PairProxy(target=name, cols=bs.rep_cols[idx][o], weight=w[o],
                                  centre=bs.rep_mu[idx][o], a=a, b=b, config=cfg,
                                  multiplicity=bs.mult[idx][o], trained_on=[names[j] for j in rows])
        sels.append(_fold_selection(pf, cfg, -1, name))
    dM[np.arange(n), np.arange(n), :] = np.nan
    prob = np.full_like(dM, np.nan)
    acc_d, cnt_d, neu_d = {}, {}, {}
    for t, name in enumerate(targets):
        a, b = platt[name]
        prob[:, :, t] = expit(a * dM[:, :, t] + b)
        a_, c_, n_ = sym_accuracy(dM[:, :, t], Y[:, t])
        acc_d[name], cnt_d[name], neu_d[name] = float(a_[0]), c_, int(n_[0])
    acc_d["AVERAGE"] = float(np.mean([acc_d[t] for t in targets]))
    return DefaultPairResult("fit-pair-default", names, list(targets), dM, prob, Y, acc_d, cnt_d,
                             chosen, {}, platt, sels, warnings=warns, directed_margins=dM,
                             directed_prob=prob, excluded=excluded, neutral=neu_d, proxies=proxies)


def _embedding_scores(pf: _PairTargetFit, sel, cfg: DefaultPairConfig, rows: np.ndarray,
                      allrows: np.ndarray) -> np.ndarray:
    """Scores from embeddings: training rows use the SVD's U (H side), others x̃·Π."""
    n = allrows.size
    s = np.zeros(n)
    bs = pf.bs
    Xc = pf.Xc
    if cfg.m > 0 and sel.H.size:
        U, S, Vt = np.linalg.svd(bs.Bc[:, sel.H], full_matrices=False)
        k = min(_rank_trunc(S), cfg.nc)
        if k:
            Pi = Vt[:k].T / S[:k]
            w = pf._w(U[:, :k])
            E = Xc[:, sel.H] @ Pi
            E[rows] = U[:, :k]
            s += cfg.m * (E @ w)
    if cfg.m < 1 and sel.D.size and bs.Vr.shape[0]:
        Pi = np.linalg.pinv(bs.Vr[:cfg.nc, sel.D].T, rcond=RANK_RTOL).T
        E = Xc[:, sel.D] @ Pi
        w = pf._w(E[rows])
        s += (1.0 - cfg.m) * (E @ w)
    return s
