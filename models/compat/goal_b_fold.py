"""compat Goal B per fold: pair fits of one (training set, target), pinned to Goal A's selection.

Per (fold i, target t) and strategy side (H / D-pt): training embeddings E_tr (m × k) and the
predicted rows (§5, §5.3); ordered pairs (a, b), a ≠ b, of the training models in row-major order;
labels from the same bootstrap replicates as Goal A (seed + 997·i + 31·t; tie → label 0), reduced
to soft labels (``pairwise.soft_labels``); the fit is ``pair_regress.fit_logit_soft`` (or the
pooled OLS for reg='ols'). All labels equal → skipped, margins stay 0 (§18 item 14: a zero margin
is a predicted loss for the held-out model). margin[i, j] = (u_i − u_j)·w.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from models.compat.goal_a_fold import TargetFold, TrainingFold, fold_rows
from models.common.configs import STRICT_DEFAULT_Q, AbsConfig
from models.common.embeddings import global_projection, local_basis
from models.pair.regress import degenerate_labels, fit_logit_soft, fit_ols_pooled
from models.pair.pairwise import pair_index, soft_labels
from models.common.parallel import map_jobs
from models.common.pooling import bootstrap_labels, fit_seed, loocv_seed
from models.common.regress import mix
from models.common.results import FoldSelection, SideSelection
from models.common.selection import OrderFn, StrictSelection

__all__ = ["PairSide", "side_weight", "resolve_a_q", "check_strict", "fold_setup", "frozen_pair_folds"]


class PairSide:
    """Cached Goal B fits of one (training set, target).

    tr: the fold; X: (n, S) sources; Yb: (B, m) bootstrap labels of the training models.
    ``h`` / ``d`` return (w (k,), Π (|cols|, k), E (n, k) embedding table, skipped, k) or None for
    an empty side; cached per (side, columns, rank, regressor).
    """

    def __init__(self, tr: TrainingFold, X: np.ndarray, Yb: np.ndarray, alpha: float, maxiter: int):
        self.tr, self.X, self.Yb = tr, X, Yb
        self.alpha, self.maxiter = alpha, maxiter
        self.f = soft_labels(Yb)
        self.A, self.Bi = pair_index(tr.train.size)
        self.degenerate = degenerate_labels(self.f)
        self._bases = {}
        self._fits = {}
        self.n = X.shape[0]

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


def side_weight(hit, factor: float, size: int) -> np.ndarray:
    """§14.1 Goal B dump weights factor·(Π w) (0 for an empty / skipped side)."""
    if hit is None:
        return np.zeros(size)
    w, Pi = hit[0], hit[1]
    return factor * (Pi @ w)


def resolve_a_q(cfg: AbsConfig, q: Optional[float]) -> float:
    """§18 item 24: in the pin-A helpers the table's q wins over ``--q``; 0.5 if neither."""
    if cfg.q is not None:
        return float(cfg.q)
    if q is not None:
        return float(q)
    return STRICT_DEFAULT_Q


def check_strict(pin_a: bool, strict: bool) -> None:
    """Only the published strict pin-A pair paths exist."""
    if not strict:
        raise NotImplementedError("only the strict-budget pair paths are implemented (the published "
                                  "CLI requires --pin-task-a-selection with --strict-budget)")
    if not pin_a:
        raise ValueError("pair --strict-budget requires pin_a=True (published CLI rule)")


def fold_setup(X, Y, Pl, targets, a_configs, q, count, B, seed, Vt, lev, order_fn: OrderFn, fold: int
               ) -> Tuple[TrainingFold, List[Tuple[TargetFold, np.ndarray, StrictSelection]]]:
    """Training set of ``fold`` (−1 = fit-all) and per target (TargetFold, Yb, Goal A's strict
    selection with the pinned Goal A config)."""
    train, new = fold_rows(X.shape[0], fold)
    tr = TrainingFold(X, train, new, Vt, lev, order_fn)
    per_t = []
    for t_i, t in enumerate(targets):
        s = loocv_seed(seed, fold, t_i) if fold >= 0 else fit_seed(seed, t_i)
        tt = TargetFold(tr, Y[train, t_i], Pl[t_i][train], B, s, count)
        Yb = bootstrap_labels(Pl[t_i][train], B, s)
        acfg = a_configs[t]
        sel = tt.select(resolve_a_q(acfg, q), acfg.nc_d)
        per_t.append((tt, Yb, sel))
    return tr, per_t


def frozen_pair_folds(X, Y, Pl, targets: Sequence[str], configs, a_configs, q, count, B, seed, Vt, lev,
                      order_fn: OrderFn, folds, alpha, maxiter, n_jobs):
    """Run the frozen-config pair ``folds`` → per fold (margins (|new|, n, T), selections, skipped)."""
    n = X.shape[0]
    T = len(targets)

    def run_fold(fold):
        tr, per_t = fold_setup(X, Y, Pl, targets, a_configs, q, count, B, seed, Vt, lev, order_fn, fold)
        rows = np.zeros((tr.new.size, n, T))
        sels, skipped = [], []
        for t_i, t in enumerate(targets):
            tt, Yb, sel = per_t[t_i]
            cfg = configs[t]
            ps = PairSide(tr, X, Yb, alpha, maxiter)
            m = float(cfg.m)
            hh = ps.h(sel.H, cfg.nc_h, cfg.reg) if m > 0.0 else None
            dd = ps.d(sel.D, cfg.nc_d, cfg.reg) if m < 1.0 else None
            for side, hit, nc in (("H", hh, cfg.nc_h), ("D", dd, cfg.nc_d)):
                if hit is not None and hit[3]:
                    skipped.append((fold, t, side, nc))
            rows[:, :, t_i] = mix(m, ps.margins(hh), ps.margins(dd))
            # dumps: strict dumps emit both sides (weight 0 for an unused side)
            hw_hit = hh if hh is not None else (ps.h(sel.H, cfg.nc_h, cfg.reg) if sel.H.size else None)
            dw_hit = dd if dd is not None else (ps.d(sel.D, cfg.nc_d, cfg.reg) if sel.D.size else None)
            sels.append(FoldSelection(
                fold=fold, target=t,
                H=SideSelection(sel.H, sel.h_rank, side_weight(hw_hit, m, sel.H.size),
                                hw_hit[4] if hw_hit is not None else 0),
                D=SideSelection(sel.D, sel.d_rank, side_weight(dw_hit, 1.0 - m, sel.D.size),
                                int(cfg.nc_d))))
        return rows, sels, skipped

    return map_jobs(run_fold, folds, n_jobs)
