"""Result types of the drivers: plain numpy arrays in small dataclasses.

``AbsResult`` (Goal A) and ``PairResult`` (Goal B) are what every table, report and plot reads;
the ``default`` method's results are subclasses that add per-fold choices, exclusions and proxies,
so whatever is written for ``compat`` works for ``default`` too. ``model_names`` names the rows.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from models.common.configs import AbsConfig, DefaultPairConfig, PairConfig
from models.common.proxies import LinearProxy, PairLinear

__all__ = [
    "model_names",
    "SideSelection",
    "FoldSelection",
    "AbsResult",
    "DefaultAbsResult",
    "PairResult",
    "DefaultPairResult",
]


def model_names(models: Optional[Sequence[str]], n: int) -> List[str]:
    """The given names, else ``model_0 … model_{n-1}``."""
    return list(models) if models is not None else [f"model_{i}" for i in range(n)]


@dataclass
class SideSelection:
    """One strategy side of one (fold, target) selection.

    cols: (k,) ascending column indices into X; rank: (k,) position of each
    column in that side's ordering (0 = best); weight: (k,) §14.1 weights
    m_side · a · (Π w)_s; nc: embedding rank used.
    """

    cols: np.ndarray
    rank: np.ndarray
    weight: np.ndarray
    nc: int


@dataclass
class FoldSelection:
    """Selection of fold ``fold`` (held-out model index; -1 = fit-all) and ``target``."""

    fold: int
    target: str
    H: SideSelection
    D: SideSelection


@dataclass
class AbsResult:
    """Goal A result.

    pred, actual: (n, T) float64 (model rows in the input order, targets in
    ``targets`` order); configs: target → AbsConfig used/chosen;
    selections: per (fold, target) ``FoldSelection``; metrics: §10 table;
    sweep: target → objective score of the winner (auto-tune only).
    """

    mode: str
    models: List[str]
    targets: List[str]
    pred: np.ndarray
    actual: np.ndarray
    configs: Dict[str, AbsConfig]
    selections: List[FoldSelection]
    metrics: dict
    sweep: Dict[str, float] = field(default_factory=dict)
    warnings: List[str] = field(default_factory=list)

    def selection_table(self) -> Dict[str, np.ndarray]:
        """Flat columns (H rows first per (fold, target), then D-pt):
        fold, target, side ('H'/'D'), col_idx, rank, weight, nc."""
        cols = {k: [] for k in ("fold", "target", "side", "col_idx", "rank", "weight", "nc")}
        for fs in self.selections:
            for side, s in (("H", fs.H), ("D", fs.D)):
                k = s.cols.size
                cols["fold"].append(np.full(k, fs.fold))
                cols["target"].append(np.full(k, fs.target, dtype=object))
                cols["side"].append(np.full(k, side, dtype=object))
                cols["col_idx"].append(s.cols)
                cols["rank"].append(s.rank)
                cols["weight"].append(s.weight)
                cols["nc"].append(np.full(k, s.nc))
        return {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in cols.items()}


@dataclass
class DefaultAbsResult(AbsResult):
    """``AbsResult`` plus: fold_configs[(fold, target)] → AbsConfig (nested choice),
    excluded[target] → models without a target value, proxies (fit only),
    fold_missing[(fold, target)] / missing[target] → the missing-score treatment chosen."""

    fold_configs: Dict[Tuple[int, str], AbsConfig] = field(default_factory=dict)
    excluded: Dict[str, List[str]] = field(default_factory=dict)
    proxies: Dict[str, LinearProxy] = field(default_factory=dict)
    fold_missing: Dict[Tuple[int, str], str] = field(default_factory=dict)
    missing: Dict[str, str] = field(default_factory=dict)


@dataclass
class PairResult:
    """Goal B result.

    margins, prob: (n, n, T) float64 — [k, j, t] = margin / Platt probability of
    "k beats j" (row k = held-out model in LOOCV); NaN where not predicted
    (diagonal). actual: (n, T) truth. accuracy: target → accuracy and
    "AVERAGE"; count: target → number of scored directed pairs. configs:
    target → PairConfig; a_configs: target → Goal A AbsConfig whose selection
    was pinned; platt: target → (a, b); selections: per (fold, target)
    ``FoldSelection`` with §14.1 Goal B weights; pinned: target → (H pinned,
    D pinned); sweep: target → best accuracy (auto-tune); skipped: list of
    (fold, target, side, nc) fits skipped as degenerate; proxies: fit-all only.
    """

    mode: str
    models: List[str]
    targets: List[str]
    margins: np.ndarray
    prob: np.ndarray
    actual: np.ndarray
    accuracy: Dict[str, float]
    count: Dict[str, int]
    configs: Dict[str, PairConfig]
    a_configs: Dict[str, AbsConfig]
    platt: Dict[str, Tuple[float, float]]
    selections: List[FoldSelection]
    pinned: Dict[str, Tuple[bool, bool]] = field(default_factory=dict)
    sweep: Dict[str, float] = field(default_factory=dict)
    skipped: List[Tuple[int, str, str, int]] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    proxies: Dict[str, PairLinear] = field(default_factory=dict)

    def pred_winner(self) -> np.ndarray:
        """(n, n, T) bool: True where the row model is predicted to beat the column model."""
        return self.margins > 0


@dataclass
class DefaultPairResult(PairResult):
    """``PairResult`` (margins / prob are the symmetrised, averaged predictions) plus:
    directed_margins / directed_prob (n, n, T) — row k from fold k (LOOCV); fold_configs,
    fold_platt[(fold, target)]; excluded[target]; neutral[target] = number of evaluated
    unordered pairs with margin 0 (half credit). ``proxies`` hold ``PairProxy`` objects and
    ``configs`` ``DefaultPairConfig`` objects."""

    directed_margins: Optional[np.ndarray] = None
    directed_prob: Optional[np.ndarray] = None
    fold_configs: Dict[Tuple[int, str], DefaultPairConfig] = field(default_factory=dict)
    fold_platt: Dict[Tuple[int, str], Tuple[float, float]] = field(default_factory=dict)
    excluded: Dict[str, List[str]] = field(default_factory=dict)
    neutral: Dict[str, int] = field(default_factory=dict)

