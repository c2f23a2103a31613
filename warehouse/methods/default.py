"""``default``: the Pace proxy on the logit scale, shrunk toward a monotone link from a source-ability scale
(``models.default.shrinkage``); Goal B is ``instance``'s.

Per fold (a row of ``eval_folds``; ``pace fit`` is the fold 'all', which holds nothing out), in three steps:

1. the Pace part of every target, fitted on the fold's training models (selection, nested tuning,
   weights; ``fit_pace_parts``), and its logit for every model of the fold;
2. the source-ability scale fitted without the instances the fold selected (``ability_without``), every
   model's ability on it, and per target the monotone link from ability to target logit
   (``fit_ability_link``);
3. the serving formulas combine them: ``pace_expit(gated_logit(z_pace, link(theta), ability_gate(...)))``,
   the same SQL macros the ``predictions`` view uses (sql/030-033), so evaluation, the fit's in-sample
   check and serving compute a prediction one way.

Folds whose configuration is fixed (``pace fit``'s K-fold interval residuals reuse the fit's) share the
worker threads; tuned folds run one at a time, their tuning on the threads. Every fold's ability runs on
the worker threads with single-threaded BLAS (its soft impute is ~80x slower on two threads).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pyarrow as pa

from models.common.configs import AbsConfig
from models.common.parallel import blas_limit, map_jobs
from models.default.shrinkage import (GATE, W_BASE, ability_without, chance_ability, fit_ability_link, fit_pace_parts,
                              training_rows)
from warehouse.methods.base import Method
from warehouse.methods.data import Fold, Folds
from warehouse.methods.instance import Instance, target_warnings
from warehouse.methods.options import Options
from warehouse.methods.results import (SELECTION_SCHEMA, Evaluation, Fit, Query, StoredProxy, config_row,
                                       config_table)
from warehouse.settings import jobs, kfold_above

#: every model's prediction of every fold from the parts' rows (_pace: fold, target, model, z_pace, held;
#: _theta: fold, model, theta; _links: fold, target, intercept, slope, theta_lo, theta_hi, theta_sd)
COMBINE_SQL = """
WITH placed AS (
    SELECT z.fold, z.model, z.target, z.held, z.z_pace, t.theta, l.intercept + l.slope * t.theta AS z_struct,
           ability_distance(t.theta, l.theta_lo, l.theta_hi, l.theta_sd) AS distance
    FROM _pace AS z
    JOIN _theta AS t USING (fold, model)
    JOIN _links AS l USING (fold, target)
)
SELECT fold, model, target, held, theta, distance,
       pace_expit(gated_logit(z_pace, z_struct, ability_gate(distance, $w_base, $gate))) AS predicted
FROM placed
"""


def _map_folds(fn: Callable, items: Sequence, parallel: bool) -> list:
    """``[fn(x) for x in items]``, on the worker threads under one single-threaded BLAS scope when
    ``parallel``. Each fold holds its own copy of the matrices' rows, so at most ``jobs()`` exist at once."""
    if not parallel or len(items) < 2 or jobs() < 2:
        return [fn(x) for x in items]
    with blas_limit():
        return map_jobs(fn, list(items), jobs())


def _labelled(fold: Fold) -> np.ndarray:
    """The fold's training rows with any target score."""
    train = np.arange(fold.n_train)
    return train[np.isfinite(fold.matrices.target_means()[train]).any(axis=1)]


def _strings(values) -> pa.Array:
    return pa.array(list(values), pa.string())


def _floats(values) -> pa.Array:
    values = np.asarray(values, dtype=np.float64)
    return pa.array(values, pa.float64(), mask=~np.isfinite(values))


class Default(Instance):
    name = "default"
    summary = ("the Pace proxy shrunk toward a source-ability link (extrapolates to models unlike the "
               "training set)")
    reads = {"abs": frozenset({"count", "seed"}), "pair": frozenset({"count", "B", "seed"})}
    fit_reads = reads
    logit_intervals = True

    def read(self, task, given):
        return Method.read(self, task, given)

    # ------------------------------------------------------------------------------------ the parts
    def _pace(self, folds: Folds, name: str, opts: Options, configs: dict | None):
        """Step 1 for one fold: (fold, target -> LinearProxy on the logit scale, warnings)."""
        fold = folds.fold(name)
        m = fold.matrices
        paces, warnings = fit_pace_parts(m.X, m.target_means(), m.targets, train=_labelled(fold), models=m.models,
                                         count=opts.count, seed=opts.seed, n_jobs=jobs(), kfold_above=kfold_above(),
                                         configs=configs)
        return fold.name, paces, warnings, [p.predict(m.X) for p in paces.values()], m.models, fold.n_train

    def _ability(self, folds: Folds, name: str, selected: np.ndarray):
        """Step 2 for one fold: (scale, theta (n,) in the fold's row order, centres (S,), links per target)."""
        fold = folds.fold(name)
        m = fold.matrices
        scale, theta, centres = ability_without(m.X, m.leaves, m.n_leaves, selected,
                                                scale_rows=np.arange(fold.n_train), collapsed=m.collapsed_mask(),
                                                call_group=m.call_groups())
        floor_ability = chance_ability(scale, m.n_leaves)
        Y, n_instances = m.target_means(), m.target_counts()
        links = {}
        for t, (target, rows) in enumerate(training_rows(Y, m.targets, _labelled(fold)).items()):
            links[target] = (fit_ability_link(theta[rows], Y[rows, t], n_instances[rows, t].astype(float),
                                              floor_ability), [m.models[i] for i in rows])
        return scale, theta, centres, links

    def parts(self, folds: Folds, opts: Options, configs: dict | None = None, also_selected=()) -> dict:
        """Steps 1 and 2 over every fold of ``folds``; returns the rows of the three part tables plus, per fold,
        its Pace proxies and ability (``paces``, ``abilities``). ``configs``: target -> AbsConfig fixing the
        Pace parts' configuration (no tuning); ``also_selected``: columns left out of every fold's ability
        besides the fold's own selections."""
        names = folds.names
        paces = _map_folds(lambda name: self._pace(folds, name, opts, configs), names, parallel=configs is not None)
        selected = [np.unique(np.concatenate([np.asarray(p.cols, np.int64) for p in paced.values()]
                                             + [np.asarray(also_selected, np.int64)]))
                    for _, paced, *_ in paces]
        abilities = _map_folds(lambda k: self._ability(folds, names[k], selected[k]), range(len(names)), parallel=True)
        pace_rows: dict[str, list] = {"fold": [], "target": [], "model": [], "z_pace": [], "held": []}
        theta_rows: dict[str, list] = {"fold": [], "model": [], "theta": []}
        link_rows: dict[str, list] = {k: [] for k in ("fold", "target", "intercept", "slope", "theta_lo",
                                                      "theta_hi", "theta_sd")}
        for (name, paced, _, z, models, n_train), (_, theta, _, links) in zip(paces, abilities):
            held = [i >= n_train for i in range(len(models))]
            for target, values in zip(paced, z):
                pace_rows["fold"] += [name] * len(models)
                pace_rows["target"] += [target] * len(models)
                pace_rows["model"] += models
                pace_rows["z_pace"].append(np.asarray(values, np.float64))
                pace_rows["held"] += held
            theta_rows["fold"] += [name] * len(models)
            theta_rows["model"] += models
            theta_rows["theta"].append(np.asarray(theta, np.float64))
            for target, (fitted, _) in links.items():
                for key, value in (("fold", name), ("target", target), ("intercept", fitted.link.intercept),
                                   ("slope", fitted.link.slope), ("theta_lo", fitted.theta_lo),
                                   ("theta_hi", fitted.theta_hi), ("theta_sd", fitted.theta_sd)):
                    link_rows[key].append(value)
        tables = {
            "_pace": pa.table({"fold": _strings(pace_rows["fold"]), "target": _strings(pace_rows["target"]),
                               "model": _strings(pace_rows["model"]),
                               "z_pace": _floats(np.concatenate(pace_rows["z_pace"] or [np.zeros(0)])),
                               "held": pa.array(pace_rows["held"], pa.bool_())}),
            "_theta": pa.table({"fold": _strings(theta_rows["fold"]), "model": _strings(theta_rows["model"]),
                                "theta": _floats(np.concatenate(theta_rows["theta"] or [np.zeros(0)]))}),
            "_links": pa.table({"fold": _strings(link_rows["fold"]), "target": _strings(link_rows["target"]),
                                **{k: _floats(link_rows[k]) for k in ("intercept", "slope", "theta_lo", "theta_hi",
                                                                       "theta_sd")}}),
        }
        return {"tables": tables, "paces": paces, "abilities": abilities}

    # ------------------------------------------------------------------------------------- evaluate
    def evaluate(self, task: str, folds: Folds, opts: Options, fitted: Fit | None = None) -> Evaluation:
        if task == "pair":
            return self.evaluate_pair(folds, opts)
        configs = None
        if fitted is not None:     # K-fold interval residuals: the fit's tuned configuration, not re-tuned
            configs = {p.target: AbsConfig(**{k: p.config[k] for k in ("m", "nc_h", "nc_d", "q")})
                       for p in fitted.proxies}
        m = folds.matrices
        parts = self.parts(folds, opts, configs)
        held = folds.held_models()
        actual = m.target_means()
        actual[[i for i, name in enumerate(m.models) if name not in held]] = np.nan
        scored = [name for name, row in zip(m.models, actual) if np.isfinite(row).any()]
        tables = dict(parts["tables"], _scored=pa.table({"model": _strings(scored)}))
        query = Query(f"SELECT model, target, predicted FROM ({COMBINE_SQL}) WHERE held AND model IN "
                      "(SELECT model FROM _scored)", tables, {"w_base": W_BASE, "gate": GATE})
        configs_out, selections = [], {k: [] for k in SELECTION_SCHEMA.names}
        for name, paced, *_ in parts["paces"]:
            for held_model in folds.held_out[name]:
                for target, p in paced.items():
                    configs_out.append(config_row(target, held_model, p.config))
                    k = len(p.cols)
                    for key, value in (("fold", [held_model] * k), ("target", [target] * k),
                                       ("side", [str(s) for s in p.side]), ("col", np.asarray(p.cols).tolist()),
                                       ("rank", [None] * k), ("weight", np.asarray(p.weight, float).tolist()),
                                       ("nc", [None] * k)):
                        selections[key] += value
        return Evaluation(query, actual, config_table(configs_out),
                          pa.table(selections, schema=SELECTION_SCHEMA))

    # ------------------------------------------------------------------------------------------ fit
    def fit(self, folds: Folds, opts: Options, tasks: tuple[str, ...]) -> Fit:
        """Goal B first (its selected instances are left out of the ability too: a plan asks for them),
        then Goal A on the fold 'all' through the same parts and formulas as the evaluation."""
        m, out = folds.matrices, Fit()
        if "pair" in tasks:
            out.pair_proxies, out.warnings = self.fit_pair(m, opts)
        if "abs" not in tasks:
            return out
        pair_cols = np.unique(np.concatenate([np.asarray(p.cols, np.int64) for p in out.pair_proxies]
                                             or [np.zeros(0, np.int64)]))
        parts = self.parts(folds, opts, also_selected=pair_cols)
        (_, paced, warnings, *_), (scale, _, centres, links) = parts["paces"][0], parts["abilities"][0]
        for target in m.targets:
            p, (fitted, trained_on) = paced[target], links[target]
            link = {"struct_intercept": fitted.link.intercept, "struct_slope": fitted.link.slope,
                    "floor_intercept": fitted.floor.intercept, "floor_slope": fitted.floor.slope,
                    "gate_base": W_BASE, "gate_width": GATE, "ability_lo": fitted.theta_lo,
                    "ability_hi": fitted.theta_hi, "ability_sd": fitted.theta_sd, "range_lo": fitted.range_lo,
                    "range_hi": fitted.range_hi, "scale": scale, "centres": centres}
            cfg = p.config
            out.proxies.append(StoredProxy(target, np.asarray(p.cols, np.int64), [str(s) for s in p.side],
                                           np.asarray(p.weight, float), np.asarray(p.centre, float), float(p.intercept),
                                           float(p.lo), float(p.hi), float(cfg.m),
                                           {"m": cfg.m, "nc_h": cfg.nc_h, "nc_d": cfg.nc_d, "q": cfg.q}, None,
                                           list(trained_on), link))
        out.warnings = target_warnings(warnings, m.targets) + out.warnings
        out.in_sample = Query(f"SELECT model, target, predicted FROM ({COMBINE_SQL})", parts["tables"],
                              {"w_base": W_BASE, "gate": GATE})
        return out
