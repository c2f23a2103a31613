"""``compat``: the published pipeline as published (spec pace-method.md), on the published loader's arrays.

It keeps the published zeros for missing data, float32 storage, the zero-variance filter, the basis
computed with the held-out model and auto-tune on the evaluation predictions themselves. Its model
list is the models with a target score (a model with source scores only would enter it with targets
of 0). Under a split other than ``loo`` each held-out model is predicted by the published LOOCV on
exactly the models it may learn from plus itself (the published loader gives every model a target, so
held-out rows cannot be hidden by masking).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

import numpy as np

from models.compat import goal_a as compat
from models.compat import goal_b as pair
from warehouse.errors import UserError
from warehouse.matrices import Matrices, published_arrays
from warehouse.methods.base import Method
from warehouse.methods.data import Folds
from warehouse.methods.options import Options
from warehouse.methods.results import (Evaluation, Fit, StoredPairProxy, StoredProxy, abs_rows, config_rows,
                                       pair_rows, selection_rows)

_BUDGET = frozenset({"count", "B", "seed"})
_KNOBS = frozenset({"m", "nc_h", "nc_d"})     # the frozen configurations' overrides


class Compat(Method):
    name = "compat"
    summary = "the published pipeline as published"
    reads = {"abs": _BUDGET | _KNOBS | {"auto_tune", "strict_budget", "fit_all", "q", "nc_max"},
             "pair": _BUDGET | _KNOBS | {"auto_tune", "strict_budget", "pin_task_a_selection", "nc_max"}}
    fit_reads = {"abs": _BUDGET, "pair": _BUDGET}
    labelled_only = True
    missing_as_zero = True

    def read(self, task: str, given: Mapping[str, Any]) -> frozenset[str]:
        """The frozen configurations take --q/--m/--nc-h/--nc-d; auto-tune takes --nc-max (and, for Goal A,
        a fixed --q) and chooses the rest; --fit-all is one in-sample fit with the frozen configurations."""
        read = set(super().read(task, given))
        if task == "abs" and given.get("fit_all"):
            read -= {"auto_tune", "nc_max"}
        elif given.get("auto_tune"):
            read -= _KNOBS
        else:
            read -= {"nc_max"}
        return frozenset(read)

    def mode_label(self, given: Mapping[str, Any]) -> str:
        if given.get("fit_all"):
            return " with --fit-all"
        return " with --auto-tune" if given.get("auto_tune") else " (frozen configurations)"

    def check(self, task: str, given: Mapping[str, Any], split: str) -> None:
        if task == "abs" and not given.get("strict_budget"):
            raise UserError("compat implements the strict joint budget (the published headline path): add "
                            "--strict-budget")
        if task == "pair" and not (given.get("strict_budget") and given.get("pin_task_a_selection")):
            raise UserError("compat implements the published headline path: add --strict-budget "
                            "--pin-task-a-selection")
        if given.get("auto_tune") and split != "loo":
            raise UserError("compat's --auto-tune scores configurations on the evaluation predictions themselves; "
                            "on a split it would tune on the held-out models: use --split loo (the published "
                            "protocol) or drop --auto-tune")

    # -------------------------------------------------------------------------------------- evaluate
    def evaluate(self, task: str, folds: Folds, opts: Options, fitted: Fit | None = None) -> Evaluation:
        m = folds.matrices
        if folds.split == "loo":
            return self._loo(task, m, folds.labelled_rows(), opts)
        # each held-out model: the published LOOCV on its fold's training models plus itself
        labelled = set(folds.labelled_rows())
        Y_pub = published_arrays(m.X, m.P)[3].astype(float)
        n, T = Y_pub.shape
        pred = np.full((n, T), np.nan) if task == "abs" else np.full((n, n, T), np.nan)
        prob = np.full((n, n, T), np.nan)
        for fold in folds.held_rows():
            train = sorted(labelled - set(fold))
            for i in fold:
                rows = sorted(train + [i])
                result, _ = self._run(task, m.subset(rows), opts)
                k = rows.index(i)
                if task == "abs":
                    pred[i] = np.asarray(result.pred, float)[k]
                else:
                    pred[i, rows] = np.asarray(result.margins, float)[k]
                    prob[i, rows] = np.asarray(result.prob, float)[k]
        predictions = abs_rows(m.models, m.targets, pred) if task == "abs" else \
            pair_rows(m.models, m.targets, pred, prob, np.zeros(pred.shape, bool))
        return Evaluation(predictions, actual=Y_pub)

    def _loo(self, task: str, m: Matrices, rows: list[int], opts: Options) -> Evaluation:
        """The published LOOCV of ``task`` on ``rows`` (the models with a target score)."""
        sub = m.subset(rows)
        result, kept = self._run(task, sub, opts)
        actual = np.full((len(m.models), len(m.targets)), np.nan)
        actual[rows] = np.asarray(result.actual, float)
        if task == "abs":
            predictions = abs_rows(sub.models, m.targets, result.pred)
        else:   # the published rule: a zero margin is a predicted loss, never an abstention
            margins = np.asarray(result.margins, float)
            predictions = pair_rows(sub.models, m.targets, margins, result.prob, np.zeros(margins.shape, bool))
        return Evaluation(predictions, actual, config_rows(result, sub.models),
                          selection_rows(result.selections, sub.models, kept), list(result.warnings))

    def _run(self, task: str, m: Matrices, opts: Options):
        """The published driver of ``task`` on these matrices: (result, kept columns)."""
        Xv, kept, P32, Y = published_arrays(m.X, m.P)
        common = dict(models=m.models, count=opts.count, B=opts.B, seed=opts.seed)
        if task == "pair":
            common.update(pin_a=True, strict=True)
            if opts.auto_tune:
                return pair.loocv_pair_autotune(Xv, Y, P32, m.targets, nc_max=opts.nc_max, **common), kept
            configs, _ = pair.frozen_pair_configs(opts.count, m.targets, pin_a=True)
            changes = {k: opts[k] for k in ("m", "nc_h", "nc_d") if opts[k] is not None}
            configs = {t: replace(c, **changes) for t, c in configs.items()} if changes else configs
            return pair.loocv_pair_frozen(Xv, Y, P32, m.targets, configs=configs, **common), kept
        if opts.fit_all:
            configs, _ = compat.frozen_abs_configs(opts.count, m.targets, q=opts.q, m=opts.m, nc_h=opts.nc_h,
                                                   nc_d=opts.nc_d)
            return compat.fit_abs(Xv, Y, P32, m.targets, configs=configs, **common), kept
        if opts.auto_tune:
            return compat.loocv_abs_autotune(Xv, Y, P32, m.targets, q_grid=None if opts.q is None else [opts.q],
                                             nc_max=opts.nc_max, m_grid=compat.M_GRID, **common), kept
        configs, warn = compat.frozen_abs_configs(opts.count, m.targets, q=opts.q, m=opts.m, nc_h=opts.nc_h,
                                                  nc_d=opts.nc_d)
        result = compat.loocv_abs_frozen(Xv, Y, P32, m.targets, configs=configs, **common)
        if warn:
            result.warnings.append(warn)
        return result, kept

    # ------------------------------------------------------------------------------------------- fit
    def fit(self, folds: Folds, opts: Options, tasks: tuple[str, ...]) -> Fit:
        """The published fit-pair (strict, pinned to Goal A's selection, frozen pinned-A configurations) and
        fit-abs (strict, frozen configurations), weights in their exact linear form."""
        m = folds.matrices
        Xv, kept, P32, Y = published_arrays(m.X, m.P)
        common = dict(models=m.models, count=opts.count, B=opts.B, seed=opts.seed)
        out = Fit()
        if "pair" in tasks:
            configs, _ = pair.frozen_pair_configs(opts.count, m.targets, pin_a=True)
            res = pair.fit_pair(Xv, Y, P32, m.targets, pin_a=True, strict=True, configs=configs, **common)
            for target in m.targets:
                p = res.proxies[target]
                cols_v = np.asarray(p.cols, int)
                config = {k: getattr(p.config, k) for k in ("m", "nc_h", "nc_d", "q", "nc", "reg")
                          if hasattr(p.config, k)}
                out.pair_proxies.append(StoredPairProxy(target, kept[cols_v], np.asarray(p.weight, float),
                                                        Xv[:, cols_v].mean(axis=0), float(p.a), float(p.b), config))
            out.warnings += list(res.warnings)
        if "abs" in tasks:
            configs, warn = compat.frozen_abs_configs(opts.count, m.targets)
            res = compat.fit_abs(Xv, Y, P32, m.targets, configs=configs, weight_mode="predictor", **common)
            out.proxies = [self._stored(res, Xv, kept, Y, t, target) for t, target in enumerate(m.targets)]
            out.warnings = ([warn] if warn else []) + out.warnings
        return out

    @staticmethod
    def _stored(res, Xv: np.ndarray, kept: np.ndarray, Y: np.ndarray, t: int, target: str) -> StoredProxy:
        table = res.selection_table()
        mask = np.asarray(table["target"]) == target
        cols_v = np.asarray(table["col_idx"], int)[mask]
        weight = np.asarray(table["weight"], float)[mask]
        center = Xv[:, cols_v].mean(axis=0)
        signal = (Xv[:, cols_v] - center) @ weight
        pred = np.asarray(res.pred[:, t], float)
        intercept = float(np.median(pred - signal))      # the pooled label mean; exact unless a side fell back
        y = Y[:, t].astype(float)
        spread = max(float(y.max() - y.min()), 1e-6)
        cfg = res.configs[target]
        # The published envelope falls back to the mean outside [min - 2R, max + 2R]; a clamp is the
        # closest linear-plus-clip form, and scores live in [0, 1] anyway (spec §20 item 12).
        lo, hi = max(float(y.min() - 2 * spread), 0.0), min(float(y.max() + 2 * spread), 1.0)
        return StoredProxy(target, kept[cols_v], [str(s) for s in np.asarray(table["side"])[mask]], weight, center,
                           intercept, lo, hi, float(cfg.m),
                           {"m": cfg.m, "nc_h": cfg.nc_h, "nc_d": cfg.nc_d, "q": cfg.q}, pred)
