"""Agentic anchors: estimate a model's full mean on a target from a few of its target items (its anchors).

One concept per module, pure numpy, no I/O:
  grid       the fixed person grid (ability x slip rate) and priors over it
  items      the item model of one target (2PL / 1PL with slips, marginal MAP EM on the grid)
  posterior  a model's ability posterior from its anchors; its full-mean estimate and interval
  prior      priors from a source prediction, from metadata, from the population
  choice     the next anchors: most variance of the full mean removed per unit of cost (adaptive)
  calibration  the split-conformal widening factor of the interval
  baselines  the random mean and the difficulty-stratified mean of the spec
  range      out-of-range verdicts (robust per-leaf votes, release dates) and the widened interval
  simulate   a synthetic 2PL population (tests)

The estimator bench/anchors.py chose (bench/results/anchors_experiments.md): ``fit_items(y, slopes="shared")``
on the training models (1PL with slips), a Student-t ability prior from the metadata regression (else the
sources prior, else the population), ``next_anchors`` 5 at a time, ``estimate_full_mean(...).median``, and the
interval widened by a ``conformal_factor`` learnt on inner folds of the training models.
"""
from .baselines import Draws, random_draws, stratified_draws
from .choice import next_anchors
from .grid import Grid, ability_grid, normal_log_prior
from .items import ItemFit, ItemParams, fit_items
from .posterior import Estimate, estimate_full_mean, mean_curve
from .prior import ability_curve, invert_mean_curve, prediction_prior, regression_prior

__all__ = ["Draws", "Grid", "ItemFit", "ItemParams", "Estimate", "ability_curve", "ability_grid",
           "estimate_full_mean", "fit_items", "invert_mean_curve", "mean_curve", "next_anchors", "normal_log_prior",
           "prediction_prior", "random_draws", "regression_prior", "stratified_draws"]
