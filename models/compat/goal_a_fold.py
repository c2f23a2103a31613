"""compat Goal A per fold: the published selection and regression of one training set.

A fold is a held-out model index i (its training set: every other model) or −1 (fit-all: every
model trains and is predicted). ``TrainingFold`` holds what the training set determines (ranks of
X_tr, computed once: one matrix product gives the Spearman of every column); ``TargetFold`` what a
(training set, target) pair determines: selection scores and orders, pooled bootstrap labels
(drawn once, reduced to sufficient statistics), and the side fits cached per distinct selection,
so every auto-tune configuration is a convex mix of cached H and D-pt predictions.
``frozen_folds`` runs the frozen-config folds (LOOCV, fit-all, and nested's outer folds).
"""
from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from models.common.configs import STRICT_DEFAULT_Q, AbsConfig, frozen_abs_configs
from models.common.embeddings import LocalBasis, global_projection, local_basis
from models.common.parallel import map_jobs
from models.common.pooling import PooledStats, bootstrap_labels, fit_seed, loocv_seed, pooled_stats
from models.common.regress import GoalAFit, goal_a_predict, mix
from models.common.results import FoldSelection, SideSelection
from models.common.selection import (OrderFn, StrictSelection, global_scores, leverage_table, local_scores,
                        strict_joint_select, strict_prefix_length)
from models.common.spearman import normalized_ranks, spearman_from_normalized

__all__ = ["fold_rows", "TrainingFold", "TargetFold", "dump_style", "resolve_frozen", "frozen_folds"]


def fold_rows(n: int, fold: int) -> Tuple[np.ndarray, np.ndarray]:
    """(training rows, predicted rows) of ``fold``: (all but i, [i]) or, for −1, (all, all)."""
    if fold >= 0:
        return np.array([j for j in range(n) if j != fold]), np.array([fold])
    return np.arange(n), np.arange(n)


class TrainingFold:
    """Per training set: ranks of X_tr once, the global basis and the ordering rule.

    X: (n, S) sources; train / new: training and predicted rows; Vt: (r, S) global basis;
    lev: (nc_max, S) leverage table; order_fn: selection ordering.
    """

    def __init__(self, X: np.ndarray, train: np.ndarray, new: np.ndarray, Vt: np.ndarray,
                 lev: np.ndarray, order_fn: OrderFn):
        self.X = X
        self.train = train
        self.new = new
        self.Vt = Vt
        self.lev = lev
        self.order_fn = order_fn
        self.Xtr = X[train]
        self.Z = normalized_ranks(self.Xtr)
        pos = {int(j): k for k, j in enumerate(train)}
        # for new rows that are training rows (fit-all) use U_w rows directly
        self.new_in_train = np.array([pos.get(int(j), -1) for j in new])


class TargetFold:
    """Per (training set, target): scores, orders, pooled label statistics, caches.

    y_tr: (m,) training target means; P_tr: (m, N_t) float32 training per-instance targets;
    B, seed: bootstrap replicates and their seed; C: budget.
    """

    def __init__(self, tr: TrainingFold, y_tr: np.ndarray, P_tr: np.ndarray, B: int, seed: int, C: int):
        self.tr = tr
        self.C = int(C)
        self.p = tr.X.shape[1]
        self.k = strict_prefix_length(C, self.p)
        r = spearman_from_normalized(tr.Z, normalized_ranks(np.asarray(y_tr)))
        self.absr = local_scores(r)
        self.order_h = tr.order_fn(self.absr, self.k)
        self._orders_d: Dict[int, np.ndarray] = {}
        self.st: PooledStats = pooled_stats(bootstrap_labels(P_tr, B, seed))
        self.grand_mean = float(np.asarray(P_tr, dtype=np.float32).mean()) if P_tr.size else 0.0
        self._h: Dict[bytes, Tuple[LocalBasis, GoalAFit]] = {}
        self._d: Dict[Tuple[bytes, int], Tuple[np.ndarray, GoalAFit]] = {}

    def order_d(self, nc_d: int) -> np.ndarray:
        o = self._orders_d.get(nc_d)
        if o is None:
            o = self.tr.order_fn(global_scores(self.tr.lev[nc_d - 1], self.absr), self.k)
            self._orders_d[nc_d] = o
        return o

    def select(self, q: float, nc_d: int) -> StrictSelection:
        return strict_joint_select(self.order_h, self.order_d(nc_d), self.C, q, p=self.p)

    def h_fit(self, H: np.ndarray, nc_max: int):
        """H side on columns H: (basis, fit) with predictions for nc = 1..K; None if empty."""
        if H.size == 0:
            return None
        key = H.tobytes()
        hit = self._h.get(key)
        if hit is None:
            tr = self.tr
            basis = local_basis(tr.Xtr[:, H], nc_max)
            U_new = basis.project(tr.X[np.ix_(tr.new, H)])
            inside = tr.new_in_train >= 0
            if inside.any():
                U_new[inside] = basis.U[tr.new_in_train[inside]]
            fit = goal_a_predict(basis.U, U_new, self.st, prefixes=True)
            hit = (basis, fit)
            self._h[key] = hit
        return hit

    def d_fit(self, D: np.ndarray, nc_d: int):
        """D-pt side on columns D with rank nc_d: (Π, fit); None if empty."""
        if D.size == 0:
            return None
        key = (D.tobytes(), nc_d)
        hit = self._d.get(key)
        if hit is None:
            tr = self.tr
            Pi = global_projection(tr.Vt, D, nc_d)
            E = tr.X[:, D] @ Pi
            fit = goal_a_predict(E[tr.train], E[tr.new], self.st, prefixes=False)
            hit = (Pi, fit)
            self._d[key] = hit
        return hit

    def h_pred(self, H: np.ndarray, nc_h: int, nc_max: int) -> np.ndarray:
        hf = self.h_fit(H, nc_max)
        if hf is None:
            return np.full(self.tr.new.size, self.grand_mean)
        fit = hf[1]
        k = min(nc_h, fit.pred.shape[1])
        return fit.pred[:, k - 1]

    def d_pred(self, D: np.ndarray, nc_d: int) -> np.ndarray:
        df = self.d_fit(D, nc_d)
        if df is None:
            return np.full(self.tr.new.size, self.grand_mean)
        return df[1].pred[:, 0]

    def side_records(self, sel: StrictSelection, cfg: AbsConfig, nc_max: int,
                     dump_style: bool = True) -> Tuple[SideSelection, SideSelection]:
        """§14.1 weights m_side · a · (Π w) of both sides.

        dump_style=True recomputes the H side's (w, a) the way the published
        dump does: training embeddings re-derived as X_tr[:, sel] · Π instead
        of the SVD's U; with tied embedding rows this can differ from the
        predictor's (w, a) (spec §14.1). dump_style=False uses the predictor's
        own (w, a), for which ŷ = ȳ_pool + Σ weight·(x − x̄_train) holds exactly
        (before the clamp). The D-pt side always uses the predictor's (w, a).
        """
        m = float(cfg.m)
        tr = self.tr
        hw = np.zeros(sel.H.size)
        k_used = 0
        hf = self.h_fit(sel.H, max(nc_max, cfg.nc_h))
        if hf is not None:
            basis, fit = hf
            k_used = min(cfg.nc_h, fit.W.shape[0])
            Pi = basis.proj[:, :k_used]
            if dump_style:
                f2 = goal_a_predict(tr.Xtr[:, sel.H] @ Pi, np.zeros((1, k_used)), self.st, prefixes=False)
                w, a = f2.W[:, 0], f2.slope[0]
            else:
                w, a = fit.W[:k_used, k_used - 1], fit.slope[k_used - 1]
            hw = m * a * (Pi @ w)
        dw = np.zeros(sel.D.size)
        df = self.d_fit(sel.D, cfg.nc_d)
        if df is not None:
            Pi, fit = df
            w, a = fit.W[:, 0], fit.slope[0]
            dw = (1.0 - m) * a * (Pi @ w)
        return (SideSelection(sel.H, sel.h_rank, hw, k_used if hf is not None else 0),
                SideSelection(sel.D, sel.d_rank, dw, int(cfg.nc_d)))


def dump_style(weight_mode: str) -> bool:
    """``weight_mode`` 'dump' → True, 'predictor' → False (see ``TargetFold.side_records``)."""
    if weight_mode not in ("dump", "predictor"):
        raise ValueError("weight_mode must be 'dump' or 'predictor'")
    return weight_mode == "dump"


def resolve_frozen(configs: Optional[Mapping[str, AbsConfig]], count: int, targets: Sequence[str],
                   q: Optional[float], Vt: np.ndarray):
    """Frozen configs (the §16 table unless given; ``q`` overrides every target's q) and the
    leverage table wide enough for their nc_d. Returns (configs, lev, warnings)."""
    warns = []
    if configs is None:
        configs, w = frozen_abs_configs(count, targets, q=q)
        if w:
            warns.append(w)
    elif q is not None:
        configs = {t: AbsConfig(c.m, c.nc_h, c.nc_d, float(q)) for t, c in configs.items()}
    lev = leverage_table(Vt, max(10, max(c.nc_d for c in configs.values())))
    return configs, lev, warns


def frozen_folds(X, Y, Pl, targets, configs, count, B, seed, Vt, lev, order_fn, folds, nc_max, n_jobs,
                 weight_mode="dump") -> List[Tuple[np.ndarray, List[FoldSelection]]]:
    """Run the frozen-config ``folds`` (held-out indices, or [−1] for fit-all).

    Per fold: (pred (|new|, T), its FoldSelection per target). Seeds: seed + 997·i + 31·t in
    LOOCV, seed + 31·t for fit-all.
    """
    n = X.shape[0]
    T = len(targets)
    style = dump_style(weight_mode)

    def run_fold(i):
        train, new = fold_rows(n, i)
        tr = TrainingFold(X, train, new, Vt, lev, order_fn)
        preds = np.zeros((new.size, T))
        sels = []
        for t_i, t in enumerate(targets):
            cfg = configs[t]
            q = STRICT_DEFAULT_Q if cfg.q is None else float(cfg.q)
            s = loocv_seed(seed, i, t_i) if i >= 0 else fit_seed(seed, t_i)
            tt = TargetFold(tr, Y[train, t_i], Pl[t_i][train], B, s, count)
            sel = tt.select(q, cfg.nc_d)
            kmax = max(nc_max, cfg.nc_h)
            h = tt.h_pred(sel.H, cfg.nc_h, kmax)
            d = tt.d_pred(sel.D, cfg.nc_d)
            preds[:, t_i] = mix(float(cfg.m), h, d)
            hs, ds = tt.side_records(sel, cfg, kmax, dump_style=style)
            sels.append(FoldSelection(fold=i, target=t, H=hs, D=ds))
        return preds, sels

    return map_jobs(run_fold, folds, n_jobs)
