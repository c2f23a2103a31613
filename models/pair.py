"""``compat`` Pace pipeline, Goal B (pairwise), as pure array functions (no I/O).

Reproduces the published ``pair --strict-budget --pin-task-a-selection``
pipeline (spec ``pace-method.md`` §6 pairwise pooling, §8, §9.3, §10, §11.2,
§12, §14, §16, §18 items 7/13/14/15/23/24):

* ``loocv_pair_frozen``   — frozen ``TASK_B_CONFIGS_PINNED_A`` (strict, pin-A: both
  halves of Goal A's strict frozen selection are pinned),
* ``loocv_pair_autotune`` — ``--auto-tune`` (§9.3): Goal A's strict auto-tune is
  re-run (``compat.loocv_abs_autotune``); a half is pinned only if Goal A's tuned
  m > 0 (H) / < 1 (D-pt), otherwise Goal B silently uses a fresh top-C for that
  side (§18 item 7, reproduced on purpose); then margins for nc = 1..nc_max are
  cached and the sweep m → nc_h → nc_d (single dummy q) maximises pair accuracy
  (strict ``>``, first wins),
* ``fit_pair`` — ``fit-pair --strict-budget --pin-task-a-selection`` (in-sample,
  all models), with the §14.1 Goal B weights (margin(k vs j) =
  Σ weight_s (X[k, s] − X[j, s])) and a linear proxy per target.

Inputs: X (n × S float64, the §2.4-filtered source matrix), Y (n × T target
means, float32-derived), P (per target an n × N_t float32 per-instance matrix,
list in ``targets`` order or dict), target names.

Per (fold i, target t) and strategy side (H / D-pt): training embeddings
E_tr (13 × k) and the held-out row (§5, §5.3); ordered pairs (a, b), a ≠ b, of the
training models in row-major order (156); labels from the same bootstrap
replicates as Goal A (seed + 997·i + 31·t; tie → label 0). The pooled fit over
B·156 rows is replaced by the exactly equivalent 156-row fit against soft labels
f_p = fraction of replicates with y_b[a] > y_b[b] (§6 last paragraph; identical
objective, hence identical optimum — checked against the explicit tiled fit in
the tests). Logistic: no intercept, mean BCE + (α/2)‖w‖², α = 0.1, L-BFGS-B from
0, analytic gradient, ≤ 200 iterations, scipy default tolerances. All labels
equal → skipped, margins stay 0 (§18 item 14: a zero margin is a predicted
loss for the held-out model). margin[i, j] = (u_i − u_j)·w; mixing
m·margin_H + (1 − m)·margin_D; predicted winner k iff margin > 0.

Pair accuracy (§10): directed pairs k ≠ j with |Y[k] − Y[j]| ≥ 1e-9 and a
non-NaN margin; correct iff (margin > 0) == (Y[k] > Y[j]); AVERAGE unweighted.
Platt (§8): per target σ(a·margin + b) fitted in-sample on the same pairs
(L-BFGS-B from (1, 0)) — output only.
"""
from __future__ import annotations

import contextlib
import functools
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from .autotune import M_GRID, nc_grid
from .compat import (STRICT_DEFAULT_Q, AbsConfig, FoldSelection, OrderFn, SideSelection, _Target,
                     _Train, _models, _prepare, compat_order, frozen_abs_configs, loocv_abs_autotune)
from .embeddings import global_projection, local_basis
from .pooling import bootstrap_labels, fit_seed, loocv_seed
from .selection import leverage_table
from .spearman import spearman_columns

__all__ = [
    "ALPHA",
    "MAXITER",
    "PairConfig",
    "TASK_B_CONFIGS",
    "TASK_B_CONFIGS_PINNED_A",
    "DEFAULT_B_CONFIG",
    "frozen_pair_configs",
    "pair_index",
    "soft_labels",
    "pooled_design",
    "fit_logit_soft",
    "fit_logit_pooled",
    "fit_ols_pooled",
    "pair_accuracy",
    "pair_accuracy_many",
    "platt_fit",
    "platt_prob",
    "pair_sweep_configs",
    "PairLinear",
    "PairResult",
    "loocv_pair_frozen",
    "loocv_pair_autotune",
    "fit_pair",
]

ALPHA = 0.1
MAXITER = 200
TIE_EPS = 1e-9


def _blas_limit():
    """Single-threaded BLAS (threadpoolctl, if installed): every operation here is tiny
    (13 × ≤100 SVDs, 156 × ≤10 logistic fits); multi-threaded BLAS only adds synchronisation
    overhead (×3 wall time measured on a loaded 2-core machine). Results are unchanged."""
    try:
        from threadpoolctl import threadpool_limits
    except Exception:  # pragma: no cover
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def single_blas(fn):
    """Decorator: run ``fn`` under ``_blas_limit()``."""
    @functools.wraps(fn)
    def wrapper(*a, **k):
        with _blas_limit():
            return fn(*a, **k)
    return wrapper


# --------------------------------------------------------------------------- configs
@dataclass(frozen=True)
class PairConfig:
    """Goal B per-target config: margin = m·H(nc_h) + (1 − m)·D-pt(nc_d); reg 'logit' or 'ols'."""

    m: float
    nc_h: int
    nc_d: int
    reg: str = "logit"


def _b(m, nc_h, nc_d, reg="logit"):
    return PairConfig(m=m, nc_h=nc_h, nc_d=nc_d, reg=reg)


#: §16 TASK_B_CONFIGS (C = 100 only)
TASK_B_CONFIGS: Dict[int, Dict[str, PairConfig]] = {
    100: {"gaia": _b(0.9, 7, 3), "swebench": _b(0.8, 10, 2),
          "swebench_multimodal": _b(0.8, 9, 4), "swtbench": _b(0.7, 5, 10)},
}
#: §16 TASK_B_CONFIGS_PINNED_A
TASK_B_CONFIGS_PINNED_A: Dict[int, Dict[str, PairConfig]] = {
    100: {"gaia": _b(0.7, 3, 7), "swebench": _b(0.9, 1, 10),
          "swebench_multimodal": _b(0.9, 9, 3), "swtbench": _b(0.2, 6, 10)},
    150: {"gaia": _b(0.8, 9, 6), "swebench": _b(0.0, 1, 3),
          "swebench_multimodal": _b(0.9, 10, 9), "swtbench": _b(0.3, 7, 1)},
    50: {"gaia": _b(0.9, 1, 8), "swebench": _b(0.1, 3, 2),
         "swebench_multimodal": _b(0.9, 10, 2), "swtbench": _b(0.9, 6, 3)},
}
#: §11 fallback for targets missing from the Goal B table
DEFAULT_B_CONFIG = PairConfig(m=0.5, nc_h=2, nc_d=6, reg="ols")


def frozen_pair_configs(count: int, targets: Sequence[str], pin_a: bool = True,
                        m: Optional[float] = None, nc_h: Optional[int] = None,
                        nc_d: Optional[int] = None) -> Tuple[Dict[str, PairConfig], Optional[str]]:
    """Resolve Goal B configs (§11, §16): the pin-A table or TASK_B_CONFIGS, nearest count
    (ties → smaller) with a warning; overrides apply to every target."""
    table_all = TASK_B_CONFIGS_PINNED_A if pin_a else TASK_B_CONFIGS
    warn = None
    if count in table_all:
        key = count
    else:
        key = min(table_all, key=lambda c: (abs(c - count), c))
        warn = f"no Goal B configs for count={count}; using nearest count {key}"
    table = table_all[key]
    out = {}
    for t in targets:
        c = table.get(t, DEFAULT_B_CONFIG)
        out[t] = PairConfig(m=c.m if m is None else float(m), nc_h=c.nc_h if nc_h is None else int(nc_h),
                            nc_d=c.nc_d if nc_d is None else int(nc_d), reg=c.reg)
    return out, warn


# --------------------------------------------------------------------------- kernels
def pair_index(m: int) -> Tuple[np.ndarray, np.ndarray]:
    """Ordered pairs (a, b), a ≠ b, of m items in row-major order → (A (m(m−1),), Bi (m(m−1),))."""
    a, b = np.meshgrid(np.arange(m), np.arange(m), indexing="ij")
    off = a != b
    return a[off], b[off]


def soft_labels(Yb: np.ndarray) -> np.ndarray:
    """Soft labels of the ordered training pairs.

    Yb: (B, m) bootstrap labels (row b = replicate b). Returns f (m(m−1),):
    f_p = fraction of replicates with y_b[a] − y_b[b] > 0 (strict; a tie is a
    loss for a, §8), pairs in ``pair_index`` order.
    """
    Yb = np.asarray(Yb)
    A, Bi = pair_index(Yb.shape[1])
    return (Yb[:, A] - Yb[:, Bi] > 0).mean(axis=0)


def pooled_design(E_tr: np.ndarray, Yb: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The published explicit pool (§6): D_pool (B·m(m−1), k) = pair differences tiled B
    times, labels (B·m(m−1),) replicate-major, 1 iff dy > 0. Test/reference use only."""
    A, Bi = pair_index(E_tr.shape[0])
    Dp = E_tr[A] - E_tr[Bi]
    B = Yb.shape[0]
    lab = (Yb[:, A] - Yb[:, Bi] > 0).astype(np.float64).ravel()
    return np.tile(Dp, (B, 1)), lab


def _softplus(z):
    return np.logaddexp(0.0, z)


def _logit_fun(D: np.ndarray, f: np.ndarray, alpha: float):
    N = D.shape[0]

    def fun(w):
        z = D @ w
        loss = float((_softplus(z) - f * z).sum() / N + 0.5 * alpha * (w @ w))
        g = D.T @ (expit(z) - f) / N + alpha * w
        return loss, g

    return fun


def _lbfgs(fun, k: int, maxiter: int) -> np.ndarray:
    res = minimize(fun, np.zeros(k), jac=True, method="L-BFGS-B", options={"maxiter": int(maxiter)})
    return np.asarray(res.x, dtype=np.float64)


def _degenerate(labels: np.ndarray) -> bool:
    """All pooled hard labels equal (given soft labels: all 0 or all 1)."""
    return bool(np.all(labels == 0.0) or np.all(labels == 1.0))


def fit_logit_soft(Dp: np.ndarray, f: np.ndarray, alpha: float = ALPHA,
                   maxiter: int = MAXITER) -> Tuple[np.ndarray, bool]:
    """No-intercept ridge logistic on pair differences with soft labels.

    Dp: (P, k) pair-difference rows; f: (P,) soft labels in [0, 1].
    Minimises mean_p [softplus(Dp_p·w) − f_p·Dp_p·w] + (α/2)‖w‖² with L-BFGS-B
    from 0 (analytic gradient). Equal to the pooled hard-label objective when
    f = ``soft_labels`` and the pool tiles Dp (§6). Returns (w (k,), skipped);
    skipped = all hard labels equal (f all 0 or all 1) → w = 0 (§8).
    """
    Dp = np.asarray(Dp, dtype=np.float64)
    f = np.asarray(f, dtype=np.float64)
    k = Dp.shape[1]
    if k == 0 or _degenerate(f):
        return np.zeros(k), True
    return _lbfgs(_logit_fun(Dp, f, alpha), k, maxiter), False


def fit_logit_pooled(D_pool: np.ndarray, labels: np.ndarray, alpha: float = ALPHA,
                     maxiter: int = MAXITER) -> Tuple[np.ndarray, bool]:
    """The published explicit fit on the pooled rows (B·P × k, hard labels). Reference/test only."""
    return fit_logit_soft(D_pool, labels, alpha, maxiter)


def fit_ols_pooled(Dp: np.ndarray, Yb: np.ndarray) -> Tuple[np.ndarray, float]:
    """§8 alternative reg='ols' (explicit pool): w = L1-normalised Spearman weights of the pooled
    D columns vs dy_pool, slope through the origin on x = D_pool·w. Returns (w (k,), slope);
    slope 0 when Σx² < 1e-12. The margin is slope·(u_i − u_j)·w."""
    m = Yb.shape[1]
    A, Bi = pair_index(m)
    B = Yb.shape[0]
    D_pool = np.tile(np.asarray(Dp, dtype=np.float64), (B, 1))
    dy = (Yb[:, A] - Yb[:, Bi]).astype(np.float64).ravel()
    rho = spearman_columns(D_pool, dy).astype(np.float64)
    w = rho / (np.abs(rho).sum() + 1e-12)
    x = D_pool @ w
    sx = float(x @ x)
    slope = float(x @ dy) / sx if sx >= 1e-12 else 0.0
    return w, slope


def pair_accuracy(margins: np.ndarray, y: np.ndarray) -> Tuple[float, int]:
    """§10 pair accuracy of one target.

    margins: (n, n) directed margins (row k = held-out, column j = other; NaN =
    not predicted); y: (n,) truth. Counts k ≠ j with |y_k − y_j| ≥ 1e-9 and a
    non-NaN margin; correct iff (margin > 0) == (y_k > y_j). Returns
    (accuracy, count) (NaN accuracy when count = 0).
    """
    acc, cnt = pair_accuracy_many(np.asarray(margins)[None], y)
    return float(acc[0]), int(cnt[0])


def _pair_mask(y: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y, dtype=np.float64)
    dy = y[:, None] - y[None, :]
    n = y.size
    mask = (np.abs(dy) >= TIE_EPS) & ~np.eye(n, dtype=bool)
    return mask, dy > 0


def pair_accuracy_many(M: np.ndarray, y: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Vectorised ``pair_accuracy`` over K margin matrices M (K, n, n) → (acc (K,), count (K,))."""
    mask, win = _pair_mask(y)
    ok = mask[None] & ~np.isnan(M)
    correct = ((M > 0) == win[None]) & ok
    cnt = ok.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(cnt > 0, correct.sum(axis=(1, 2)) / np.maximum(cnt, 1), np.nan)
    return acc, cnt


def platt_fit(margins: np.ndarray, y: np.ndarray) -> Tuple[float, float]:
    """§8 Platt parameters (a, b) on directed pairs k ≠ j, |Δy| ≥ 1e-9, finite margin.

    Minimises Σ softplus(a·m + b) − label·(a·m + b) (label = 1 iff y_k > y_j)
    with L-BFGS-B from (1, 0). As published, no gradient is supplied (SciPy's
    2-point finite differences; this reproduces the reference parameters,
    including (0, 0) on the blown-up margins of §18 item 23, where the line
    search aborts at the origin). Returns (0, 0) when there are no usable
    pairs or the optimiser returns a non-finite point.
    """
    mask, win = _pair_mask(y)
    M = np.asarray(margins, dtype=np.float64)
    ok = mask & np.isfinite(M)
    mv = M[ok]
    lab = win[ok].astype(np.float64)
    if mv.size == 0:
        return 0.0, 0.0

    def fun(p):
        z = p[0] * mv + p[1]
        return float((_softplus(z) - lab * z).sum())

    with np.errstate(over="ignore", invalid="ignore"):
        res = minimize(fun, np.array([1.0, 0.0]), method="L-BFGS-B")
    a, b = float(res.x[0]), float(res.x[1])
    if not (math.isfinite(a) and math.isfinite(b)):
        return 0.0, 0.0
    return a, b


def platt_prob(margins: np.ndarray, a: float, b: float) -> np.ndarray:
    """σ(a·margin + b) (NaN where the margin is NaN)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return expit(a * np.asarray(margins, dtype=np.float64) + b)


def pair_sweep_configs(ncs: Sequence[int], m_grid: Sequence[float]) -> np.ndarray:
    """§9.3 loop (single dummy q, both sides full C): m → nc_h → nc_d with the skips
    nc_h ≠ first when m = 0, nc_d ≠ first when m = 1. (K, 3) (m_idx, nc_h_idx, nc_d_idx)."""
    rows = []
    for mi, m in enumerate(m_grid):
        for hi in range(len(ncs)):
            if m == 0.0 and hi != 0:
                continue
            for di in range(len(ncs)):
                if m == 1.0 and di != 0:
                    continue
                rows.append((mi, hi, di))
    return np.asarray(rows, dtype=np.int64).reshape(-1, 3)


def _mix_margins(m: float, h: np.ndarray, d: np.ndarray) -> np.ndarray:
    if m == 0.0:
        return d
    if m == 1.0:
        return h
    return m * h + (1.0 - m) * d


# --------------------------------------------------------------------------- results
@dataclass
class PairLinear:
    """Linear pair proxy of one target (§14.1 Goal B form).

    cols: (k,) ascending indices into X; weight: (k,) so that
    margin(k vs j) = Σ weight·(X[k, cols] − X[j, cols]); p_win = σ(a·margin + b).
    """

    target: str
    cols: np.ndarray
    weight: np.ndarray
    a: float
    b: float
    config: PairConfig

    def margin(self, xk: np.ndarray, xj: np.ndarray) -> np.ndarray:
        """xk, xj: (h, S) or (S,) rows → (h,) margins."""
        xk = np.atleast_2d(np.asarray(xk, dtype=np.float64))
        xj = np.atleast_2d(np.asarray(xj, dtype=np.float64))
        return (xk[:, self.cols] - xj[:, self.cols]) @ self.weight

    def margins(self, X: np.ndarray) -> np.ndarray:
        """All pairs of the rows of X: (n, n) with entry [k, j] = margin(k vs j)."""
        s = np.asarray(X, dtype=np.float64)[:, self.cols] @ self.weight
        return s[:, None] - s[None, :]


@dataclass
class PairResult:
    """Goal B result.

    margins, prob: (n, n, T) float64 — [k, j, t] = margin / Platt probability of
    "k beats j" (row k = held-out model in LOOCV); NaN where not predicted
    (diagonal). actual: (n, T) truth. accuracy: target → accuracy and
    "AVERAGE"; count: target → number of scored directed pairs. configs:
    target → PairConfig; a_configs: target → Goal A AbsConfig whose selection
    was pinned; platt: target → (a, b); selections: per (fold, target)
    ``FoldSelection`` with §14.1 Goal B weights; pinned: target → (H pinned,
    D pinned); sweep: target → best accuracy (auto-tune); skipped: list of
    (fold, target, side, nc) fits skipped as degenerate; proxies: fit-all only.
    """

    mode: str
    models: List[str]
    targets: List[str]
    margins: np.ndarray
    prob: np.ndarray
    actual: np.ndarray
    accuracy: Dict[str, float]
    count: Dict[str, int]
    configs: Dict[str, PairConfig]
    a_configs: Dict[str, AbsConfig]
    platt: Dict[str, Tuple[float, float]]
    selections: List[FoldSelection]
    pinned: Dict[str, Tuple[bool, bool]] = field(default_factory=dict)
    sweep: Dict[str, float] = field(default_factory=dict)
    skipped: List[Tuple[int, str, str, int]] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    proxies: Dict[str, PairLinear] = field(default_factory=dict)

    def pred_winner(self) -> np.ndarray:
        """(n, n, T) bool: True where the row model is predicted to beat the column model."""
        return self.margins > 0


# --------------------------------------------------------------------------- per (fold, target)
class _PairSide:
    """Cached Goal B fits of one (training set, target).

    Keys: ('H', column bytes, k) / ('D', column bytes, nc_d). Each entry:
    (w (k,), Π (|cols|, k), E (n, k) embedding table, skipped).
    """

    def __init__(self, tr: _Train, X: np.ndarray, Yb: np.ndarray, alpha: float, maxiter: int,
                 reg: str = "logit"):
        self.tr, self.X, self.Yb = tr, X, Yb
        self.alpha, self.maxiter = alpha, maxiter
        self.f = soft_labels(Yb)
        self.A, self.Bi = pair_index(tr.train.size)
        self.degenerate = _degenerate(self.f)
        self._bases = {}
        self._fits = {}
        n = X.shape[0]
        self.n = n

    def _fit(self, E: np.ndarray, reg: str):
        E_tr = E[self.tr.train]
        Dp = E_tr[self.A] - E_tr[self.Bi]
        if reg == "ols":
            if self.degenerate:
                return np.zeros(E.shape[1]), True
            w, slope = fit_ols_pooled(Dp, self.Yb)
            return w * slope, slope == 0.0
        return fit_logit_soft(Dp, self.f, self.alpha, self.maxiter)

    def h(self, H: np.ndarray, nc: int, reg: str = "logit"):
        if H.size == 0:
            return None
        kb = H.tobytes()
        basis = self._bases.get(kb)
        if basis is None:
            basis = local_basis(self.tr.Xtr[:, H], 1 << 30)  # all singular values; sliced per nc
            self._bases[kb] = basis
        k = min(int(nc), basis.k)
        key = ("H", kb, k, reg)
        hit = self._fits.get(key)
        if hit is None:
            tr = self.tr
            Pi = basis.proj[:, :k]
            E = np.zeros((self.n, k))
            E[tr.train] = basis.U[:, :k]
            out = tr.new_in_train < 0
            if out.any():
                rows = tr.new[out]
                E[rows] = (self.X[np.ix_(rows, H)] @ basis.V[:, :k]) / (basis.S[:k] + 1e-12)
            w, skipped = self._fit(E, reg)
            hit = (w, Pi, E, skipped, k)
            self._fits[key] = hit
        return hit

    def d(self, D: np.ndarray, nc: int, reg: str = "logit"):
        if D.size == 0:
            return None
        key = ("D", D.tobytes(), int(nc), reg)
        hit = self._fits.get(key)
        if hit is None:
            Pi = global_projection(self.tr.Vt, D, nc)
            E = self.X[:, D] @ Pi
            w, skipped = self._fit(E, reg)
            hit = (w, Pi, E, skipped, int(nc))
            self._fits[key] = hit
        return hit

    def margins(self, hit) -> np.ndarray:
        """(h, n): rows = new models, [r, j] = (E[new_r] − E[j])·w (0 when the side is empty)."""
        new = self.tr.new
        if hit is None:
            return np.zeros((new.size, self.n))
        w, E = hit[0], hit[2]
        s = E @ w
        return s[new][:, None] - s[None, :]


def _side_weight(hit, factor: float, size: int) -> np.ndarray:
    """§14.1 Goal B dump weights factor·(Π w) (0 for an empty / skipped side)."""
    if hit is None:
        return np.zeros(size)
    w, Pi = hit[0], hit[1]
    return factor * (Pi @ w)


# --------------------------------------------------------------------------- drivers
def _resolve_a_q(cfg: AbsConfig, q: Optional[float]) -> float:
    """§18 item 24: in the pin-A helpers the table's q wins over ``--q``; 0.5 if neither."""
    if cfg.q is not None:
        return float(cfg.q)
    if q is not None:
        return float(q)
    return STRICT_DEFAULT_Q


def _map(fn, items, n_jobs):
    if n_jobs is None or n_jobs <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=n_jobs) as ex:
        return list(ex.map(fn, items))


def _fold_setup(X, Y, Pl, targets, a_configs, q, count, B, seed, Vt, lev, order_fn, fold):
    """Training set of ``fold`` (−1 = fit-all) and per target (_Target, Yb, StrictSelection)."""
    n = X.shape[0]
    if fold >= 0:
        train = np.array([j for j in range(n) if j != fold])
        new = np.array([fold])
    else:
        train = np.arange(n)
        new = np.arange(n)
    tr = _Train(X, train, new, Vt, lev, order_fn)
    per_t = []
    for t_i, t in enumerate(targets):
        s = loocv_seed(seed, fold, t_i) if fold >= 0 else fit_seed(seed, t_i)
        tt = _Target(tr, Y[train, t_i], Pl[t_i][train], B, s, count)
        Yb = bootstrap_labels(Pl[t_i][train], B, s)
        acfg = a_configs[t]
        sel = tt.select(_resolve_a_q(acfg, q), acfg.nc_d)
        per_t.append((tt, Yb, sel))
    return tr, per_t


def _check_strict(pin_a: bool, strict: bool):
    if not strict:
        raise NotImplementedError("only the strict-budget pair paths are implemented (the published "
                                  "CLI requires --pin-task-a-selection with --strict-budget)")
    if not pin_a:
        raise ValueError("pair --strict-budget requires pin_a=True (published CLI rule)")


def _finish(mode, models, targets, Y, margins, configs, a_configs, sels, pinned, warns, skipped,
            sweep=None, proxies=None):
    T = len(targets)
    Yf = np.asarray(Y, dtype=np.float64)
    acc, cnt, platt = {}, {}, {}
    prob = np.full_like(margins, np.nan)
    for t_i, t in enumerate(targets):
        a_, c_ = pair_accuracy(margins[:, :, t_i], Yf[:, t_i])
        acc[t], cnt[t] = a_, c_
        a, b = platt_fit(margins[:, :, t_i], Yf[:, t_i])
        platt[t] = (a, b)
        prob[:, :, t_i] = platt_prob(margins[:, :, t_i], a, b)
    acc["AVERAGE"] = float(np.mean([acc[t] for t in targets])) if T else float("nan")
    return PairResult(mode, models, list(targets), margins, prob, Yf, acc, cnt, dict(configs),
                      dict(a_configs), platt, sels, pinned=pinned, sweep=sweep or {},
                      skipped=skipped, warnings=warns, proxies=proxies or {})


def _run_frozen(X, Y, Pl, targets, configs, a_configs, q, count, B, seed, Vt, lev, order_fn,
                folds, alpha, maxiter, n_jobs):
    n = X.shape[0]
    T = len(targets)

    def run_fold(fold):
        tr, per_t = _fold_setup(X, Y, Pl, targets, a_configs, q, count, B, seed, Vt, lev, order_fn, fold)
        rows = np.zeros((tr.new.size, n, T))
        sels, skipped = [], []
        for t_i, t in enumerate(targets):
            tt, Yb, sel = per_t[t_i]
            cfg = configs[t]
            ps = _PairSide(tr, X, Yb, alpha, maxiter)
            m = float(cfg.m)
            hh = ps.h(sel.H, cfg.nc_h, cfg.reg) if m > 0.0 else None
            dd = ps.d(sel.D, cfg.nc_d, cfg.reg) if m < 1.0 else None
            for side, hit, nc in (("H", hh, cfg.nc_h), ("D", dd, cfg.nc_d)):
                if hit is not None and hit[3]:
                    skipped.append((fold, t, side, nc))
            rows[:, :, t_i] = _mix_margins(m, ps.margins(hh), ps.margins(dd))
            # dumps: strict dumps emit both sides (weight 0 for an unused side)
            hw_hit = hh if hh is not None else (ps.h(sel.H, cfg.nc_h, cfg.reg) if sel.H.size else None)
            dw_hit = dd if dd is not None else (ps.d(sel.D, cfg.nc_d, cfg.reg) if sel.D.size else None)
            sels.append(FoldSelection(
                fold=fold, target=t,
                H=SideSelection(sel.H, sel.h_rank, _side_weight(hw_hit, m, sel.H.size),
                                hw_hit[4] if hw_hit is not None else 0),
                D=SideSelection(sel.D, sel.d_rank, _side_weight(dw_hit, 1.0 - m, sel.D.size),
                                int(cfg.nc_d))))
        return rows, sels, skipped

    return _map(run_fold, folds, n_jobs)


def _frozen_pair_and_a(configs, a_configs, count: int, targets: Sequence[str], a_q: Optional[float],
                       warns: List[str]):
    """Frozen Goal B configs (pinned-A table) and the Goal A configs whose selection is pinned.
    ``a_q`` is passed to Goal A's table only where the published code does (fit-pair; the LOOCV
    pin-A helpers let the table's q win, §18 item 24). Warnings are appended to ``warns``."""
    if configs is None:
        configs, w = frozen_pair_configs(count, targets, pin_a=True)
        if w:
            warns.append(w)
    if a_configs is None:
        a_configs, w = frozen_abs_configs(count, targets, q=a_q)
        if w:
            warns.append(w)
    return configs, a_configs


@single_blas
def loocv_pair_frozen(X: np.ndarray, Y: np.ndarray, P, targets: Sequence[str], *,
                      models: Optional[Sequence[str]] = None, count: int = 100, B: int = 300,
                      seed: int = 42, pin_a: bool = True, strict: bool = True,
                      configs: Optional[Mapping[str, PairConfig]] = None,
                      a_configs: Optional[Mapping[str, AbsConfig]] = None, q: Optional[float] = None,
                      Vt_full: Optional[np.ndarray] = None, order_fn: OrderFn = compat_order,
                      alpha: float = ALPHA, maxiter: int = MAXITER, n_jobs: int = 1) -> PairResult:
    """LOOCV ``pair --strict-budget --pin-task-a-selection`` with frozen configs (§11.2, §12).

    X: (n, S) filtered float64 sources; Y: (n, T) target means; P: per target
    (n, N_t) float32. configs: target → PairConfig (default
    ``TASK_B_CONFIGS_PINNED_A[count]``); a_configs: Goal A configs whose strict
    selection (q, nc_d) is pinned per fold — both halves, regardless of A's m
    (default ``TASK_A_CONFIGS[count]``; the table's q wins over ``q``, §18 item 24).
    Returns ``PairResult`` (mode "loocv"): margins[i, j, t] from fold i.
    """
    _check_strict(pin_a, strict)
    X, Y, Pl, Vt, lev = _prepare(X, Y, P, targets, 10, Vt_full)
    n = X.shape[0]
    warns: List[str] = []
    configs, a_configs = _frozen_pair_and_a(configs, a_configs, count, targets, None, warns)
    ncmax = max([10] + [c.nc_d for c in a_configs.values()] + [c.nc_d for c in configs.values()])
    lev = leverage_table(Vt, ncmax)
    outs = _run_frozen(X, Y, Pl, targets, configs, a_configs, q, count, B, seed, Vt, lev, order_fn,
                       list(range(n)), alpha, maxiter, n_jobs)
    margins = np.concatenate([o[0] for o in outs], axis=0)
    _nan_diag(margins)
    sels = [s for o in outs for s in o[1]]
    skipped = [s for o in outs for s in o[2]]
    pinned = {t: (True, True) for t in targets}
    return _finish("loocv", _models(models, n), targets, Y, margins, configs, a_configs, sels, pinned,
                   warns, skipped)


def _nan_diag(margins: np.ndarray) -> None:
    n = margins.shape[0]
    margins[np.arange(n), np.arange(n), :] = np.nan


@single_blas
def loocv_pair_autotune(X: np.ndarray, Y: np.ndarray, P, targets: Sequence[str], *,
                        models: Optional[Sequence[str]] = None, count: int = 100, B: int = 300,
                        seed: int = 42, pin_a: bool = True, strict: bool = True, nc_max: int = 10,
                        m_grid: Sequence[float] = M_GRID, a_q_grid: Optional[Sequence[float]] = None,
                        a_configs: Optional[Mapping[str, AbsConfig]] = None,
                        Vt_full: Optional[np.ndarray] = None, order_fn: OrderFn = compat_order,
                        alpha: float = ALPHA, maxiter: int = MAXITER, n_jobs: int = 1) -> PairResult:
    """LOOCV ``pair --strict-budget --pin-task-a-selection --auto-tune`` (§9.3, §12).

    Goal A's strict auto-tune (§9.1) is re-run (``compat.loocv_abs_autotune``,
    q grid ``a_q_grid``) unless ``a_configs`` is given. Per fold and target the
    H half of A's selection is pinned iff A's m > 0 and the D-pt half iff A's
    m < 1; an unpinned side uses a fresh top-C (H: first C of the |ρ| order,
    in rank order; D-pt: first C of the lev_nc·|ρ| order for each nc_d, sorted)
    — §18 item 7. Margins for nc = 1..nc_max are cached; the sweep
    m → nc_h → nc_d (skips: nc_h ≠ 1 when m = 0, nc_d ≠ 1 when m = 1) maximises
    pair accuracy over the LOOCV margins (strict >, first wins; NaN never wins).
    """
    _check_strict(pin_a, strict)
    ncs = nc_grid(nc_max)
    m_grid = tuple(float(v) for v in m_grid)
    X, Y, Pl, Vt, lev = _prepare(X, Y, P, targets, nc_max, Vt_full)
    n, T = X.shape[0], len(targets)
    warns: List[str] = []
    if a_configs is None:
        a_res = loocv_abs_autotune(X, Y, Pl, targets, count=count, B=B, seed=seed, q_grid=a_q_grid,
                                   nc_max=nc_max, Vt_full=Vt, order_fn=order_fn, n_jobs=n_jobs)
        a_configs = dict(a_res.configs)
    lev = leverage_table(Vt, max(nc_max, max(c.nc_d for c in a_configs.values())))
    pinned = {t: (a_configs[t].m > 0.0, a_configs[t].m < 1.0) for t in targets}
    NH = ND = len(ncs)

    def run_fold(fold):
        tr, per_t = _fold_setup(X, Y, Pl, targets, a_configs, None, count, B, seed, Vt, lev, order_fn, fold)
        C = min(int(count), X.shape[1])
        Hm = np.zeros((T, NH, n))
        Dm = np.zeros((T, ND, n))
        cache = []
        for t_i, t in enumerate(targets):
            tt, Yb, sel = per_t[t_i]
            ph, pd = pinned[t]
            if ph:
                H, hrank = sel.H, sel.h_rank
            else:  # fresh top-C in rank order (§18 item 7)
                H, hrank = tt.order_h[:C], np.arange(min(C, tt.order_h.size))
            ps = _PairSide(tr, X, Yb, alpha, maxiter)
            for hi, nc in enumerate(ncs):
                Hm[t_i, hi] = ps.margins(ps.h(H, nc))[0]
            Ds = []
            for di, nc in enumerate(ncs):
                if pd:
                    D, drank = sel.D, sel.d_rank
                else:
                    top = tt.order_d(nc)[:C]
                    o = np.argsort(top, kind="stable")
                    D, drank = top[o], o.astype(np.int64)
                Ds.append((D, drank))
                Dm[t_i, di] = ps.margins(ps.d(D, nc))[0]
            cache.append((ps, H, hrank, Ds))
        return Hm, Dm, cache

    outs = _map(run_fold, list(range(n)), n_jobs)
    Hall = np.stack([o[0] for o in outs], axis=2)  # (T, NH, n_fold, n)
    Dall = np.stack([o[1] for o in outs], axis=2)
    cfg_idx = pair_sweep_configs(ncs, m_grid)
    Yf = np.asarray(Y, dtype=np.float64)
    margins = np.zeros((n, n, T))
    configs: Dict[str, PairConfig] = {}
    sweep = {}
    diag = np.eye(n, dtype=bool)
    for t_i, t in enumerate(targets):
        mv = np.asarray(m_grid)[cfg_idx[:, 0]][:, None, None]
        Hc = Hall[t_i][cfg_idx[:, 1]]
        Dc = Dall[t_i][cfg_idx[:, 2]]
        M = np.where(mv == 1.0, Hc, np.where(mv == 0.0, Dc, mv * Hc + (1.0 - mv) * Dc))
        M = np.where(diag[None], np.nan, M)
        acc, _ = pair_accuracy_many(M, Yf[:, t_i])
        s = np.where(np.isnan(acc), -np.inf, acc)
        k = int(np.argmax(s))
        mi, hi, di = cfg_idx[k]
        configs[t] = PairConfig(m=float(m_grid[mi]), nc_h=int(ncs[hi]), nc_d=int(ncs[di]))
        margins[:, :, t_i] = M[k]
        sweep[t] = float(acc[k])
    sels, skipped = [], []
    for fold in range(n):
        for t_i, t in enumerate(targets):
            ps, H, hrank, Ds = outs[fold][2][t_i]
            cfg = configs[t]
            m = cfg.m
            hh = ps.h(H, cfg.nc_h) if H.size else None
            D, drank = Ds[ncs.index(cfg.nc_d)]
            dd = ps.d(D, cfg.nc_d) if D.size else None
            if m > 0 and hh is not None and hh[3]:
                skipped.append((fold, t, "H", cfg.nc_h))
            if m < 1 and dd is not None and dd[3]:
                skipped.append((fold, t, "D", cfg.nc_d))
            oh = np.argsort(H, kind="stable")
            hs = SideSelection(H[oh], np.asarray(hrank)[oh], _side_weight(hh, m, H.size)[oh],
                               hh[4] if hh is not None else 0)
            ds = SideSelection(D, drank, _side_weight(dd, 1.0 - m, D.size), int(cfg.nc_d))
            sels.append(FoldSelection(fold=fold, target=t, H=hs, D=ds))
    for t in targets:
        if not all(pinned[t]):
            warns.append(f"{t}: Goal A m = {a_configs[t].m} → the "
                         f"{'H' if not pinned[t][0] else 'D-pt'} side is not pinned and uses a fresh "
                         "top-C (published behaviour, spec §18 item 7)")
    return _finish("loocv-autotune", _models(models, n), targets, Y, margins, configs, a_configs, sels,
                   pinned, warns, skipped, sweep=sweep)


# --------------------------------------------------------------------------- fit-all
@single_blas
def fit_pair(X: np.ndarray, Y: np.ndarray, P, targets: Sequence[str], *,
             models: Optional[Sequence[str]] = None, count: int = 100, B: int = 300, seed: int = 42,
             pin_a: bool = True, strict: bool = True,
             configs: Optional[Mapping[str, PairConfig]] = None,
             a_configs: Optional[Mapping[str, AbsConfig]] = None, q: Optional[float] = None,
             Vt_full: Optional[np.ndarray] = None, order_fn: OrderFn = compat_order,
             alpha: float = ALPHA, maxiter: int = MAXITER) -> PairResult:
    """In-sample ``fit-pair --strict-budget --pin-task-a-selection`` (§11.3): all n models.

    Selection = Goal A's strict fit-all selection (A configs' q, nc_d); RNG
    seed + 31·t; H training embeddings = U of the SVD of all n rows (§5.4).
    margins[k, j, t] = (E[k] − E[j])·w mixed over sides. ``proxies[target]``
    holds the §14.1 Goal B weights (overlap columns summed) with
    margin(k vs j) = Σ weight_s (X[k, s] − X[j, s]); this equals the margins
    exactly up to the 1e-12 regulariser of the H projection (≈1e-12 relative)
    whenever the H block has full rank ≥ nc_h; when nc_h exceeds the numerical
    rank (§18 item 23) the stored weights carry the blown-up null directions
    and do not reproduce the U-based margins. Platt (a, b) are fitted on the
    in-sample margins (the published LOOCV Platt is in-sample too, §18 item 13).
    """
    _check_strict(pin_a, strict)
    X, Y, Pl, Vt, lev = _prepare(X, Y, P, targets, 10, Vt_full)
    n = X.shape[0]
    warns: List[str] = []
    configs, a_configs = _frozen_pair_and_a(configs, a_configs, count, targets, q, warns)
    ncmax = max([10] + [c.nc_d for c in a_configs.values()] + [c.nc_d for c in configs.values()])
    lev = leverage_table(Vt, ncmax)
    (rows, sels, skipped), = _run_frozen(X, Y, Pl, targets, configs, a_configs, q, count, B, seed, Vt,
                                         lev, order_fn, [-1], alpha, maxiter, 1)
    margins = rows.copy()
    _nan_diag(margins)
    pinned = {t: (True, True) for t in targets}
    res = _finish("fit", _models(models, n), targets, Y, margins, configs, a_configs, sels, pinned,
                  warns, skipped)
    for fs in sels:
        cols = np.union1d(fs.H.cols, fs.D.cols)
        w = np.zeros(cols.size)
        np.add.at(w, np.searchsorted(cols, fs.H.cols), fs.H.weight)
        np.add.at(w, np.searchsorted(cols, fs.D.cols), fs.D.weight)
        a, b = res.platt[fs.target]
        res.proxies[fs.target] = PairLinear(fs.target, cols, w, a, b, configs[fs.target])
    return res
