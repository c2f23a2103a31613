"""``default`` Goal B per (training basis, target): pair fits of every grid config.

Selection is the ``default`` Goal A machinery (``default_fold.AbsTargetFit``: stable orders, the
strict joint budget with share q). Embeddings: H = rank-truncated SVD of the centred training block
on the H set, D-pt = least-squares coordinates in the inductive basis; both sides use the same
rank nc. Fit: ``pair_regress.fit_logit_newton`` on the ordered training pairs against soft labels.
The margin is exactly linear in the imputed raw scores: margin(k, j) = (x̃_k − x̃_j)[sel]·β with
β = m·Π_H w_H + (1 − m)·Π_D w_D.
"""
from __future__ import annotations

from typing import Dict, Tuple

import numpy as np

from models.common.autotune import DefaultGrid, PairGrid
from models.default.basis import TrainingBasis
from models.common.configs import DefaultPairConfig
from models.default.goal_a_fold import AbsTargetFit, fold_selection
from models.common.embeddings import inductive_projection, truncated_local
from models.pair.regress import fit_logit_newton, fit_logit_pairs
from models.pair.pairwise import pair_index
from models.common.results import FoldSelection
from models.common.selection import StrictSelection, strict_joint_select

__all__ = ["MARGINS_ABOVE", "PairTargetFit", "embedding_scores", "pair_fold_selection"]

#: with more training models than this the pair logistic is solved on the margins (``fit_logit_pairs``)
MARGINS_ABOVE = 40


class PairTargetFit:
    """All grid configs of one (training basis, target): scores β·x̃ for every row of X.

    bs: the training basis; y_tr: (m,) training truth; f: (m(m−1),) soft labels; Xc: (n, p_rep)
    centred / imputed rows of all models on the basis' representatives (``bs.centred`` or, read per
    column subset, ``bs.centred_rows``).
    """

    def __init__(self, bs: TrainingBasis, y_tr: np.ndarray, f: np.ndarray, Xc: np.ndarray, grid: PairGrid,
                 count: int, alpha: float):
        self.bs, self.grid, self.count, self.alpha = bs, grid, count, alpha
        self.tf = AbsTargetFit(bs, y_tr, np.zeros((0, bs.reps.size)), DefaultGrid(), count)
        self.f = f
        self._f_upper = None
        self.A, self.Bi = pair_index(bs.m) if bs.m <= MARGINS_ABOVE else (None, None)
        self.Xc = Xc
        self._h: Dict[Tuple[bytes, int], np.ndarray] = {}
        self._d: Dict[Tuple[bytes, int], np.ndarray] = {}
        self._sel: Dict[Tuple[float, int], StrictSelection] = {}

    def fit(self, E_tr: np.ndarray) -> np.ndarray:
        """Logistic weights (k,) of training embeddings E_tr (m, k) on the ordered pairs. With more than
        ``MARGINS_ABOVE`` training models the same objective is solved on the margins (``fit_logit_pairs``:
        no m(m−1) × k design; the optimum up to rounding)."""
        if self.bs.m > MARGINS_ABOVE:
            if self._f_upper is None:
                ia, ib = np.triu_indices(self.bs.m, 1)
                self._f_upper = self.f[ia * (self.bs.m - 1) + ib - 1]     # (a, b), a < b, in pair_index order
            return fit_logit_pairs(E_tr, self._f_upper, self.alpha)
        Dp = E_tr[self.A] - E_tr[self.Bi]
        return fit_logit_newton(Dp, self.f, self.alpha)

    def select(self, q: float, nc: int) -> StrictSelection:
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
                U, Pi = truncated_local(self.bs.block(H), nc)
                b = np.zeros(H.size) if U.shape[1] == 0 else Pi @ self.fit(U)
            self._h[key] = b
        return b

    def beta_d(self, D: np.ndarray, nc: int) -> np.ndarray:
        """(|D|,) weights on centred scores of the D-pt side."""
        key = (D.tobytes(), nc)
        b = self._d.get(key)
        if b is None:
            if D.size == 0 or self.bs.Vr.shape[0] == 0:
                b = np.zeros(D.size)
            else:
                Pi = inductive_projection(self.bs.Vr, D, nc)
                b = Pi @ self.fit(self.bs.block(D) @ Pi)
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
        Xr = self.Xc[rows] if isinstance(self.Xc, np.ndarray) else None     # CentredRows: per column subset
        for c_i, cfg in enumerate(cfgs):
            idx, w, *_ = self.linear(cfg)
            if idx.size:
                out[c_i] = (Xr[:, idx] if Xr is not None else self.Xc[:, idx][rows]) @ w
        return out


def pair_fold_selection(pf: PairTargetFit, cfg: DefaultPairConfig, fold: int, target: str) -> FoldSelection:
    """The FoldSelection record of one config (weights = the sides' β, rank nc on both sides)."""
    _, _, sel, wh, wd = pf.linear(cfg)
    return fold_selection(fold, target, pf.bs, sel, pf.tf.order_h, pf.tf.order_d(cfg.nc), pf.count,
                          wh, wd, cfg.nc, cfg.nc)


def embedding_scores(pf: PairTargetFit, sel: StrictSelection, cfg: DefaultPairConfig, rows: np.ndarray,
                     allrows: np.ndarray) -> np.ndarray:
    """In-sample scores from the embeddings, independent of the proxy arithmetic: training rows
    use the SVD's U (H side), the others x̃·Π → (n,)."""
    n = allrows.size
    s = np.zeros(n)
    bs = pf.bs
    Xc = pf.Xc
    if cfg.m > 0 and sel.H.size:
        U, Pi = truncated_local(bs.block(sel.H), cfg.nc)
        if U.shape[1]:
            w = pf.fit(U)
            E = Xc[:, sel.H] @ Pi
            E[rows] = U
            s += cfg.m * (E @ w)
    if cfg.m < 1 and sel.D.size and bs.Vr.shape[0]:
        Pi = inductive_projection(bs.Vr, sel.D, cfg.nc)
        E = Xc[:, sel.D] @ Pi
        w = pf.fit(E[rows])
        s += (1.0 - cfg.m) * (E @ w)
    return s
