"""``default`` Goal A per (training basis, target): orders, side fits, every grid config.

Orders are stable descending sorts (ties → lower column index) of float64 scores: H by |ρ| of the
rank correlation with the target, D-pt by lev_nc·|ρ| in the inductive basis (§20 item 5). The
strict joint selection (§4.4) then picks C representatives; H is embedded by the rank-truncated
SVD of its centred block, D-pt by the inductive projection (``embeddings``); each side is a
Pearson-weighted OLS (``regress.pearson_fit``). A prediction is linear in the raw selected
scores: ŷ(z) = ȳ + Σ_s w_s (x_z[s] − μ_s) (``AbsTargetFit.linear``).
"""
from __future__ import annotations

from typing import Dict, Tuple

import numpy as np

from models.common.autotune import DefaultGrid
from models.default.basis import TrainingBasis
from models.common.configs import AbsConfig
from models.common.embeddings import inductive_projection, truncated_local
from models.common.regress import mix_configs, pearson_fit
from models.common.results import FoldSelection, SideSelection
from models.common.selection import (StrictSelection, order_desc_stable, prefix_ranks, strict_joint_select,
                        strict_prefix_length)
from models.common.spearman import normalized_ranks

__all__ = ["AbsTargetFit", "fold_selection"]


class AbsTargetFit:
    """Per (basis, target): orders and cached side fits; predictions for all configs.

    bs: the training basis; y_tr: (m,) training target means; new_c: (h, p_rep) centred rows to
    predict (``bs.centred`` or ``bs.centred_rows``); grid: the configs; count: budget C. order_h and
    order_d(nc) are the first ``prefix`` = min(p, 3C + 2) entries of the orders (all the strict
    selection reads).
    """

    def __init__(self, bs: TrainingBasis, y_tr: np.ndarray, new_c: np.ndarray, grid: DefaultGrid,
                 count: int):
        self.bs, self.grid, self.count = bs, grid, count
        self.y = np.asarray(y_tr, dtype=np.float64)
        self.ybar = float(self.y.mean())
        self.yc = self.y - self.ybar
        self.new_c = new_c
        if bs.reps.size:
            self.absr = np.abs(bs.rank_correlation(normalized_ranks(self.y)))
        else:
            self.absr = np.zeros(0)
        # the strict selection never reads past this prefix of an order (nor does fold_selection)
        self.prefix = strict_prefix_length(count, self.absr.size)
        self.order_h = order_desc_stable(self.absr, self.prefix)
        self._od: Dict[int, np.ndarray] = {}
        self._h: Dict[bytes, Tuple[np.ndarray, np.ndarray]] = {}

    def order_d(self, nc: int) -> np.ndarray:
        """D-pt order for rank nc (capped at the basis rank)."""
        r = self.bs.lev.shape[0]
        key = min(nc, r)
        o = self._od.get(key)
        if o is None:
            lev = self.bs.lev[key - 1] if key > 0 else np.zeros(self.absr.size)
            o = order_desc_stable(lev * self.absr, self.prefix)
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
                U, Pi = truncated_local(self.bs.block(H), max(self.grid.nc))
                pred, coefs = pearson_fit(U, self.new_c[:, H] @ Pi, self.yc, self.ybar, self.grid.nc)
                hit = (pred, Pi @ coefs)
            self._h[key] = hit
        return hit

    def d_side(self, D: np.ndarray, nc: int):
        """→ (pred (h,), colcoef (|D|,))."""
        if D.size == 0 or self.bs.Vr.shape[0] == 0:
            return np.full(self.new_c.shape[0], self.ybar), np.zeros(D.size)
        Pi = inductive_projection(self.bs.Vr, D, nc)
        E = self.bs.block(D) @ Pi
        pred, coefs = pearson_fit(E, self.new_c[:, D] @ Pi, self.yc, self.ybar)
        return pred[:, 0], (Pi @ coefs)[:, 0]

    def all_configs(self) -> np.ndarray:
        """Predictions of every grid config for the new rows: (K, h)."""
        g = self.grid
        NQ, ND, NH = len(g.q), len(g.nc), len(g.nc)
        h = self.new_c.shape[0]
        Hp = np.zeros((NQ, ND, NH, h))
        Dp = np.zeros((NQ, ND, h))
        for qi, q in enumerate(g.q):
            for di, nc in enumerate(g.nc):
                sel = strict_joint_select(self.order_h, self.order_d(nc), self.count, q, p=self.absr.size)
                Hp[qi, di] = self.h_side(sel.H)[0].T
                Dp[qi, di] = self.d_side(sel.D, nc)[0]
        qi, di, mi, hi = g.configs().T
        return mix_configs(np.asarray(g.m)[mi], Hp[qi, di, hi], Dp[qi, di])

    def linear(self, cfg: AbsConfig):
        """Linear form of one config → (rep idx (k,), weight (k,), side (k,) 'H'/'D'/'HD',
        StrictSelection, H weights, D weights) — the weights act on centred scores."""
        sel = strict_joint_select(self.order_h, self.order_d(cfg.nc_d), self.count, cfg.q, p=self.absr.size)
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


def fold_selection(fold: int, target: str, bs: TrainingBasis, sel: StrictSelection, order_h: np.ndarray,
                   order_d: np.ndarray, count: int, wh: np.ndarray, wd: np.ndarray, nc_h: int,
                   nc_d: int) -> FoldSelection:
    """The FoldSelection record of a ``default`` selection: columns of X, ranks in each side's
    order (−1 beyond the strict prefix), weights on centred scores, ranks used."""
    H = SideSelection(bs.rep_cols[sel.H], prefix_ranks(order_h, sel.H, count), wh, int(nc_h))
    D = SideSelection(bs.rep_cols[sel.D], prefix_ranks(order_d, sel.D, count), wd, int(nc_d))
    return FoldSelection(fold=fold, target=target, H=H, D=D)
