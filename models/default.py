"""``default`` Pace method, Goal A (absolute scores): the published idea with the
flaws of spec §18–§20 fixed. Pure array functions (no I/O, no SQL).

Inputs: X (n × S float64, NaN = missing score, *unfiltered* — e.g.
``warehouse.matrices.Matrices.X``), P (per target an n × N_t float64 matrix,
NaN = missing instance), the target names. Outputs are ``AbsResult`` objects
(the subclass ``DefaultAbsResult`` adds per-fold configs, exclusions and the
linear proxies), so every table / report / plot written for ``compat`` works.

What is fixed, and how (spec §20 item numbers):

* (1) **Nested tuning.** ``loocv_abs_default(nested=True)``: for held-out model
  i and target t the configuration is chosen by an inner LOOCV over the
  training models only (objective 100·MAE − Spearman as in §9, first minimum in
  grid order). Model i's target values never enter its own configuration, its
  selection, its basis or its regression.
* (2) **Smaller grid.** q ∈ {0, .25, .5, .75, 1}, nc_h = nc_d ∈ {1, 2, 3, 4, 6, 8},
  m ∈ {0, .25, .5, .75, 1} with the §9.1 loop order and skips (492 configs;
  ``DefaultGrid``).
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
(``LinearProxy``).
"""
from __future__ import annotations

import contextlib
import functools
import math
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .autotune import first_best, strict_configs
from .compat import AbsConfig, AbsResult, FoldSelection, SideSelection
from .metrics import abs_objective, mae, pearson, r2, rowwise_spearman, spearman
from .selection import order_desc_stable, strict_joint_select
from .spearman import normalized_ranks

__all__ = [
    "RANK_RTOL",
    "MIN_OBS",
    "DefaultGrid",
    "LinearProxy",
    "DefaultAbsResult",
    "target_means",
    "masked_metrics",
    "loocv_abs_default",
    "fit_abs_default",
]

RANK_RTOL = 1e-8
MIN_OBS = 0.75
ENVELOPE = 0.25
_VAR_EPS = 1e-10


@dataclass(frozen=True)
class DefaultGrid:
    q: Tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
    nc: Tuple[int, ...] = (1, 2, 3, 4, 6, 8)
    m: Tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)

    def configs(self) -> np.ndarray:
        """(K, 4) (q_idx, nc_d_idx, m_idx, nc_h_idx) in §9.1 loop order with skips."""
        return strict_configs(self.q, self.nc, self.m)


@dataclass
class LinearProxy:
    """Stored predictor of one target: ŷ(z) = clip(intercept + Σ weight·(x_z[col] − centre), lo, hi).

    cols: (k,) indices into the columns of X (ascending); weight, centre: (k,);
    multiplicity: (k,) size of each column's duplicate group in the training
    block; side: (k,) 'H', 'D' or 'HD'; config: the AbsConfig used.
    """

    target: str
    cols: np.ndarray
    weight: np.ndarray
    centre: np.ndarray
    intercept: float
    lo: float
    hi: float
    config: AbsConfig
    multiplicity: np.ndarray
    side: np.ndarray
    trained_on: List[str] = field(default_factory=list)
    fill: Optional[np.ndarray] = None
    missing: str = "mask"

    def predict(self, X: np.ndarray) -> np.ndarray:
        """X: (h, S) raw scores (NaN = missing → ``fill`` when set, else the centre)."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        A = X[:, self.cols]
        if self.fill is not None:
            A = np.where(np.isnan(A), self.fill, A)
        D = A - self.centre
        D = np.where(np.isnan(D), 0.0, D)
        return np.clip(self.intercept + D @ self.weight, self.lo, self.hi)


@dataclass
class DefaultAbsResult(AbsResult):
    """``AbsResult`` plus: fold_configs[(fold, target)] → AbsConfig (nested choice),
    excluded[target] → models without a target value, proxies (fit only),
    coverage[(fold, target)] → fraction of the selected columns the predicted
    model has observed."""

    fold_configs: Dict[Tuple[int, str], AbsConfig] = field(default_factory=dict)
    excluded: Dict[str, List[str]] = field(default_factory=dict)
    proxies: Dict[str, LinearProxy] = field(default_factory=dict)
    fold_missing: Dict[Tuple[int, str], str] = field(default_factory=dict)
    missing: Dict[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------- helpers
def target_means(P: np.ndarray) -> np.ndarray:
    """Mean over observed instances per row; NaN when a row has no observed instance."""
    P = np.asarray(P, dtype=np.float64)
    obs = ~np.isnan(P)
    cnt = obs.sum(axis=1)
    s = np.where(obs, P, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, s / np.maximum(cnt, 1), np.nan)


def masked_metrics(pred: np.ndarray, Y: np.ndarray, targets: Sequence[str]) -> dict:
    """§10 metrics per target over the rows with a finite truth and prediction; AVERAGE row."""
    out = {}
    for t_i, t in enumerate(targets):
        p = np.asarray(pred[:, t_i], float)
        y = np.asarray(Y[:, t_i], float)
        ok = np.isfinite(p) & np.isfinite(y)
        p, y = p[ok], y[ok]
        out[t] = {"mae": mae(p, y), "spearman": spearman(p, y), "pearson": pearson(p, y),
                  "r2": r2(p, y), "n": int(ok.sum())}
    keys = ["mae", "spearman", "pearson", "r2"]
    out["AVERAGE"] = {k: float(np.mean([out[t][k] for t in targets])) for k in keys}
    return out


def _bootstrap_envelope(P: np.ndarray, B: int, seed: int) -> np.ndarray:
    """Per-model bootstrap replicate means (B, n), NaN-aware, paired over instances.

    Replicate b draws N instance indices with replacement (``default_rng(seed)``,
    one multinomial count vector per replicate); a model's replicate label is
    the mean of its observed drawn instances.
    """
    P = np.asarray(P, dtype=np.float64)
    n, N = P.shape
    if B <= 0 or N == 0:
        return np.zeros((0, n))
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(N, np.full(N, 1.0 / N), size=B).astype(np.float64)  # (B, N)
    obs = ~np.isnan(P)
    num = counts @ np.where(obs, P, 0.0).T
    den = counts @ obs.T.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.maximum(den, 1e-300), np.nan)


def _svd_wide(A: np.ndarray):
    """Thin SVD of a wide matrix (m ≪ p) via QR of Aᵀ (same result, ~2× faster than gesdd)."""
    m, p = A.shape
    if p <= 2 * m:
        return np.linalg.svd(A, full_matrices=False)
    Q, R = np.linalg.qr(A.T)
    U, S, Wt = np.linalg.svd(R.T)
    return U, S, Wt @ Q.T


def _rank_trunc(S: np.ndarray) -> int:
    if S.size == 0 or S[0] <= 0:
        return 0
    return int((S > S[0] * RANK_RTOL).sum())


class _Basis:
    """Everything a training set determines (target independent).

    rows: training rows; mask_rows: rows that must be observed on a usable column.
    cols: usable, non-constant columns (indices into X); mu: their training
    means; reps: indices into ``cols`` of the duplicate-group representatives
    (ascending); mult: group sizes; Bc: centred imputed training block on reps;
    Vr: (r, p_rep) right singular vectors of the full centred block restricted to
    the representatives; Z: normalised ranks of the training block on reps.
    """

    def __init__(self, X: np.ndarray, rows: np.ndarray, mask_rows: np.ndarray, min_obs: float):
        Xtr = X[rows]
        m = rows.size
        obs = ~np.isnan(Xtr)
        ok = obs.sum(axis=0) >= max(2, math.ceil(min_obs * m - 1e-9))
        if mask_rows.size:
            ok &= ~np.isnan(X[mask_rows]).any(axis=0)
        cols = np.flatnonzero(ok)
        Bk = Xtr[:, cols]
        mu = np.nanmean(Bk, axis=0) if cols.size else np.zeros(0)
        Bk = np.where(np.isnan(Bk), mu, Bk)
        Bc = Bk - mu
        keep = (Bc * Bc).mean(axis=0) > _VAR_EPS
        cols, mu, Bk, Bc = cols[keep], mu[keep], Bk[:, keep], Bc[:, keep]
        if cols.size:
            _, first, cnt = np.unique(Bk.T, axis=0, return_index=True, return_counts=True)
            o = np.argsort(first, kind="stable")
            reps, mult = first[o], cnt[o]
        else:
            reps, mult = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        self.rows, self.cols, self.mu = rows, cols, mu
        self.reps, self.mult = reps, mult
        self.rep_cols = cols[reps]
        self.rep_mu = mu[reps]
        self.Bc = Bc[:, reps]
        self.m = m
        if reps.size:
            sq = np.sqrt(mult.astype(np.float64))
            _, S, Vt = _svd_wide(self.Bc * sq)
            r = _rank_trunc(S)
            self.Vr = Vt[:r] / sq
            self.Z = normalized_ranks(Bk[:, reps])
        else:
            self.Vr = np.zeros((0, 0))
            self.Z = np.zeros((m, 0))
        self.lev = np.cumsum(self.Vr * self.Vr, axis=0)  # row c = leverage with nc = c + 1

    def centred(self, X: np.ndarray, rows: np.ndarray) -> np.ndarray:
        D = X[np.ix_(rows, self.rep_cols)] - self.rep_mu
        return np.where(np.isnan(D), 0.0, D)


@dataclass
class _SidePreds:
    pred: np.ndarray      # (h, K) predictions for new rows (intercept included), K nc values
    weights: List[np.ndarray]  # per nc value: (|sel|,) linear weights on centred raw scores


def _pearson_fit(E_tr: np.ndarray, E_new: np.ndarray, yc: np.ndarray, ybar: float, prefixes: bool,
                 nc_list: Sequence[int]):
    """Pearson-weighted 1-D OLS on embeddings E (centred). Returns (pred (h, K), coefs (k_emb, K))
    where coefs[:, j] maps an embedding row to (prediction − ȳ)."""
    k = E_tr.shape[1]
    norms = np.sqrt((E_tr * E_tr).sum(axis=0))
    ny = math.sqrt(float(yc @ yc))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where((norms > 0) & (ny > 0), (E_tr.T @ yc) / (norms * max(ny, 1e-300)), 0.0)
    if prefixes:
        W = np.zeros((k, len(nc_list)))
        for j, nc in enumerate(nc_list):
            kk = min(nc, k)
            r = rho[:kk]
            W[:kk, j] = r / (np.abs(r).sum() + 1e-12)
    else:
        W = (rho / (np.abs(rho).sum() + 1e-12))[:, None]
    x = E_tr @ W
    ss = (x * x).sum(axis=0)
    slope = np.where(ss > 1e-12, (x.T @ yc) / np.where(ss > 1e-12, ss, 1.0), 0.0)
    coefs = W * slope
    return ybar + E_new @ coefs, coefs


class _TargetFit:
    """Per (basis, target): orders and cached side fits; predictions for all configs."""

    def __init__(self, bs: _Basis, y_tr: np.ndarray, new_c: np.ndarray, grid: DefaultGrid, count: int):
        self.bs, self.grid, self.count = bs, grid, count
        self.y = np.asarray(y_tr, dtype=np.float64)
        self.ybar = float(self.y.mean())
        self.yc = self.y - self.ybar
        self.new_c = new_c  # (h, p_rep) centred new rows
        p = bs.reps.size
        if p:
            r = (bs.Z.T @ normalized_ranks(self.y)) / bs.m
            self.absr = np.abs(r)
        else:
            self.absr = np.zeros(0)
        self.order_h = order_desc_stable(self.absr)
        self._od: Dict[int, np.ndarray] = {}
        self._h: Dict[bytes, Tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def order_d(self, nc: int) -> np.ndarray:
        r = self.bs.lev.shape[0]
        key = min(nc, r)
        o = self._od.get(key)
        if o is None:
            lev = self.bs.lev[key - 1] if key > 0 else np.zeros(self.absr.size)
            o = order_desc_stable(lev * self.absr)
            self._od[key] = o
        return o

    def h_side(self, H: np.ndarray):
        """→ (pred (h, NH), colcoef (|H|, NH)) for nc_h in grid.nc."""
        key = H.tobytes()
        hit = self._h.get(key)
        if hit is None:
            nh = len(self.grid.nc)
            if H.size == 0:
                hit = (np.full((self.new_c.shape[0], nh), self.ybar), np.zeros((0, nh)))
            else:
                A = self.bs.Bc[:, H]
                U, S, Vt = np.linalg.svd(A, full_matrices=False)
                k = min(_rank_trunc(S), max(self.grid.nc))
                U, S, V = U[:, :k], S[:k], Vt[:k].T
                Pi = V / S
                pred, coefs = _pearson_fit(U, self.new_c[:, H] @ Pi, self.yc, self.ybar, True,
                                           self.grid.nc)
                hit = (pred, Pi @ coefs)
            self._h[key] = hit
        return hit

    def d_side(self, D: np.ndarray, nc: int):
        """→ (pred (h,), colcoef (|D|,))."""
        if D.size == 0 or self.bs.Vr.shape[0] == 0:
            return np.full(self.new_c.shape[0], self.ybar), np.zeros(D.size)
        Vs = self.bs.Vr[:nc, D].T  # (|D|, nc')
        Pi = np.linalg.pinv(Vs, rcond=RANK_RTOL).T
        E = self.bs.Bc[:, D] @ Pi
        pred, coefs = _pearson_fit(E, self.new_c[:, D] @ Pi, self.yc, self.ybar, False, (1,))
        return pred[:, 0], (Pi @ coefs)[:, 0]

    def all_configs(self):
        """Predictions of every grid config for the new rows: (K, h)."""
        g = self.grid
        NQ, ND, NH = len(g.q), len(g.nc), len(g.nc)
        h = self.new_c.shape[0]
        Hp = np.zeros((NQ, ND, NH, h))
        Dp = np.zeros((NQ, ND, h))
        for qi, q in enumerate(g.q):
            for di, nc in enumerate(g.nc):
                sel = strict_joint_select(self.order_h, self.order_d(nc), self.count, q)
                Hp[qi, di] = self.h_side(sel.H)[0].T
                Dp[qi, di] = self.d_side(sel.D, nc)[0]
        cfg = g.configs()
        mv = np.asarray(g.m)[cfg[:, 2]][:, None]
        Hc = Hp[cfg[:, 0], cfg[:, 1], cfg[:, 3]]
        Dc = Dp[cfg[:, 0], cfg[:, 1]]
        out = np.where(mv == 1.0, Hc, np.where(mv == 0.0, Dc, mv * Hc + (1 - mv) * Dc))
        return out

    def linear(self, cfg: AbsConfig):
        """Linear form of one config: (rep idx (k,), weight (k,), side (k,), H sel, D sel, nc_h used)."""
        sel = strict_joint_select(self.order_h, self.order_d(cfg.nc_d), self.count, cfg.q)
        hi = self.grid.nc.index(cfg.nc_h)
        wh = self.h_side(sel.H)[1][:, hi] if sel.H.size else np.zeros(0)
        wd = self.d_side(sel.D, cfg.nc_d)[1]
        m = float(cfg.m)
        idx = np.union1d(sel.H, sel.D)
        w = np.zeros(idx.size)
        side = np.full(idx.size, "", dtype=object)
        if m > 0 and sel.H.size:
            pos = np.searchsorted(idx, sel.H)
            w[pos] += m * wh
            side[pos] = "H"
        if m < 1 and sel.D.size:
            pos = np.searchsorted(idx, sel.D)
            w[pos] += (1 - m) * wd
            side[pos] = np.where(side[pos] == "H", "HD", "D")
        used = side != ""
        return idx[used], w[used], side[used], sel, (m * wh if sel.H.size else wh), (1 - m) * wd


def _cfg_of(grid: DefaultGrid, k: int) -> AbsConfig:
    qi, di, mi, hi = grid.configs()[k]
    return AbsConfig(m=float(grid.m[mi]), nc_h=int(grid.nc[hi]), nc_d=int(grid.nc[di]), q=float(grid.q[qi]))


def _cfg_index(grid: DefaultGrid, cfg: AbsConfig) -> int:
    for k in range(grid.configs().shape[0]):
        if _cfg_of(grid, k) == cfg:
            return k
    raise KeyError(cfg)


def _envelope(env: np.ndarray, rows: np.ndarray, y_tr: np.ndarray, score_range) -> Tuple[float, float]:
    vals = env[:, rows] if env.size else y_tr[None, :]
    vals = vals[np.isfinite(vals)]
    if vals.size == 0:
        vals = y_tr
    lo, hi = float(vals.min()), float(vals.max())
    R = hi - lo
    lo, hi = lo - ENVELOPE * R, hi + ENVELOPE * R
    if score_range is not None:
        lo, hi = max(lo, score_range[0]), min(hi, score_range[1])
    return lo, hi


def _blas_limit():
    """Single-threaded BLAS (threadpoolctl, if installed). Every matrix here is tiny (≤ 13 rows);
    multi-threaded OpenBLAS on top of our own worker threads only adds synchronisation (a
    13 × 16k QR: 13 ms single-threaded vs ~0.35 s with 2 threads on a loaded 2-core machine).
    Results are unchanged."""
    try:
        from threadpoolctl import threadpool_limits
    except Exception:  # pragma: no cover
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _single_blas(fn):
    @functools.wraps(fn)
    def wrapper(*a, **kw):
        with _blas_limit():
            return fn(*a, **kw)
    return wrapper


def _map(fn, items, n_jobs):
    if n_jobs is None or n_jobs <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=n_jobs) as ex:
        return list(ex.map(fn, items))


def _prep(X, P, targets):
    X = np.ascontiguousarray(X, dtype=np.float64)
    if isinstance(P, Mapping):
        Pl = [np.asarray(P[t], dtype=np.float64) for t in targets]
    else:
        Pl = [np.asarray(p, dtype=np.float64) for p in P]
    if len(Pl) != len(targets):
        raise ValueError("P must have one matrix per target")
    Y = np.stack([target_means(p) if p.shape[1] else np.full(X.shape[0], np.nan) for p in Pl], axis=1)
    return X, Pl, Y


# --------------------------------------------------------------------------- LOOCV
MISSING_MODES = ("mask", "zero")


def _objective(P: np.ndarray, y: np.ndarray, rank_weight: float) -> np.ndarray:
    """100·MAE − rank_weight·Spearman per row (rank_weight = 1: the §9 objective)."""
    if rank_weight == 1.0:
        return abs_objective(P, y)
    return abs_objective(P, y) + (1.0 - rank_weight) * rowwise_spearman(P, y)


def _fills(missing: str) -> Tuple[str, ...]:
    if missing == "auto":
        return MISSING_MODES
    if missing not in MISSING_MODES:
        raise ValueError(f"missing must be 'mask', 'zero' or 'auto', not {missing!r}")
    return (missing,)


def _filled(X: np.ndarray, fill: str) -> np.ndarray:
    return X if fill == "mask" else np.where(np.isnan(X), 0.0, X)


@_single_blas
def loocv_abs_default(X: np.ndarray, P, targets: Sequence[str], *,
                      models: Optional[Sequence[str]] = None, count: int = 100, B: int = 300,
                      seed: int = 42, nested: bool = True, n_jobs: int = 1,
                      grid: DefaultGrid = DefaultGrid(), min_obs: float = MIN_OBS,
                      mask_new: bool = True, score_range: Optional[Tuple[float, float]] = (0.0, 1.0),
                      config: Optional[Mapping[str, AbsConfig]] = None,
                      top_k: int = 10, missing: str = "mask",
                      rank_weight: float = 1.0) -> DefaultAbsResult:
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
    """
    X, Pl, Y = _prep(X, P, targets)
    n, T = X.shape[0], len(targets)
    fills = _fills(missing)
    Xf = {f: _filled(X, f) for f in fills}
    K = grid.configs().shape[0]
    F = len(fills)
    valid = [np.isfinite(Y[:, t]) for t in range(T)]
    envs = [_bootstrap_envelope(Pl[t], B, seed + 31 * t) for t in range(T)]
    if config is not None:
        allowed = {name: np.asarray([f * K + _cfg_index(grid, config[name]) for f in range(F)])
                   for name in targets}
    else:
        allowed = {name: np.arange(F * K) for name in targets}
    need_inner = nested and any(a.size > 1 for a in allowed.values())

    # jobs: (train rows, predicted row) → targets
    jobs: Dict[Tuple[Tuple[int, ...], int], List[int]] = {}
    for t in range(T):
        for i in range(n):
            R = tuple(j for j in range(n) if j != i and valid[t][j])
            jobs.setdefault((R, i), []).append(t)
            if need_inner:
                for k in R:
                    Rk = tuple(j for j in R if j != k)
                    jobs.setdefault((Rk, k), []).append(t)
    keys = list(jobs)

    def run(key):
        R, i = key
        rows = np.asarray(R, dtype=np.int64)
        newr = np.asarray([i])
        ts = sorted(set(jobs[key]))
        preds = {t: [] for t in ts}
        tfs = {t: [] for t in ts}
        bounds = {t: _envelope(envs[t], rows, Y[rows, t], score_range) for t in ts}
        for f in fills:
            bs = _Basis(Xf[f], rows, newr if mask_new else np.zeros(0, np.int64), min_obs)
            new_c = bs.centred(Xf[f], newr)
            for t in ts:
                tf = _TargetFit(bs, Y[rows, t], new_c, grid, count)
                lo, hi = bounds[t]
                preds[t].append(np.clip(tf.all_configs()[:, 0], lo, hi))
                tfs[t].append(tf)
        return key, {t: (np.concatenate(preds[t]), tfs[t]) for t in ts}

    results = dict(_map(run, keys, n_jobs))

    pred = np.full((n, T), np.nan)
    fold_cfg: Dict[Tuple[int, str], AbsConfig] = {}
    fold_fill: Dict[Tuple[int, str], str] = {}
    sels: List[FoldSelection] = []
    warns: List[str] = []
    excluded = {targets[t]: [(_models(models, n))[j] for j in range(n) if not valid[t][j]] for t in range(T)}
    for t, name in enumerate(targets):
        if excluded[name]:
            warns.append(f"{name}: no target value for {', '.join(excluded[name])} "
                         "(excluded from training and metrics)")
        al = allowed[name]
        outer = np.full((al.size, n), np.nan)
        for i in range(n):
            R = tuple(j for j in range(n) if j != i and valid[t][j])
            outer[:, i] = results[(R, i)][t][0][al]
        chosen_global = None
        if al.size == 1:
            chosen_global = 0
        elif not nested:
            v = valid[t]
            chosen_global = first_best(_objective(outer[:, v], Y[v, t], rank_weight))
        for i in range(n):
            R = tuple(j for j in range(n) if j != i and valid[t][j])
            if chosen_global is not None:
                k = chosen_global
                pred[i, t] = outer[k, i]
            else:
                inner = np.stack([results[(tuple(j for j in R if j != kk), kk)][t][0][al] for kk in R], axis=1)
                sc = _objective(inner, Y[np.asarray(R), t], rank_weight)
                k = first_best(sc)
                if top_k > 1:
                    best = np.argsort(np.where(np.isnan(sc), np.inf, sc), kind="stable")[:top_k]
                    pred[i, t] = float(outer[best, i].mean())
                else:
                    pred[i, t] = outer[k, i]
            fi, kc = divmod(int(al[k]), K)
            cfg = _cfg_of(grid, kc)
            fold_cfg[(i, name)] = cfg
            fold_fill[(i, name)] = fills[fi]
            tf = results[(R, i)][t][1][fi]
            sels.append(_fold_selection(tf, cfg, i, name))
    mode = "loocv-default-nested" if (nested and config is None) else (
        "loocv-default-fixed" if config is not None else "loocv-default-insample-tuned")
    configs = {}
    fill_of = {}
    for name in targets:
        c = Counter((fold_fill[(i, name)], fold_cfg[(i, name)]) for i in range(n))
        fill_of[name], configs[name] = c.most_common(1)[0][0]
    return DefaultAbsResult(mode, _models(models, n), list(targets), pred, Y, configs, sels,
                            masked_metrics(pred, Y, targets), warnings=warns, fold_configs=fold_cfg,
                            excluded=excluded, fold_missing=fold_fill, missing=fill_of)


def _models(models, n):
    return list(models) if models is not None else [f"model_{i}" for i in range(n)]


def _fold_selection(tf: _TargetFit, cfg: AbsConfig, fold: int, target: str) -> FoldSelection:
    idx, w, side, sel, wh, wd = tf.linear(cfg)
    bs = tf.bs
    pos_h = {int(c): r for r, c in enumerate(tf.order_h[: 3 * tf.count + 2])}
    od = tf.order_d(cfg.nc_d)
    pos_d = {int(c): r for r, c in enumerate(od[: 3 * tf.count + 2])}
    hrank = np.asarray([pos_h.get(int(c), -1) for c in sel.H], dtype=np.int64)
    drank = np.asarray([pos_d.get(int(c), -1) for c in sel.D], dtype=np.int64)
    H = SideSelection(bs.rep_cols[sel.H], hrank, wh if cfg.m > 0 else np.zeros(sel.H.size), int(cfg.nc_h))
    D = SideSelection(bs.rep_cols[sel.D], drank, wd if cfg.m < 1 else np.zeros(sel.D.size), int(cfg.nc_d))
    return FoldSelection(fold=fold, target=target, H=H, D=D)


# --------------------------------------------------------------------------- fit-all
@_single_blas
def fit_abs_default(X: np.ndarray, P, targets: Sequence[str], *,
                    models: Optional[Sequence[str]] = None, count: int = 100, B: int = 300,
                    seed: int = 42, n_jobs: int = 1, grid: DefaultGrid = DefaultGrid(),
                    min_obs: float = MIN_OBS, score_range: Optional[Tuple[float, float]] = (0.0, 1.0),
                    config: Optional[Mapping[str, AbsConfig]] = None, missing: str = "mask",
                    rank_weight: float = 1.0) -> DefaultAbsResult:
    """Fit the ``default`` proxy on all models with a target value (per target).

    The config per target is chosen by LOOCV over those models (``config``
    fixes it); the predictor is then fitted on all of them with columns usable
    from the training rows alone (no new-model mask). ``pred`` holds the
    in-sample predictions for every row (NaN-target rows are predicted too);
    ``proxies[target]`` is the stored linear form (``LinearProxy``) that
    reproduces them. missing ("mask" / "zero" / "auto") as in ``loocv_abs_default``; with
    "auto" the treatment is tuned together with the config; ``missing[target]`` records it and
    the proxy's ``fill`` (0 for "zero") says what replaces a missing score.
    """
    X, Pl, Y = _prep(X, P, targets)
    n, T = X.shape[0], len(targets)
    names = _models(models, n)
    fills = _fills(missing)
    if config is not None and not isinstance(config, Mapping):
        config = {name: config[t] for t, name in enumerate(targets)}
    if config is None or len(fills) > 1:
        tuned = loocv_abs_default(X, Pl, targets, models=names, count=count, B=B, seed=seed,
                                  nested=False, n_jobs=n_jobs, grid=grid, min_obs=min_obs,
                                  mask_new=False, score_range=score_range, config=config,
                                  missing=missing, rank_weight=rank_weight)
        config = {t: tuned.configs[t] for t in targets}
        fill_of = dict(tuned.missing)
        # in-sample-tuned mode: every fold has the same config
    else:
        fill_of = {t: fills[0] for t in targets}
    Xf = {f: _filled(X, f) for f in set(fill_of.values())}
    envs = [_bootstrap_envelope(Pl[t], B, seed + 31 * t) for t in range(T)]
    pred = np.full((n, T), np.nan)
    proxies: Dict[str, LinearProxy] = {}
    sels = []
    excluded = {}
    warns = []
    bases: Dict[Tuple[str, Tuple[int, ...]], _Basis] = {}
    for t, name in enumerate(targets):
        rows = np.flatnonzero(np.isfinite(Y[:, t]))
        excluded[name] = [names[j] for j in range(n) if j not in set(rows.tolist())]
        if excluded[name]:
            warns.append(f"{name}: no target value for {', '.join(excluded[name])} (not trained on)")
        fl = fill_of[name]
        key = (fl, tuple(rows.tolist()))
        bs = bases.get(key)
        if bs is None:
            bs = bases[key] = _Basis(Xf[fl], rows, np.zeros(0, np.int64), min_obs)
        tf = _TargetFit(bs, Y[rows, t], bs.centred(Xf[fl], np.arange(n)), grid, count)
        cfg = config[t] if not isinstance(config, Mapping) else config[name]
        idx, w, side, sel, wh, wd = tf.linear(cfg)
        lo, hi = _envelope(envs[t], rows, Y[rows, t], score_range)
        o = np.argsort(bs.rep_cols[idx], kind="stable")
        prox = LinearProxy(target=name, cols=bs.rep_cols[idx][o], weight=w[o], centre=bs.rep_mu[idx][o],
                           intercept=tf.ybar, lo=lo, hi=hi, config=cfg, multiplicity=bs.mult[idx][o],
                           side=side[o], trained_on=[names[j] for j in rows],
                           fill=None if fl == "mask" else np.zeros(idx.size), missing=fl)
        proxies[name] = prox
        pred[:, t] = prox.predict(X)
        sels.append(_fold_selection(tf, cfg, -1, name))
    return DefaultAbsResult("fit-default", names, list(targets), pred, Y, dict(config), sels,
                            masked_metrics(pred, Y, targets), warnings=warns, excluded=excluded,
                            proxies=proxies, missing=fill_of)
