"""Which options each method reads, so an option a method would ignore is refused, not dropped.

A user who passes ``--q 0.5`` with ``--method default`` believes the run used it; the kernel never
looks at it. Each table below lists, per method, the options its kernel reads (``warehouse.kernels``
for ``pace loocv``, ``warehouse.fit`` for ``pace fit``); :func:`check` refuses any other option that
was given, with one line naming the method and the option. Options every method reads (split,
sources, targets, the output folder, ...) are not listed.
"""
from __future__ import annotations

from typing import Mapping

from warehouse.errors import UserError

#: pace loocv abs: options each method's kernel reads
LOOCV_ABS: dict[str, frozenset[str]] = {
    "default": frozenset({"count", "seed"}),
    "instance": frozenset({"count", "B", "seed", "fit_all", "missing"}),
    "compat": frozenset({"count", "B", "seed", "auto_tune", "strict_budget", "fit_all", "q", "m", "nc_h", "nc_d",
                         "nc_max"}),
    "mean": frozenset(),
    "random-c": frozenset({"count", "seed"}),
    "bench-ridge": frozenset(),
}

#: pace loocv pair
LOOCV_PAIR: dict[str, frozenset[str]] = {
    "default": frozenset({"count", "B", "seed"}),
    "compat": frozenset({"count", "B", "seed", "auto_tune", "strict_budget", "pin_task_a_selection", "m", "nc_h",
                         "nc_d", "nc_max"}),
}

#: compat's two paths read different knobs: the frozen configurations take --q/--m/--nc-h/--nc-d, the
#: auto-tune grid search takes --nc-max (and, for Goal A, a fixed --q) and chooses the rest itself
COMPAT_AUTO_TUNE_IGNORES = frozenset({"m", "nc_h", "nc_d"})
COMPAT_FROZEN_IGNORES = frozenset({"nc_max"})

#: the command-line spelling of each option
FLAG = {"count": "--count", "B": "--B", "seed": "--seed", "auto_tune": "--auto-tune",
        "strict_budget": "--strict-budget", "pin_task_a_selection": "--pin-task-a-selection", "fit_all": "--fit-all",
        "missing": "--missing", "q": "--q", "m": "--m", "nc_h": "--nc-h", "nc_d": "--nc-d", "nc_max": "--nc-max"}


def reads(task: str, method: str, given: Mapping[str, object]) -> set[str]:
    """The options ``method`` reads for ``task`` ('abs' or 'pair') given the mode chosen in ``given``
    (compat's ``fit_all`` / ``auto_tune``)."""
    read = set((LOOCV_ABS if task == "abs" else LOOCV_PAIR)[method])
    if method == "compat":
        if given.get("fit_all"):                    # one in-sample fit with the frozen configurations
            read -= {"auto_tune"} | COMPAT_FROZEN_IGNORES
        elif given.get("auto_tune"):
            read -= COMPAT_AUTO_TUNE_IGNORES
        else:
            read -= COMPAT_FROZEN_IGNORES
    if method == "instance" and given.get("fit_all"):  # the in-sample fit masks missing scores, no choice
        read -= {"missing"}
    return read


def check_loocv(task: str, method: str, given: Mapping[str, object]) -> None:
    """Refuse the options in ``given`` (name -> value; None or False means not given) that ``method``
    ignores for ``task`` ('abs' or 'pair')."""
    read = reads(task, method, given)
    chosen = {k for k, v in given.items() if v is not None and v is not False}
    ignored = [FLAG[k] for k in FLAG if k in chosen and k not in read]
    if ignored:
        mode = ""
        if method == "compat":
            mode = " with --fit-all" if given.get("fit_all") else (" with --auto-tune" if given.get("auto_tune")
                                                                    else " (frozen configurations)")
        raise UserError(f"--method {method}{mode} does not use {', '.join(ignored)} (pace loocv {task}); "
                        f"drop {'it' if len(ignored) == 1 else 'them'}"
                        + (f"; {method} reads {', '.join(FLAG[k] for k in FLAG if k in read)}" if read else ""))


def check_fit(method: str, tasks: tuple[str, ...], given: Mapping[str, object]) -> None:
    """pace fit: the default method's Goal A proxy draws no bootstrap, so --B with --task abs is refused."""
    if given.get("B") is not None and method == "default" and tasks == ("abs",):
        raise UserError("--method default does not use --B for --task abs (only its Goal B fit bootstraps); drop it")
