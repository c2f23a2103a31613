"""What a method receives: a split's folds over the score matrices, plus the inputs it declared.

The evaluation reads, with SQL, the folds of a split (``eval_folds``: fold -> held-out models) and the
cells of every known model once (``fold_cells`` / ``fold_target_cells`` of the fold 'all', i.e.
``Matrices``). A fold's inputs are those matrices' rows in the fold's ``fold_models`` order: the
training models in row order, then the held-out ones (:meth:`Folds.fold`). A method that needs more
declares it as :class:`Input` objects (``Method.inputs``); each is read once per evaluation and handed
over by name (``folds["name"]``):

* :class:`SqlRows`: the rows of a query (e.g. per-instance costs), as an Arrow table;
* :class:`Prior`: another method's held-out predictions on the same folds (e.g. a prior for the method).

The per-instance target cells of every model are in ``matrices.P``; a held-out model's target cells
are what the evaluation scores, so a method that may reveal a few of them (anchors) takes the fold
with the others hidden (:meth:`Fold.hide_targets`).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import duckdb
import numpy as np
import pyarrow as pa

from warehouse.matrices import Matrices


@dataclass
class Fold:
    """One fold: ``matrices`` hold its training models first (rows ``:n_train``), then its held-out ones."""

    name: str
    held_out: list[str]
    matrices: Matrices
    n_train: int

    def hide_targets(self, reveal: Mapping[str, Sequence[tuple[int, int]]] | None = None) -> Matrices:
        """The fold's matrices with the held-out models' target cells missing (NaN), except the
        ``reveal``\\ed ones: held-out model -> [(target index, instance column), ...]."""
        m = self.matrices
        P = [p.copy() for p in m.P]
        for row in range(self.n_train, len(m.models)):
            kept = [(t, c) for t, c in (reveal or {}).get(m.models[row], [])]
            for t, p in enumerate(P):
                cols = [c for k, c in kept if k == t]
                values = m.P[t][row, cols]
                p[row] = np.nan
                p[row, cols] = values
        return replace(m, P=P)


@dataclass
class Folds:
    """A split's folds (``held_out``: fold -> its held-out models, in fold order) over ``matrices``
    (every model the evaluation reads), plus the inputs the method declared (``folds[name]``)."""

    split: str
    matrices: Matrices
    held_out: dict[str, list[str]]
    inputs: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        return self.inputs[name]

    @property
    def names(self) -> list[str]:
        return list(self.held_out)

    def fold(self, name: str) -> Fold:
        """Fold ``name``'s matrices in ``fold_models`` order (training models, then held-out ones)."""
        held = set(self.held_out[name])
        models = self.matrices.models
        rows = [i for i, model in enumerate(models) if model not in held] + \
               [i for i, model in enumerate(models) if model in held]
        n_train = len(models) - len(held & set(models))
        m = self.matrices if n_train == len(models) else self.matrices.subset(rows)
        return Fold(name, list(self.held_out[name]), m, n_train)

    def held_rows(self) -> list[list[int]]:
        """Per fold, its held-out models as row indices of ``matrices`` (folds left empty dropped)."""
        index = {name: i for i, name in enumerate(self.matrices.models)}
        rows = [[index[name] for name in held if name in index] for held in self.held_out.values()]
        return [r for r in rows if r]

    def held_models(self) -> set[str]:
        return {name for held in self.held_out.values() for name in held}

    def labelled_rows(self) -> list[int]:
        """Rows of the models with a target score."""
        return [int(i) for i in np.flatnonzero(np.isfinite(self.matrices.target_means()).any(axis=1))]

    def restrict(self, rows: Sequence[int]) -> "Folds":
        """The same folds over ``rows`` of the matrices (models outside them leave their folds)."""
        m = self.matrices.subset(rows)
        kept = set(m.models)
        held = {f: [name for name in held if name in kept] for f, held in self.held_out.items()}
        return Folds(self.split, m, {f: h for f, h in held.items() if h or self.split == "all"}, self.inputs)


@dataclass
class InputContext:
    """What an :class:`Input` may use to read itself: the connection, the run's sources and targets,
    and ``predict(method, task, folds)`` (another method's held-out prediction rows on ``folds``)."""

    con: duckdb.DuckDBPyConnection
    sources: list[str] | None
    targets: list[str] | None
    predict: Callable[[str, str, Folds], pa.Table]


class Input:
    """Something a method needs besides the score matrices, read once per evaluation or fit."""

    name: str

    def read(self, context: InputContext, folds: Folds) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class SqlRows(Input):
    """The rows of ``sql`` (with ``?`` placeholders filled by ``params(context)``) as an Arrow table."""

    name: str
    sql: str
    params: Callable[[InputContext], list] = lambda context: []

    def read(self, context: InputContext, folds: Folds) -> pa.Table:
        return context.con.sql(self.sql, params=self.params(context)).to_arrow_table()


@dataclass(frozen=True)
class Prior(Input):
    """``method``'s held-out predictions on the same folds (model, target, predicted), e.g. a prior."""

    name: str
    method: str
    task: str = "abs"

    def read(self, context: InputContext, folds: Folds) -> pa.Table:
        return context.predict(self.method, self.task, folds)
