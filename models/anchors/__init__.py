"""Agentic anchors: estimate a model's full mean on a target from a few of its target items (its anchors).

One concept per module, pure numpy, no I/O:
  grid       the fixed person grid (ability x slip rate) and priors over it
  items      the item model of one target (2PL / 1PL with slips, marginal MAP EM on the grid)
  posterior  a model's ability posterior from its anchors; its full-mean estimate and interval
  prior      priors from a source prediction, from metadata, from the population
  choice     the next anchors: most variance of the full mean removed per unit of cost (adaptive)
  baselines  the random mean and the difficulty-stratified mean of the spec
  simulate   a synthetic 2PL population (tests)
"""
from .baselines import Draws, random_draws, stratified_draws
from .choice import next_anchors
from .grid import Grid, ability_grid, normal_log_prior
from .items import ItemFit, ItemParams, fit_items
from .posterior import Estimate, estimate_full_mean, mean_curve
from .prior import ability_curve, invert_mean_curve, prediction_prior, regression_prior

__all__ = ["Draws", "Grid", "ability_curve", "random_draws", "stratified_draws", "next_anchors", "ability_grid", "normal_log_prior",
           "ItemFit", "ItemParams", "fit_items", "Estimate", "estimate_full_mean", "mean_curve",
           "invert_mean_curve", "prediction_prior", "regression_prior"]
