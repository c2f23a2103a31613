"""The item model of one target: a 2PL (or 1PL) item response model with a per-model slip rate, fitted by
marginal maximum a posteriori (Bock-Aitkin EM over the person grid). Pure numpy (and a scipy.sparse mask).

Each target item ``i`` has a discrimination ``a_i > 0`` and a difficulty ``b_i``; a model at grid point
(theta, slip) solves it with probability

    P_i(theta, slip) = (1 - slip) sigma(a_i (theta - b_i)),   sigma(x) = 1 / (1 + exp(-x)).

The training models' (theta, slip) are integrated out over the grid (models.anchors.grid) under the
population prior N(0, 1) x ``slip_weights`` (the N(0, 1) fixes the scale: ability units are the training
models' spread), so an item seen by 27 models is not fitted against 27 noisy point abilities. The slip
weights are learnt too (the training models' average posterior over the slip levels, shrunk toward the
starting weights by ``slip_pseudo`` pseudo-models). Priors regularise the items: ``a ~ N(slope_mean,
slope_sd^2)`` floored at ``MIN_SLOPE``, and the intercept ``c = -a b ~ N(0, intercept_sd^2)`` (an item every
training model solved, or none did, gets a finite difficulty). ``slopes="shared"`` is the 1PL: one a.

E step (per training model m, grid point p):
    loglik(m, p) = sum over the items i model m has of y_mi log P_i(p) + (1 - y_mi) log(1 - P_i(p))
    w(m, p)      = softmax_p(loglik(m, p) + log prior(p))
M step (per item: Fisher scoring on (a_i, c_i), logit of the non-slip part z = a_i theta_p + c_i):
    maximise sum_p r(p, i) log P_i(p) + (n(p, i) - r(p, i)) log(1 - P_i(p)) + log prior(a_i, c_i),
    r(p, i) = sum_m w(m, p) y_mi,  n(p, i) = sum_m w(m, p) [m has i]
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .grid import Grid, ability_grid, normalise_log

__all__ = ["ItemParams", "ItemFit", "fit_items", "MIN_SLOPE", "NO_SLIP_WEIGHT"]

MIN_SLOPE = 0.05
NO_SLIP_WEIGHT = 0.7        # the starting slip prior: 70 % of models never slip, the rest spread evenly
_SCORING_STEPS = 2


@dataclass(frozen=True)
class ItemParams:
    """One target's item parameters: slope ``a`` (n,) > 0 and difficulty ``b`` (n,), ability units."""

    a: np.ndarray
    b: np.ndarray

    def logits(self, grid: Grid) -> np.ndarray:
        """(P, n) logits a_i (theta_p - b_i) of the non-slip part."""
        return self.a[None, :] * (grid.theta[:, None] - self.b[None, :])

    def table(self, grid: Grid, name: str, compute):
        """``compute()``: a table of these items on one grid, computed once per (grid, name) (the parameters
        never change: frozen arrays)."""
        cache = self.__dict__.setdefault("_tables", {})
        key = (id(grid), name)
        if key not in cache or cache[key][0] is not grid:
            cache[key] = (grid, compute())
        return cache[key][1]

    def _table(self, grid: Grid, name: str):
        """The (P, n) tables of one grid: "prob" or "log"."""
        if name == "prob":
            return self.table(grid, name, lambda: (1 - grid.slip[:, None])
                              / (1.0 + np.exp(-np.clip(self.logits(grid), -_Z_CLIP, _Z_CLIP))))
        return self.table(grid, name, lambda: _log_probs(self.logits(grid), grid.slip))

    def prob(self, grid: Grid) -> np.ndarray:
        """(P, n) solve probabilities (1 - slip_p) sigma(a_i (theta_p - b_i))."""
        return self._table(grid, "prob")

    def prob_at(self, theta: np.ndarray, slip: np.ndarray | float = 0.0) -> np.ndarray:
        """(m, n) solve probabilities of m models at abilities ``theta`` (m,) and slip rates ``slip``."""
        theta = np.asarray(theta, dtype=np.float64)
        keep = 1 - np.broadcast_to(np.asarray(slip, dtype=np.float64), theta.shape)
        return keep[:, None] / (1.0 + np.exp(-self.a[None, :] * (theta[:, None] - self.b[None, :])))

    def log_probs(self, grid: Grid) -> tuple[np.ndarray, np.ndarray]:
        """(log P, log(1 - P)), each (P, n), computed stably."""
        return self._table(grid, "log")

    def __getstate__(self):
        return {"a": self.a, "b": self.b}

    def subset(self, columns: np.ndarray) -> "ItemParams":
        """The parameters of some items (index or boolean mask over the n items)."""
        return ItemParams(self.a[columns], self.b[columns])


_Z_CLIP = 35.0     # |logit| beyond which sigma is 1 or 0 to double precision: keeps every log finite


def _log_probs(z: np.ndarray, slip: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log P and log(1 - P) for P = (1 - slip) sigma(z); 1 - P = slip + (1 - slip) sigma(-z)."""
    z = np.clip(z, -_Z_CLIP, _Z_CLIP)
    e = np.exp(-np.abs(z))
    log1pe = np.log1p(e)
    keep = 1 - slip[:, None]
    sig_neg = np.where(z >= 0, e, 1.0) / (1 + e)                # sigma(-z), no overflow
    return np.log(keep) + np.minimum(z, 0) - log1pe, np.log(slip[:, None] + keep * sig_neg)


def default_slip_weights(grid: Grid) -> np.ndarray:
    """(S,) the starting slip prior: NO_SLIP_WEIGHT on slip 0, the rest spread evenly over the other levels."""
    w = np.full(grid.levels.size, (1 - NO_SLIP_WEIGHT) / max(grid.levels.size - 1, 1))
    w[0] = NO_SLIP_WEIGHT if grid.levels.size > 1 else 1.0
    return w


@dataclass(frozen=True)
class ItemFit:
    """params: the items; grid: the person grid; slip_weights: (S,) the learnt population weights of the
    slip levels; posterior: (m, P) each training model's posterior weights; ability, slip: (m,) their
    posterior means; iterations: EM iterations run; converged: within tolerance."""

    params: ItemParams
    grid: Grid
    slip_weights: np.ndarray
    posterior: np.ndarray
    ability: np.ndarray
    slip: np.ndarray
    iterations: int
    converged: bool


def _population_log_prior(grid: Grid, slip_weights: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return normalise_log(-0.5 * grid.theta ** 2 + np.log(slip_weights)[grid.level])


def _m_step(r, n, slope, intercept, grid: Grid, slope_mean, slope_sd, intercept_sd, shared: bool):
    """Fisher scoring steps on every item's (a, c) given expected counts r, n: (P, n_items)."""
    t, keep = grid.theta[:, None], 1 - grid.slip[:, None]
    for _ in range(_SCORING_STEPS):
        sig = 1.0 / (1.0 + np.exp(-(t * slope[None, :] + intercept[None, :])))
        p = np.clip(keep * sig, 1e-12, 1 - 1e-12)
        dp = keep * sig * (1 - sig)                     # dP / dz
        score = r * (1 - sig) - (n - r) * dp / (1 - p)  # d loglik / dz per grid point
        info = n * dp * dp / (p * (1 - p))
        g_c = score.sum(0) - intercept / intercept_sd ** 2
        h_cc = info.sum(0) + 1 / intercept_sd ** 2
        g_a_items, h_aa_items, h_ac = (t * score).sum(0), (t * t * info).sum(0), (t * info).sum(0)
        if shared:       # one slope: a step on c per item (a held), then on the common a
            intercept = intercept + g_c / h_cc
            g_a = g_a_items.sum() - (slope[0] - slope_mean) / slope_sd ** 2
            h_aa = h_aa_items.sum() + 1 / slope_sd ** 2
            slope = np.full_like(slope, max(slope[0] + g_a / h_aa, MIN_SLOPE))
            continue
        g_a = g_a_items - (slope - slope_mean) / slope_sd ** 2
        h_aa = h_aa_items + 1 / slope_sd ** 2
        det = h_aa * h_cc - h_ac * h_ac
        slope = np.maximum(slope + (h_cc * g_a - h_ac * g_c) / det, MIN_SLOPE)
        intercept = intercept + (h_aa * g_c - h_ac * g_a) / det
    return slope, intercept


def fit_items(y: np.ndarray, *, slopes: str = "free", slope_mean: float = 1.0, slope_sd: float = 0.5,
              intercept_sd: float = 3.0, grid: Grid | None = None, slip_pseudo: float = 5.0,
              max_iter: int = 300, tol: float = 1e-3) -> ItemFit:
    """Fit the item model of one target on the training models' results.

    y: (m, n) 0/1 results, NaN where a model has no result for an item (never counted as a failure).
    slopes: "free" (2PL: one a_i per item) or "shared" (1PL: one a for every item).
    slope_mean, slope_sd: the normal prior on a_i; intercept_sd: the normal prior's sd on c_i = -a_i b_i.
    grid: the person grid (default ``ability_grid()``; ``ability_grid(slips=(0,))`` fits without slips).
    slip_pseudo: pseudo-models holding the slip weights to their starting values. Deterministic."""
    if slopes not in ("free", "shared"):
        raise ValueError(f"slopes must be 'free' or 'shared', not {slopes!r}")
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 2 or y.shape[0] < 2:
        raise ValueError("y must be (models, items) with at least two models")
    grid = ability_grid() if grid is None else grid
    seen = np.isfinite(y).astype(np.float64)
    y0 = np.where(seen > 0, y, 0.0)
    start = default_slip_weights(grid)
    weights = start.copy()
    share = (y0.sum(0) + 0.5) / (seen.sum(0) + 1.0)
    slope = np.full(y.shape[1], float(slope_mean))
    intercept = np.log(share / (1 - share)) * np.sqrt(1 + (np.pi * slope_mean) ** 2 / 8 / 3)
    converged, iterations = False, 0

    # Results are nearly complete (a few models lack a few items): sums over the items a model has are
    # written as sums over every item minus the few it lacks (a sparse matrix), two dense products per EM
    # iteration instead of four (a third of its time at 1,000 models x 2,935 items)
    from scipy import sparse             # here: the command line imports this module at start-up

    lacking = sparse.csr_matrix(1.0 - seen)
    lacking_t = lacking.T.tocsr()

    def posterior(slope, intercept, weights):
        log_p, log_q = _log_probs(grid.theta[:, None] * slope[None, :] + intercept[None, :], grid.slip)
        loglik = y0 @ (log_p - log_q).T + (log_q.sum(1)[None, :] - lacking @ log_q.T)
        return np.exp(normalise_log(loglik + _population_log_prior(grid, weights)))

    for iterations in range(1, max_iter + 1):
        post = posterior(slope, intercept, weights)
        r, n = post.T @ y0, post.sum(0)[:, None] - (lacking_t @ post).T
        new_slope, new_intercept = _m_step(r, n, slope, intercept, grid, slope_mean, slope_sd, intercept_sd,
                                           slopes == "shared")
        per_level = np.bincount(grid.level, weights=post.sum(0), minlength=grid.levels.size)
        new_weights = (per_level + slip_pseudo * start) / (post.shape[0] + slip_pseudo)
        change = max(np.max(np.abs(new_slope - slope)), np.max(np.abs(new_intercept - intercept)),
                     np.max(np.abs(new_weights - weights)))
        slope, intercept, weights = new_slope, new_intercept, new_weights
        if change < tol:
            converged = True
            break
    post = posterior(slope, intercept, weights)
    return ItemFit(ItemParams(slope, -intercept / slope), grid, weights, post, post @ grid.theta,
                   post @ grid.slip, iterations, converged)
