"""A method is one object: its name, the options it reads, ``evaluate`` over a split's folds and ``fit``
over every model, for Goal A (``abs``) and Goal B (``pair``).

Nothing outside a method's own module asks which method it is: the command line builds its flags from
the methods' options (:mod:`warehouse.methods.options`), the API refuses what a method does not read
(:meth:`Method.refuse`), ``pace loocv`` and ``pace fit`` call :meth:`Method.evaluate` and
:meth:`Method.fit` (:mod:`warehouse.evaluate`, :mod:`warehouse.fit`). A new method is one module with a
subclass and one entry in :data:`warehouse.methods.REGISTRY`.
"""
from __future__ import annotations

from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from warehouse.errors import UserError
from warehouse.methods.data import Folds, Input
from warehouse.methods.options import CATALOGUE, Option, Options
from warehouse.matrices import Matrices
from warehouse.methods.results import Evaluation, Fit, abs_rows

TASKS = ("abs", "pair")


def given_names(given: Mapping[str, Any]) -> set[str]:
    """The options actually given (None or False means not given)."""
    return {k for k, v in given.items() if v is not None and v is not False}


class Method:
    """Base class. A subclass sets the class attributes and implements ``evaluate`` (and ``fit`` if it
    can be stored).

    name: ``--method`` value. summary: one line for ``--help``. reads: task -> the options ``pace loocv``
    passes it (a task not listed is not offered). fit_reads: task -> the options ``pace fit`` passes it
    (empty: the method is evaluated only). own_options: options of its own, beyond the catalogue.
    inputs: what it needs besides the score matrices (:class:`~warehouse.methods.data.Input`).
    labelled_only: it sees only the models with a target score (the published model list).
    missing_as_zero: its stored proxy reads a missing score as 0, not as the instance's centre.
    logit_intervals: its stored intervals are residual offsets on the logit scale (pooled with the
    extrapolation splits' residuals for a model out of range), not on the score scale.
    trains_on_target_only: it also trains on the models with target rows and no source rows (which no fold
    holds out, so they are never evaluated).
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    reads: ClassVar[Mapping[str, frozenset[str]]]
    fit_reads: ClassVar[Mapping[str, frozenset[str]]] = {}
    own_options: ClassVar[tuple[Option, ...]] = ()
    inputs: ClassVar[tuple[Input, ...]] = ()
    labelled_only: ClassVar[bool] = False
    missing_as_zero: ClassVar[bool] = False
    logit_intervals: ClassVar[bool] = False
    trains_on_target_only: ClassVar[bool] = False

    # ------------------------------------------------------------------------------------ options
    def declared(self) -> tuple[Option, ...]:
        """Every option this method may be given: the catalogue plus its own."""
        return tuple(CATALOGUE.values()) + self.own_options

    def read(self, task: str, given: Mapping[str, Any]) -> frozenset[str]:
        """The options the method reads for ``task`` in the mode ``given`` selects (e.g. compat's
        auto-tune reads other knobs than its frozen configurations)."""
        return frozenset(self.reads.get(task, ()))

    def options(self, given: Mapping[str, Any] | None = None) -> Options:
        """The values a run uses: the given ones, the defaults for the rest."""
        return Options(self.declared(), given)

    def mode(self, opts: Options) -> str:
        """loocv_runs.mode: 'fit' (in-sample), 'loocv-autotune' or 'loocv'."""
        if opts.get("fit_all"):
            return "fit"
        return "loocv-autotune" if opts.get("auto_tune") else "loocv"

    def refuse(self, task: str, given: Mapping[str, Any], split: str) -> None:
        """Refuse, as a UserError naming the method and the flags, every option given that it does not read
        for ``task``, and any combination it cannot run (:meth:`check`)."""
        if task not in self.reads:
            raise UserError(f"--method {self.name} has no Goal {'A' if task == 'abs' else 'B'} ({task}) "
                            f"evaluation")
        self.check(task, given, split)
        read = self.read(task, given)
        flags = self.flags(given)
        ignored = [flags[k] for k in flags if k in given_names(given) and k not in read]
        if ignored:
            raise UserError(f"--method {self.name}{self.mode_label(given)} does not use {', '.join(ignored)} "
                            f"(pace loocv {task}); drop {'it' if len(ignored) == 1 else 'them'}"
                            + (f"; {self.name} reads {', '.join(flags[k] for k in flags if k in read)}"
                               if read else ""))

    def refuse_fit(self, tasks: tuple[str, ...], given: Mapping[str, Any]) -> None:
        """pace fit: refuse a method that cannot be stored, a task it has no fit for, and options it ignores."""
        if not self.fit_reads:
            raise UserError(f"--method {self.name} is evaluated only; it has no stored fit")
        missing = [t for t in tasks if t not in self.fit_reads]
        if missing:
            raise UserError(f"--method {self.name} has no {'/'.join(missing)} fit")
        read = set().union(*(self.fit_reads[t] for t in tasks))
        flags = self.flags(given)
        ignored = [flags[k] for k in flags if k in given_names(given) and k not in read]
        if ignored:
            raise UserError(f"--method {self.name} does not use {', '.join(ignored)} for --task "
                            f"{'both' if len(tasks) > 1 else tasks[0]}; drop {'it' if len(ignored) == 1 else 'them'}")

    def flags(self, given: Mapping[str, Any]) -> dict[str, str]:
        """name -> flag of the options this method declares, then of the others in ``given`` (another
        method's own options: --<name with dashes>)."""
        flags = {o.name: o.flag for o in self.declared()}
        return {**flags, **{k: "--" + k.replace("_", "-") for k in given if k not in flags}}

    def mode_label(self, given: Mapping[str, Any]) -> str:
        """Words naming the mode in a refusal (compat: ' with --auto-tune')."""
        return ""

    def check(self, task: str, given: Mapping[str, Any], split: str) -> None:
        """Combinations the method cannot run, beyond unread options (none by default)."""

    # ------------------------------------------------------------------------------------- estimators
    def evaluate(self, task: str, folds: Folds, opts: Options, fitted: Fit | None = None) -> Evaluation:
        """Held-out predictions of every fold of ``folds``. ``fitted``: the fit whose interval residuals
        these are, when ``pace fit`` asks for K-fold residuals (a method may reuse its tuned configuration)."""
        raise NotImplementedError

    def fit(self, folds: Folds, opts: Options, tasks: tuple[str, ...]) -> Fit:
        """The proxies of ``tasks`` fitted on every model of ``folds`` (the fold 'all')."""
        raise UserError(f"--method {self.name} has no stored fit")


def hide_targets(m: Matrices, rows: list[int]) -> list[np.ndarray]:
    """The target matrices with ``rows``' cells missing."""
    P = [p.copy() for p in m.P]
    for p in P:
        p[rows] = np.nan
    return P


def masked_split(folds: Folds, loo: Callable[[np.ndarray, list[np.ndarray]], Any]) -> Evaluation:
    """A split's Goal A predictions from a leave-one-out driver ``loo(X, P)`` that skips rows without a
    target: per fold the held-out models' targets are hidden, so each is predicted from exactly its fold's
    training models (the other held-out models have no target to train on)."""
    m = folds.matrices
    pred = np.full((len(m.models), len(m.targets)), np.nan)
    warnings: list[str] = []
    for fold in folds.held_rows():
        result = loo(m.X, hide_targets(m, fold))
        pred[fold] = np.asarray(result.pred, float)[fold]
        warnings += [w for w in result.warnings if w not in warnings and "no target value" not in w]
    return Evaluation(abs_rows(m.models, m.targets, pred), m.target_means(), warnings=warnings)
