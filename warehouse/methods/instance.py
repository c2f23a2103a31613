"""``instance``: the instance-level Pace proxy with the published flaws fixed (spec §18-§20), Goal A and B.

Goal A (``models.default.goal_a``): masked missing data, an inductive basis, nested tuning inside every fold,
deduplicated columns, rank truncation. Goal B (``models.default.goal_b``): the same selection, the exact
soft-label logistic, cross-fitted Platt calibration, each unordered pair scored once as the average of
its two directed predictions, a degenerate fit a neutral 1/2. The ``default`` method shares this Goal B.

Under a split other than ``loo`` the held-out models' targets are hidden (masked) and the leave-one-out
drivers run on what remains: each held-out model is then predicted from exactly its fold's training models.
"""
from __future__ import annotations

import numpy as np

from models.default.goal_a import fit_abs_default, loocv_abs_default
from models.default.goal_b import fit_pair_default, loocv_pair_default
from warehouse.matrices import Matrices
from warehouse.methods.base import Method, hide_targets, masked_split
from warehouse.methods.data import Folds
from warehouse.methods.options import Options
from warehouse.methods.results import (Evaluation, Fit, StoredPairProxy, StoredProxy, abs_rows, config_row,
                                       config_rows, config_table, pair_rows, selection_rows)
from warehouse.settings import jobs, kfold_above

_BUDGET = frozenset({"count", "B", "seed"})


def target_warnings(warnings: list[str], targets: list[str]) -> list[str]:
    """The per-target warnings ("target: ...") of ``targets``, in target order, each once."""
    out: list[str] = []
    for target in targets:
        out += [w for w in warnings if w.startswith(f"{target}: ") and w not in out]
    return out


class Instance(Method):
    name = "instance"
    summary = "the Pace proxy alone with the published flaws fixed"
    reads = {"abs": _BUDGET | {"fit_all", "missing"}, "pair": _BUDGET}
    fit_reads = {"abs": _BUDGET, "pair": _BUDGET}

    def read(self, task, given):
        read = super().read(task, given)
        return read - {"missing"} if given.get("fit_all") else read   # the in-sample fit masks, no choice

    def evaluate(self, task: str, folds: Folds, opts: Options, fitted: Fit | None = None) -> Evaluation:
        return self.evaluate_abs(folds, opts) if task == "abs" else self.evaluate_pair(folds, opts)

    # ---------------------------------------------------------------------------------------- Goal A
    def evaluate_abs(self, folds: Folds, opts: Options) -> Evaluation:
        m = folds.matrices
        common = dict(models=m.models, count=opts.count, B=opts.B, seed=opts.seed, n_jobs=jobs())
        if opts.fit_all:
            result = fit_abs_default(m.X, m.P, m.targets, **common)
        elif folds.split == "loo":
            result = loocv_abs_default(m.X, m.P, m.targets, nested=True, missing=opts.missing, **common)
        else:
            return masked_split(folds, lambda X, P: loocv_abs_default(X, P, m.targets, nested=True,
                                                                       missing=opts.missing, **common))
        return Evaluation(abs_rows(m.models, m.targets, result.pred), np.asarray(result.actual, float),
                          config_rows(result, m.models), selection_rows(result.selections, m.models),
                          list(result.warnings))

    def fit_abs(self, m: Matrices, opts: Options) -> tuple[list[StoredProxy], list[str]]:
        res = fit_abs_default(m.X, m.P, m.targets, models=m.models, count=opts.count, B=opts.B, seed=opts.seed,
                              n_jobs=jobs())
        out = []
        for t, target in enumerate(m.targets):
            p = res.proxies[target]
            cfg = p.config
            out.append(StoredProxy(target, np.asarray(p.cols), [str(s) for s in p.side], np.asarray(p.weight, float),
                                   np.asarray(p.centre, float), float(p.intercept), float(p.lo), float(p.hi),
                                   float(cfg.m), {"m": cfg.m, "nc_h": cfg.nc_h, "nc_d": cfg.nc_d, "q": cfg.q},
                                   np.asarray(res.pred[:, t], float), list(p.trained_on)))
        return out, list(res.warnings)

    # ---------------------------------------------------------------------------------------- Goal B
    def evaluate_pair(self, folds: Folds, opts: Options) -> Evaluation:
        """Directed predictions (model k over opponent j from a proxy that never saw k's target), averaged
        over the two directions of each pair: margin(k, j) = (d(k, j) - d(j, k)) / 2, p(k, j) =
        (p_d(k, j) + 1 - p_d(j, k)) / 2. Under loo one leave-one-out pass gives every fold's directed row
        (d(j, k) from the opponent's own fold); under other splits a fold hides its targets and predicts
        both directions itself."""
        m = folds.matrices
        n, T = len(m.models), len(m.targets)
        margins, prob = np.full((n, n, T), np.nan), np.full((n, n, T), np.nan)
        configs, selections = [], []
        if folds.split == "loo":
            passes = [([r for fold in folds.held_rows() for r in fold], [])]
        else:
            passes = [(fold, fold) for fold in folds.held_rows()]
        for rows, hidden in passes:
            result = loocv_pair_default(m.X, hide_targets(m, hidden), m.targets, models=m.models, count=opts.count,
                                        B=opts.B, seed=opts.seed, n_jobs=jobs())
            d = np.where(np.isfinite(result.directed_margins), result.directed_margins, np.nan)
            p = np.where(np.isfinite(result.directed_prob), result.directed_prob, np.nan)
            sym_margin, sym_prob = 0.5 * (d - d.transpose(1, 0, 2)), 0.5 * (p + 1 - p.transpose(1, 0, 2))
            # the opponent's direction: from its own fold under loo (only models some fold holds out)
            opponents = rows if folds.split == "loo" else list(range(n))
            block = np.ix_(rows, opponents)
            margins[block], prob[block] = sym_margin[block], sym_prob[block]
            configs += [config_row(t, m.models[k], cfg, None, result.fold_platt.get((k, t)))
                        for (k, t), cfg in sorted(result.fold_configs.items()) if k in rows]
            selections += [fs for fs in result.selections if fs.fold in rows]
        # an exactly zero margin is an abstention (degenerate fit): p = 1/2, half a correct answer
        neutral = np.isfinite(margins) & (margins == 0)
        return Evaluation(pair_rows(m.models, m.targets, margins, prob, neutral), configs=config_table(configs),
                          selections=selection_rows(selections, m.models))

    def fit_pair(self, m: Matrices, opts: Options) -> tuple[list[StoredPairProxy], list[str]]:
        """Every model with the target: configuration by their leave-one-out, Platt on those out-of-fold
        margins, weights on all of them."""
        fit = fit_pair_default(m.X, m.P, m.targets, models=m.models, count=opts.count, B=opts.B, seed=opts.seed,
                               n_jobs=jobs(), kfold_above=kfold_above())
        out = []
        for target in m.targets:
            p = fit.proxies[target]
            cfg = p.config
            out.append(StoredPairProxy(target, np.asarray(p.cols, np.int64), np.asarray(p.weight, float),
                                       np.asarray(p.centre, float), float(p.a), float(p.b),
                                       {"m": float(cfg.m), "q": None if cfg.q is None else float(cfg.q),
                                        "nc": int(cfg.nc)}, list(p.trained_on)))
        return out, target_warnings(list(fit.warnings), m.targets)

    def fit(self, folds: Folds, opts: Options, tasks: tuple[str, ...]) -> Fit:
        m, out = folds.matrices, Fit()
        if "pair" in tasks:
            out.pair_proxies, out.warnings = self.fit_pair(m, opts)
        if "abs" in tasks:
            out.proxies, warnings = self.fit_abs(m, opts)
            out.warnings = warnings + out.warnings
        return out
