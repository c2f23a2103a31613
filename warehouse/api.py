"""The Python API of the warehouse: :class:`Warehouse`. The ``pace`` command line is a thin layer over it.

Every rule a command applies lives here (checks of the options, refusals, which proxy predicts a
model), so a script gets the same answers and the same errors as the command line. An error a user
can fix is a :class:`~warehouse.errors.UserError` whose message names the bad value.

Connections are opened per call and closed after it: a ``Warehouse`` object holds no lock, so other
processes (a ``pace shell``, a running ingest) keep working beside it. Long computations run on a
read-only connection; the file is opened for writing only to store their rows.
"""
from __future__ import annotations

import contextlib
import csv
import math
import os
import time
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Callable, ContextManager, Optional, Sequence, Union

import duckdb

from eval_runners.secrets import redact, resolve_credentials
from ingest import summaries
from ingest.csvfile import DUPLICATE_POLICIES
from ingest.harness import READERS, read_results
from ingest.harness_map import load_map
from ingest.lake import discard_if_unused, lake_drift, lake_of, owner_problem, pending
from ingest.load import ingest_tree, load_units
from ingest.tree import discover
from warehouse import aliases, methods, settings, stored_predictions, validate
from warehouse import plan as planning
from warehouse import predict as predicting
from models.common.parallel import Beside, blas_limit
from warehouse.anchors import fit_anchor_inputs, plan_anchors, read_anchor_inputs, store_anchor_fit
from warehouse.connect import connect, remove_database_files
from warehouse.doctor import rebuild_from_lake, run_doctor
from warehouse.errors import UserError, pace_command, register_api, register_options
from warehouse.evaluate import EvalRequest, compute_eval, metrics_rows, pair_metrics_rows, store_eval
from warehouse.export import export_parquet
from warehouse.export_eee import export_eee
from warehouse.fit import FitRequest, fit_and_store
from warehouse.outputs import check_names, output_run
from warehouse.pace_bench import export_pace_bench, import_pace_bench
from warehouse.plots import plot_sweep
from warehouse.predict import PredictionReport
from warehouse.roles import set_role
from warehouse.run_outputs import RunOutputs
from warehouse.selections import import_selections
from warehouse.shell import run_shell
from warehouse.sqlguard import after_write, before_write, explain, run as run_sql, statement_types
from ingest.openhands_index import import_index, read_index
from ingest.preference import EVERY_MODEL, SOURCES
from warehouse.report import write_report

Names = Union[str, Sequence[str], None]

TASKS = ("abs", "pair")
FIT_TASKS = ("abs", "pair", "both")
EXPORT_FORMATS = ("parquet", "eee")


def _names(value: Names) -> Optional[list[str]]:
    """'a,b' / ['a', 'b c'] / ['a,b', 'c'] -> ['a', 'b', 'c']; None stays None."""
    if value is None:
        return None
    items = [value] if isinstance(value, str) else list(value)
    return validate.split_list([part for item in items for part in str(item).split()] or [""])


@dataclass
class LoocvRun:
    """A stored evaluation: its ``run_id`` keys the rows of ``loocv_predictions`` (or
    ``loocv_pair_predictions``), ``loocv_selections``, ``loocv_configs`` and the metric views."""
    run_id: str
    task: str
    method: str
    split: str
    seconds: float
    metrics: list[dict]           # per target, then the AVERAGE row (MAE in pp; pair accuracy in %)
    configs: list[dict]
    outputs: list[Path] = field(default_factory=list)   # files written with ``out`` (the CSV first)
    title: str = ""               # e.g. 'Goal A default split=loo C=100 seed=42'
    notes: list[str] = field(default_factory=list)    # e.g. the models left out (no source rows)


@dataclass
class Sweep:
    """A budget sweep: per (method, count) its stored run and average MAE (pp) and Spearman; the plot."""
    results: list[dict]
    plot: Optional[Path]


@dataclass
class Plan:
    """What a model still has to be run on for the current fits (see ``warehouse.plan``)."""
    model: str
    rows: list[tuple[str, str, str]]          # (benchmark, subdir, instance_id) still owed
    calls: list[tuple[str, str, str]]         # the same deduplicated into API calls
    per_benchmark: list[dict]                 # benchmark, instances, calls, subtasks, share, half_width
    targets: list[str]
    interval_half_width_now: dict[str, float]
    zero_weight_left_out: int
    restricted: Optional[dict] = None         # the other path: a proxy on the source benchmarks it has
    anchors: list = field(default_factory=list)   # per target: warehouse.anchors.TargetAnchors (--anchors K)
    budget_left_out: int = 0                  # anchors dropped to stay within ``budget``
    notes: list[str] = field(default_factory=list)

    @property
    def anchor_rows(self) -> list:
        return [r for t in self.anchors for r in t.rows]


@dataclass
class Prediction(PredictionReport):
    """:class:`warehouse.predict.PredictionReport` plus the fit's interval level and pair results."""
    interval_level: Optional[float] = None
    pairwise: list[dict] = field(default_factory=list)


@register_api                        # its signatures spell options in error messages (errors.spoken)
class Warehouse:
    """A Pace warehouse file: ingest score trees, evaluate and fit the proxies, plan, predict, export, query.

    Parameters
    ----------
    path : str or os.PathLike, optional
        The DuckDB file. Default ``$PACE_DB``, else ``./pace.duckdb``; ``~`` is expanded.
    read_only : bool, default False
        Refuse every call that would write (``ingest``, storing ``loocv`` / ``fit`` rows, a restricted
        fit made by ``predict``). Reading never takes the write lock either way.
    lake : str or os.PathLike, optional
        The Parquet lake folder for ``ingest`` (default: ``$PACE_LAKE``, else the one recorded in the
        warehouse, else a folder beside the file named after it: ``lake/`` for ``pace.duckdb``,
        ``NAME.lake/`` for ``NAME.duckdb``). A lake of another warehouse is refused.
    status : callable, optional
        ``status(message)`` returning a context manager, entered around long steps (the command line
        passes a spinner). Default: nothing is shown.

    Examples
    --------
    On a small synthetic tree (``pace demo-data``), from ingest to a prediction:

    >>> import tempfile, pathlib
    >>> from ingest.synthetic import generate_tree
    >>> from warehouse import Warehouse
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> summary = generate_tree(tmp / "tree", n_models=7, seed=5, scale=0.1)
    >>> wh = Warehouse(tmp / "pace.duckdb")
    >>> wh.ingest(tmp / "tree").models == sorted(summary.models)
    True
    >>> wh.sql("SELECT count(DISTINCT model) AS n FROM scores").column("n").to_pylist()
    [7]
    >>> report = wh.fit(method="instance", task="abs", sources="planbench ifeval", count=10, B=5,
    ...                 intervals=False, exclude=summary.models[-1])
    >>> sorted(p.target for p in wh.predict(summary.models[-1]).predictions)
    ['gaia', 'swebench', 'swebench_multimodal', 'swtbench']
    >>> Warehouse(tmp / "pace.duckdb", read_only=True).fit()
    Traceback (most recent call last):
    ...
    warehouse.errors.UserError: ... was opened read-only: storing a fit needs Warehouse(path, read_only=False)
    >>> import shutil; shutil.rmtree(tmp)
    """

    def __init__(self, path: Union[str, os.PathLike, None] = None, *, read_only: bool = False,
                 lake: Union[str, os.PathLike, None] = None,
                 status: Optional[Callable[[str], ContextManager]] = None):
        self.path = settings.db_path(path)
        self.read_only = read_only
        self.lake = lake
        self._status = status or (lambda message: contextlib.nullcontext())

    def __repr__(self) -> str:
        return f"Warehouse({str(self.path)!r}, read_only={self.read_only})"

    # ------------------------------------------------------------------------------------ connections
    def connect(self, *, write: bool = False, create: bool = False) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection with every view and the kernel UDFs registered; close it when done.

        Parameters
        ----------
        write : bool, default False
            Open read-write (refused when the warehouse was opened ``read_only``). Rows written to
            ``scores`` or ``benchmarks`` through it reach the stored ``collapsed_cells`` (and so
            ``predictions``) only once recomputed: ``Warehouse.sql(..., write=True)`` does that
            itself, else `pace doctor` (or ``ingest.derived.refresh_stale`` after ``mark_stale``).
        create : bool, default False
            With ``write``, create the file if it does not exist (its folder must).

        Examples
        --------
        >>> con = Warehouse("pace.duckdb").connect()                               # doctest: +SKIP
        >>> con.execute("SELECT count(*) FROM scores").fetchone()                  # doctest: +SKIP
        """
        if write:
            self._require_writable("opening for writing")
            return connect(self.path, create=create)
        return connect(self.path, read_only=True)

    @contextlib.contextmanager
    def _reading(self):
        con = self.connect()
        try:
            yield con
        finally:
            con.close()

    @contextlib.contextmanager
    def _writing(self, what: str, *, create: bool = False):
        """A read-write connection for ``what`` (refused on a read-only Warehouse), closed after the block.

        With ``create``, a warehouse this call creates is removed again when the block raises (with its lake
        folder if that is new and holds nothing): a first ingest or import that failed leaves nothing behind.
        Only a database file that did not exist before the call is ever removed."""
        self._require_writable(what)
        db = Path(self.path)
        created = create and not db.exists()
        con = self.connect(write=True, create=create)
        lake, lake_existed = None, False
        try:
            if created:                 # a --lake that cannot be a folder is refused here: the file goes too
                lake = lake_of(con, self.lake)
                lake_existed = lake.exists()
            yield con
        except BaseException:
            if created:
                con.close()
                remove_database_files(db)
                if lake is not None and not lake_existed:
                    discard_if_unused(lake)
            raise
        finally:
            con.close()

    def _probe_writable(self, why: str, model: str) -> None:
        """Fail at once, before long work, when the file cannot be opened for writing (the advice names
        `pace predict`: `pace report` predicts too, and has no --no-restrict)."""
        try:
            connect(self.path).close()
        except UserError as exc:
            raise UserError(f"{why}; but {exc} (once it can be written, `{pace_command('predict', model)}` stores "
                            f"it; `{pace_command('predict', model, '--no-restrict')}` imputes the missing "
                            "benchmarks instead)") from exc

    def _require_writable(self, what: str) -> None:
        if self.read_only:
            raise UserError(f"{self.path} was opened read-only: {what} needs Warehouse(path, read_only=False)")

    # -------------------------------------------------------------------------------------------- sql
    def sql(self, query: str, params: Optional[Sequence[Any]] = None, *, output: str = "arrow",
            write: bool = False):
        """Run SQL (DuckDB dialect) with every view and kernel UDF available.

        Parameters
        ----------
        query : str
            One or more statements; the result of the last one is returned.
        params : sequence, optional
            Values for ``?`` placeholders.
        output : {'arrow', 'pandas', 'tuples'}
            A ``pyarrow.Table``, a ``pandas.DataFrame`` (needs pandas: ``pip install
            'pace-warehouse[pandas]'``), or ``(column names, list of row tuples)``.
        write : bool, default False
            Allow statements that change the warehouse (INSERT, DELETE, CREATE, ...); without it
            DuckDB opens the file read-only and refuses them. Either way DuckDB reaches no file, URL
            or extension outside the warehouse and its settings are locked (``pace sql --help``).
            After a write (also one that failed part-way) the lake and the stored collapsed cells
            are brought back in step with ``scores``.

        Returns
        -------
        pyarrow.Table, pandas.DataFrame, tuple or None
            None when the last statement returns no rows (e.g. an UPDATE).

        Examples
        --------
        >>> wh = Warehouse("pace.duckdb", read_only=True)                          # doctest: +SKIP
        >>> wh.sql("SELECT model, target, mean FROM target_means WHERE mean > ?", [0.5])  # doctest: +SKIP
        pyarrow.Table
        model: string
        ...
        """
        validate.choice(output, "output", ("arrow", "pandas", "tuples"))
        if not query or not query.strip():
            raise UserError("empty query")
        if output == "pandas":
            _require_pandas()
        if write:
            self._require_writable("opening for writing")
        # DuckDB holds it: read-only unless write, no file or extension access, settings locked
        con = connect(self.path, read_only=not write, create=False, sandbox=True)
        try:
            try:
                if write:
                    before_write(con, query)
                rel = run_sql(con, query, params)
                result = None if rel is None else (
                    rel.to_arrow_table() if output == "arrow" else rel.df() if output == "pandas"
                    else (list(rel.columns), rel.fetchall()))
            except duckdb.Error as exc:
                kept = ""
                if write:           # the statements before the failing one are committed: follow them
                    after_write(con)
                    kinds = statement_types(con, query)
                    if len(kinds) > 1 and "TRANSACTION" not in kinds:
                        kept = (" (statements before the failing one, if any, ran on their own and are kept: put them between BEGIN; "
                                "and COMMIT; to keep all or none)")
                raise UserError(explain(exc, write=write) + kept) from exc
            if write:
                after_write(con)
            return result
        finally:
            con.close()

    # ----------------------------------------------------------------------------------------- ingest
    def ingest(self, tree: Union[str, os.PathLike, None] = None, *, prune: bool = False, strict: bool = False,
               duplicates: str = "first", progress: Optional[Callable[[int], None]] = None):
        """Ingest a score tree ``<benchmark>/[<subdir>/]<Model>.csv`` (idempotent, all or nothing).

        Parameters
        ----------
        tree : path, optional
            The tree. Default: ``results/standardized_results`` if it exists, else ``$PACE_RESULTS_DIR``.
        prune : bool
            Remove the rows of files of this tree that disappeared from it.
        strict : bool
            Treat every anomaly as an error (nothing is written).
        duplicates : {'first', 'last', 'error'}
            Which row of a repeated instance id is kept.
        progress : callable, optional
            ``progress(n)`` is called as files are loaded (a total is ``len(ingest.tree.discover(tree))``).

        Returns
        -------
        ingest.report.IngestReport
            Counts and anomalies; ``to_text()`` and ``to_dict()`` render it.

        Examples
        --------
        >>> report = Warehouse("pace.duckdb").ingest("demo_data")                  # doctest: +SKIP
        >>> report.to_dict()["rows"]                                               # doctest: +SKIP
        """
        validate.choice(duplicates, "--duplicates", DUPLICATE_POLICIES)
        self._require_writable("ingest")
        root = settings.results_path(tree)
        if root is None:
            raise UserError("no results tree: pass PATH, set PACE_RESULTS_DIR, put the Pace project's "
                            "results/standardized_results here, or make synthetic data with `pace demo-data`.")
        discover(root)                      # a bad PATH fails here, before any warehouse is created
        with self._writing("ingest", create=True) as con:
            return ingest_tree(con, root, lake_of(con, self.lake), prune=prune, strict=strict, progress=progress,
                               duplicates=duplicates)

    # ---------------------------------------------------------------------------------------- aliases
    def alias_preview(self, alias: str, model: str):
        """What :meth:`alias_add` would do, without doing it: the checks, and the rows it would rename.

        Returns
        -------
        warehouse.aliases.AliasPlan
            ``rows``, ``benchmarks``, ``needs_confirmation`` (more than ``aliases.CONFIRM_ROWS`` rows).

        Raises
        ------
        UserError
            A name a score file cannot carry (``/``, ``..``, control characters, empty), an alias to itself,
            a cycle or chain with the recorded aliases (the message names the one in the way), or rows of
            both names with the same key.
        """
        if not Path(self.path).exists():      # `alias add` may start a warehouse: nothing to rename yet
            return aliases.AliasPlan(*aliases.check_names(alias, model))
        with self._reading() as con:
            return aliases.plan_alias(con, alias, model)

    def alias_add(self, alias: str, model: str, *, yes: bool = False):
        """Ingest files named ``ALIAS.csv`` as ``model`` and rename the rows already stored under ``alias``
        (table, collapsed cells, lake), with the checks of :meth:`alias_preview`.

        Parameters
        ----------
        yes : bool
            Confirm a rename of more than ``aliases.CONFIRM_ROWS`` score rows (likely a whole other model
            rather than a misnamed file); without it such a rename is refused.

        Returns
        -------
        warehouse.aliases.AliasPlan
            ``rows``: the score rows renamed.

        Examples
        --------
        >>> Warehouse("pace.duckdb").alias_add("DeepSeek-V3.2-Reasoner", "DeepSeek-V3.2").rows  # doctest: +SKIP
        895
        """
        self._require_writable("adding an alias")
        con = self.connect(write=True, create=True)
        try:
            return aliases.add_alias(con, alias, model, yes=yes)
        finally:
            con.close()

    def alias_keep(self, model: str) -> str:
        """Accept ``model``, which ingest held out of fits as another spelling of a known model
        (``models.held``), as a model of its own: it enters the next fit. Returns the model it looked like."""
        self._require_writable("keeping a held model")
        con = self.connect(write=True)
        try:
            return aliases.keep_model(con, model)
        finally:
            con.close()

    def import_openhands_index(self, path: Union[str, os.PathLike], *, prefer: Names = None, prune: bool = False,
                               strict: bool = False, duplicates: str = "first",
                               progress: Optional[Callable[[int], None]] = None):
        """Import an OpenHands Index folder (``results/<Model>/{metadata.json,scores.json,
        instance_results/<bench>.json}``, ``alternative_agents/<agent>/<Model>/...``) with the guarantees
        of :meth:`ingest`; see ``ingest.openhands_index``.

        Parameters
        ----------
        path : path
            The index folder (a checkout of the OpenHands Index results).
        prefer : str or list of str, optional
            Which source ``scores`` keeps where a model has rows of both (a Pace file and an index run
            for one benchmark): ``'pace'`` or ``'openhands-index'`` for every model, ``'MODEL=SOURCE'`` for
            one. Stored (table ``agentic_preference``); without a choice, ``pace``.
        prune, strict, duplicates, progress
            As for :meth:`ingest` (``progress(n)`` per model folder read).

        Returns
        -------
        ingest.report.IngestReport
            Counts, notes (the preference, models with agentic results only) and anomalies (reported
            scores far from the instance results, partial instance files, missing costs, second
            spellings, alias suggestions, runs that disagree with the Pace rows).

        Examples
        --------
        >>> report = Warehouse("pace.duckdb").import_openhands_index("openhands-index")   # doctest: +SKIP
        >>> report.anomaly_counts()                                                        # doctest: +SKIP
        """
        validate.choice(duplicates, "--duplicates", DUPLICATE_POLICIES)
        choices = _preference_choices(prefer)
        self._require_writable("import")
        root = settings.user_path(path)
        read = read_index(root, duplicates=duplicates, progress=progress)     # every file checked before any write
        with self._writing("import", create=True) as con:
            return import_index(con, root, lake=lake_of(con, self.lake), prefer=choices, prune=prune, strict=strict,
                                duplicates=duplicates, read=read)

    # ------------------------------------------------------------------------------------------ loocv
    def loocv(self, task: str = "abs", *, method: str = "default", split: str = "loo", sources: Names = None,
              targets: Names = None, out: Union[str, os.PathLike, None] = None, plots: bool = False,
              **options: Any) -> LoocvRun:
        """Held-out evaluation of a method (Goal A ``abs`` or Goal B ``pair``), stored as rows.

        Parameters
        ----------
        task : {'abs', 'pair'}
        method : str
            A method of ``warehouse.methods.REGISTRY`` offering ``task``: ``abs``: default, instance, compat,
            anchors, mean, random-c, bench-ridge; ``pair``: default, instance, compat.
        split : str
            loo, family, low-K or high-K: which models are held out together.
        sources, targets : str or list of str, optional
            Source benchmarks to select from and targets to predict (default: every benchmark of
            that role); ``"a,b"``, ``"a b"`` and ``["a", "b"]`` are the same.
        out : path, optional
            Also write the predictions CSV (and with ``plots`` the PNG plots) into this folder.
        **options
            The method's options (``warehouse.methods.options.CATALOGUE`` and the method's own): count
            (budget C, default 100), B (bootstrap replicates, 300), seed (42), auto_tune, strict_budget,
            pin_task_a_selection, fit_all, missing, q, m, nc_h, nc_d, nc_max; anchors' own: anchors (K agentic
            anchors per target, 30; ``PACE_ANCHOR_COUNT`` on the command line). An option the method does not
            read (e.g. ``B`` for ``default`` abs, ``q`` for anything but compat) is refused, naming the
            method; compat needs ``strict_budget`` (and for ``pair`` also ``pin_task_a_selection``).

        Returns
        -------
        LoocvRun
            ``run_id``, seconds, per-target metrics, the configurations used and the files written.

        Examples
        --------
        >>> run = Warehouse("pace.duckdb").loocv("abs", count=40)                  # doctest: +SKIP
        >>> run.metrics[-1]["target"], round(run.metrics[-1]["mae_pp"], 2)         # doctest: +SKIP
        ('AVERAGE', 5.7)
        """
        validate.choice(task, "task", TASKS)
        chosen = methods.get(method, task)
        validate.split_name(split)
        given = checked_options(options)
        chosen.refuse(task, given, split)
        self._require_writable("storing an evaluation")
        outputs = RunOutputs(task, out, plots) if out is not None else None
        req = EvalRequest(method, split, _names(sources), _names(targets), **given)
        with self._reading() as con:
            req.sources, req.targets = checked_benchmarks(con, req.sources, req.targets)
            notes = _target_only_note(con, chosen.trains_on_target_only)
            label = (f"evaluating {'pairs ' if task == 'pair' else ''}({method}{run_label(chosen, task, given)}"
                     f"{', auto-tune' if given.get('auto_tune') else ''}) ...")
            with self._status(label):
                try:
                    result = compute_eval(con, req, task)
                except (ValueError, duckdb.Error) as exc:
                    raise UserError(f"the evaluation failed: {str(exc).splitlines()[0]}") from exc
        if not result.n_predictions():
            raise UserError("the evaluation produced no predictions (too few models with target scores for "
                            "these --sources / --targets?); nothing was written")
        with self._writing("storing an evaluation") as con:
            run_id = store_eval(con, result)
            run = stored_run(con, run_id, task, method, split)
            run.notes = notes
            run.title = (f"Goal {'A' if task == 'abs' else 'B'} {method} split={split}"
                         f"{run_label(chosen, task, given, ' ')}{' auto-tune' if given.get('auto_tune') else ''}")
            if outputs is not None:
                run.outputs = outputs.write(con, run_id, run.title)
        return run

    def sweep(self, counts: Sequence[int] = (25, 50, 100, 200, 300, 400, 500),
              method_names: Sequence[str] = ("compat", "default"), *, sources: Names = None, targets: Names = None,
              out: Union[str, os.PathLike, None] = None, counts_given: bool = True, **options: Any) -> Sweep:
        """Goal A LOOCV of each method at each budget C, stored as runs; with ``out`` also ``sweep.png``.

        An option that none of the methods reads is refused (``counts_given=False``: the budgets are the
        defaults, not asked for, so methods without a budget may be swept)."""
        budgets = [validate.integer(c, "--counts", 1) for c in counts]
        chosen = [methods.get(validate.choice(name, "--methods", methods.names("abs")), "abs") for name in method_names]
        given = checked_options(options)
        for name in [*given, *(["count"] if counts_given else [])]:
            if not any(name in m.read("abs", given) for m in chosen):
                flag = "--counts" if name == "count" else methods.CATALOGUE[name].flag
                raise UserError(f"none of --methods {','.join(method_names)} uses {flag}; drop it")
        self._require_writable("storing an evaluation")
        folder = settings.user_path(out) if out is not None else None
        if folder is not None:
            check_names(folder, "sweep", ["sweep.png"])
        computed = []
        with self._reading() as con:
            chosen_sources, chosen_targets = checked_benchmarks(con, _names(sources), _names(targets))
            with self._status("sweeping ..."):
                for name in method_names:
                    for count in budgets:
                        try:
                            result = compute_eval(con, EvalRequest(name, "loo", chosen_sources, chosen_targets,
                                                                   count=count, **given), "abs")
                        except (ValueError, duckdb.Error) as exc:
                            raise UserError(f"{name} C={count} failed: {str(exc).splitlines()[0]}") from exc
                        if not result.n_predictions():
                            raise UserError(f"{name} C={count} produced no predictions; nothing was written")
                        computed.append((name, count, result))
        results = []
        with self._writing("storing an evaluation") as con:
            for name, count, result in computed:
                run_id = store_eval(con, result)
                mae, sp = con.execute("SELECT mae * 100, spearman FROM loocv_metrics WHERE run_id = ? "
                                      "AND target = 'AVERAGE'", [run_id]).fetchall()[0]
                results.append({"method": name, "count": count, "mae_pp": mae, "spearman": sp, "run_id": run_id})
        if folder is None:
            return Sweep(results, None)
        with output_run(folder, "sweep", note=", ".join(r["run_id"] for r in results)) as staging:
            plot_sweep(results, staging / "sweep.png")
        return Sweep(results, folder / "sweep.png")

    # -------------------------------------------------------------------------------------------- fit
    def fit(self, *, method: str = "default", task: str = "both", level: float = 0.8, intervals: bool = True,
            sources: Names = None, targets: Names = None, exclude: Names = None, anchors: bool = True,
            **options: Any):
        """Fit each target's proxy on every model with target scores and store it as rows
        (``proxy_fits``, ``proxy_weights``, ...); the ``predictions`` view then serves any model.

        Parameters
        ----------
        method : str
            A method with a stored fit: default, instance, compat.
        task : {'abs', 'pair', 'both'}
            Goal A proxies, Goal B (pairwise) proxies, or both.
        level : float
            Central coverage of the prediction intervals, in (0, 1).
        intervals : bool
            Estimate intervals from a leave-one-out run of the same method (costs a LOOCV).
        sources, targets : str or list of str, optional
            As for :meth:`loocv`.
        exclude : str or list of str, optional
            Models left out of the fit (e.g. to predict them as new models).
        anchors : bool
            Also fit each target's item model on every model with rows there (``anchor_fits``,
            ``anchor_items``, ...: see :mod:`warehouse.anchors`), so that a new model's predictions use its
            agentic anchors (``pace plan --anchors``). A target with fewer than 3 such models gets none.
        **options
            The method's fit options: count (budget C, default 100), B (bootstrap replicates, 300; refused
            for ``default`` with ``task='abs'``, which draws none), seed (42).

        Returns
        -------
        warehouse.fit.FitReport
            ``fit_id``, the models trained on, per-target interval offsets and view-vs-kernel gaps.

        Examples
        --------
        >>> report = Warehouse("pace.duckdb").fit(sources="planbench,ifeval", count=40, task="abs")  # doctest: +SKIP
        >>> report.fit_id                                                          # doctest: +SKIP
        'fit-default-...'
        """
        validate.choice(task, "--task", FIT_TASKS)
        validate.choice(method, "--method", methods.names(fit=True))
        validate.number(level, "--level", 0, 1, lo_open=True, hi_open=True)
        tasks = TASKS if task == "both" else (task,)
        given = checked_options(options)
        methods.get(method).refuse_fit(tasks, given)
        self._require_writable("storing a fit")
        con = self.connect()
        try:
            chosen_sources, chosen_targets = checked_benchmarks(con, _names(sources), _names(targets))
            excluded = validate.models_in_warehouse(con, _names(exclude), "--exclude") or []
            req = FitRequest(method, sources=chosen_sources, targets=chosen_targets, exclude=excluded, level=level,
                             intervals=intervals, tasks=tasks, **given)
            count = methods.get(method).options(given).count

            made, anchors_job = None, None

            def anchors_made():                    # the item models, or the anchors' error as a UserError
                try:
                    return anchors_job.result()
                except (ValueError, duckdb.Error) as exc:
                    raise UserError(f"the anchors fit failed: {str(exc).splitlines()[0]} (nothing was stored; "
                                    "--no-anchors skips this step)") from exc

            def reopen(read_con):                  # computed without the write lock; write now
                nonlocal con, made
                if anchors_job is not None:        # both computed before anything is written
                    made = anchors_made()
                read_con.close()
                con = self.connect(write=True)
                return con

            notes = _target_only_note(con, anchors_too=anchors)
            started = time.perf_counter()          # the report's seconds: anchors, proxies and storing
            # The item models are fitted on a thread beside the proxy fit (their rows read first, on the read
            # connection): each alone leaves part of the machine idle (1,000 models: the anchors ~80 s, the
            # proxy ~230 s). Every BLAS call single-threaded meanwhile: the threads are the parallelism.
            doing = (f"fitting ({method}, C={count}){' and estimating intervals' if intervals else ''}"
                     f"{' and the anchors item models' if anchors else ''} ...")
            with blas_limit() if anchors else contextlib.nullcontext(), self._status(doing):
                if anchors:
                    try:
                        inputs = read_anchor_inputs(con, chosen_targets, excluded)
                    except duckdb.Error as exc:
                        raise UserError(f"the anchors fit failed: {str(exc).splitlines()[0]} (nothing was "
                                        "stored; --no-anchors skips this step)") from exc
                    anchors_job = Beside(lambda: fit_anchor_inputs(inputs, "", level=level), "pace-anchors")

                def store_anchors(write_con, fit_id: str) -> None:     # in the proxy fit's transaction
                    nonlocal made
                    if anchors_job is not None and made is None:
                        made = anchors_made()
                    if made is not None:
                        made.fit_id = fit_id        # the item models belong to this proxy fit (current_anchor_fits)
                        store_anchor_fit(write_con, made)

                try:
                    report = fit_and_store(con, req, reopen=reopen, also_store=store_anchors)
                    report.warnings += notes
                except (ValueError, duckdb.Error) as exc:
                    raise UserError(f"the fit failed: {str(exc).splitlines()[0]} (nothing was stored)") from exc
            if made is not None:
                report.anchors = {t: (len(m.models), m.n_items) for t, m in made.targets.items()}
                report.seconds = time.perf_counter() - started
                report.warnings += [f"anchors: no item model for {t}: {why}" for t, why in made.skipped.items()]
            elif con.execute("SELECT count(*) FROM anchor_fits").fetchone()[0]:
                report.warnings.append("anchors: none in use now (--no-anchors): models served by their agentic "
                                       "anchors get the sources' answer until `pace fit` makes item models again "
                                       "(the older ones stay in anchor_fits)")
            with self._status("storing every model's predictions ..."):
                try:                    # the fit is stored: without these, lookups compute from the view
                    report.predictions_stored = stored_predictions.refresh_committed(con, full=True)
                except duckdb.Error as exc:
                    report.warnings.append(f"stored predictions not recomputed ({str(exc).splitlines()[0]}): "
                                           "lookups compute them from the predictions view until `pace doctor`")
            return report
        finally:
            con.close()

    # ------------------------------------------------------------------------------------------- plan
    def plan(self, model: str, *, out: Union[str, os.PathLike, None] = None, anchors: int = 0,
             budget: Optional[float] = None, target_width: Optional[float] = None) -> Plan:
        """The instances ``model`` still needs for the current fits (non-zero weights only), as API
        calls, with what each benchmark's calls buy (the interval half-width its missing scores leave);
        with ``anchors`` also, per target, the agentic instances that most narrow its interval.

        Parameters
        ----------
        model : str
            The model to plan for; it may have no score rows yet (metadata only is enough for anchors).
        out : path, optional
            Also write the plan as a CSV (benchmark, subdir, instance_id), e.g. for ``pace run --plan`` (the
            source calls only: agentic anchors are run with the OpenHands benchmarks, see ``Plan.anchors``).
            An existing file is replaced only if it is such a CSV.
        anchors : int
            K: per target of the current anchor fits, the K target instances that most reduce the
            posterior variance of the model's full mean, given the anchors it already has (adaptive: after
            importing their results, the next plan picks the next most informative). 0: none.
        budget : float, optional
            USD: keep the anchors, best first across targets (round robin by rank), while their expected
            cost (``anchor_costs``) fits; the rest are left out and counted.
        target_width : float, optional
            Percentage points: per target, list only as many of the K anchors as bring the interval's
            expected width to at most this (none where the interval served now, the sources' or the
            anchors', already is); a note names each target where K, or every instance left, does not.
            Applied before ``budget``.

        Returns
        -------
        Plan

        Examples
        --------
        >>> plan = Warehouse("pace.duckdb").plan("NewModel")                       # doctest: +SKIP
        >>> len(plan.calls), plan.per_benchmark[0]["benchmark"]                    # doctest: +SKIP
        (123, 'planbench')
        """
        model = validate.model_name(model)
        validate.integer(anchors, "--anchors", 0)
        if budget is not None:
            if not anchors:
                raise UserError("--budget applies to the agentic anchors: add --anchors K")
            if not math.isfinite(budget) or budget < 0:
                raise UserError(f"--budget must be a finite number of USD >= 0, not {budget}")
        if target_width is not None:
            if not anchors:
                raise UserError("--target-width applies to the agentic anchors: add --anchors K")
            if not math.isfinite(target_width) or target_width <= 0:
                raise UserError(f"--target-width must be a finite number of percentage points > 0, not {target_width}")
        notes = []
        with self._reading() as con:
            anchor_plan = plan_anchors(con, model, anchors, None if target_width is None else target_width / 100) \
                if anchors else []
            if anchors and not anchor_plan:
                trained = con.execute("SELECT count(*) FROM anchor_fits WHERE list_contains(trained_on, ?) AND fit_id "
                                      "IN (SELECT fit_id FROM current_anchor_fits)", [model]).fetchone()[0]
                known = _has_rows(con, model) or _has_metadata(con, model)
                notes.append(f"no anchors listed: {model} is one of the models the anchors item models were trained "
                             "on (its own target results are its scores)" if trained else
                             f"no anchors listed: {model} is not in this warehouse yet (import its metadata.json "
                             "with `pace import openhands-index DIR`)" if not known else
                             "no anchors listed: no anchors item model is in use (run `pace fit`; it needs agentic "
                             "target rows of at least 3 models, and --no-anchors skips it)")
            if not planning.has_fits(con):
                raise UserError("no fitted proxy yet: run `pace fit` (or Warehouse.fit) first")
            rows = planning.plan_rows(con, model)
            calls, per = planning.plan_calls(rows)
            value = planning.plan_value(con, model)
            skipped = planning.zero_weight_left_out(con, model)
            buys = value["per_benchmark"]
            table = sorted(({"benchmark": b, "instances": s["instances"], "calls": s["calls"],
                             "subtasks": s["subtasks"], "share": buys.get(b, {}).get("share", 0.0),
                             "half_width": buys.get(b, {}).get("half_width", {})} for b, s in per.items()),
                           key=lambda r: (-r["share"], -r["calls"], r["benchmark"]))
            restricted = None
            fit = predicting.current_fit_settings(con)
            if fit is not None and _has_rows(con, model):
                present = predicting.present_sources(con, model)
                have = [b for b in fit["sources"] if b in present]
                missing = [b for b in fit["sources"] if b not in present]
                if missing and have:
                    existing = predicting.restricted_fit_for(con, have)
                    maes = dict(con.execute("SELECT target, loocv_mae FROM proxy_fits WHERE fit_id = ? AND task = 'abs'"
                                            " ORDER BY target", [existing]).fetchall()) if existing else {}
                    restricted = {"sources": have, "missing": missing, "fit_id": existing, "loocv_mae": maes}
        if target_width is not None:
            notes += _width_notes(anchor_plan, target_width, anchors)
        left_out = _within_budget(anchor_plan, budget)
        notes += _exhausted_notes(anchor_plan, anchors)
        if out is not None:                 # the calls `pace run --plan` runs; agentic anchors are not among them
            write_csv(settings.user_path(out), ["benchmark", "subdir", "instance_id"], rows)
        return Plan(model, rows, calls, table, value["targets"], value["total"], skipped, restricted, anchor_plan,
                    left_out, notes)

    # ---------------------------------------------------------------------------------------- predict
    def predict(self, model: str, *, min_coverage: float = 0.9, allow_partial: bool = False,
                restrict: bool = True) -> Prediction:
        """Predicted target scores of ``model`` with intervals, coverage, notes (out of range by its source
        ability or release date; a proxy restricted to under half of the sources) and win probabilities
        (when a pair fit exists).

        A model lacking whole source benchmarks of the current fit gets a proxy restricted to the
        benchmarks it has: fitted once (stored, keyed by that set) and reused. Then every target
        must have at least ``min_coverage`` of its proxy's instances scored, else the prediction is
        refused (missing scores would count as the training mean).

        Parameters
        ----------
        model : str
        min_coverage : float, default 0.9
            In [0, 1].
        allow_partial : bool
            Predict below ``min_coverage`` anyway.
        restrict : bool, default True
            False predicts with the current fit alone, imputing the missing benchmarks.

        Returns
        -------
        Prediction
            ``predictions`` (one per target: predicted, low, high, coverage, ...), ``notes``,
            ``restricted_fit`` / ``made_fit``, ``pairwise``.

        Raises
        ------
        UserError
            No fit, no score rows for ``model``, coverage below ``min_coverage``, or a restricted
            fit needed on a warehouse opened ``read_only``.

        Examples
        --------
        >>> p = Warehouse("pace.duckdb").predict("NewModel")                       # doctest: +SKIP
        >>> {x.target: round(100 * x.predicted, 1) for x in p.predictions}         # doctest: +SKIP
        {'gaia': 41.2, 'swebench': 55.0, 'swebench_multimodal': 20.3, 'swtbench': 30.1}
        """
        model = validate.model_name(model)
        validate.number(min_coverage, "--min-coverage", 0, 1)
        con = self.connect()
        try:
            fit = predicting.current_fit_settings(con)
            if fit is None:
                raise UserError("no fitted proxy yet: run `pace fit` (or Warehouse.fit) first")
            if not _has_rows(con, model) and not _has_metadata(con, model):
                renamed = _aliased_to(con, model)
                raise UserError(f"no score rows for {model!r}: it is an alias of {renamed!r} (pace alias add), so its "
                                f"scores are stored as {renamed!r}'s: `{pace_command('predict', renamed)}`" if renamed else
                                f"no score rows for {model!r}: ingest its results or `{pace_command('run', model)}` first")
            present = predicting.present_sources(con, model)
            missing = [b for b in fit["sources"] if b not in present]
            have = [b for b in fit["sources"] if b in present]
            report = Prediction(model, [], missing)
            changed = predicting.roles_changed(con, fit)
            if changed:
                report.notes.append(f"the benchmarks' roles changed since the current fit ({'; '.join(changed)}): "
                                    "these predictions are the fit's, made under the old roles; `pace fit` refits")
            if missing and restrict and have:
                existing = predicting.restricted_fit_for(con, have)
                if existing:
                    report.restricted_fit = existing
                else:
                    why = (f"{model} has no {', '.join(missing)} scores, so it needs a proxy restricted to the "
                           f"benchmarks it has, which is stored in the warehouse (once)")
                    if changed:         # a proxy restricted from a fit made under other roles would mix both
                        raise UserError(f"{why}; but the benchmarks' roles changed since the current fit "
                                        f"({'; '.join(changed)}): run `pace fit` first, or pass --no-restrict to "
                                        "predict with the current fit as it is")
                    untrainable = predicting.targets_without_scores(con, fit["targets"])
                    if untrainable:
                        raise UserError(f"{why}; but no model here has {', '.join(untrainable)} scores to fit it on "
                                        "(pass --no-restrict to impute the missing benchmarks)")
                    self._require_writable(f"{why}: that (or --no-restrict)")
                    con.close()                      # DuckDB opens a file in one mode per process
                    self._probe_writable(why, model)
                    con = self.connect()

                    def reopen(read_con):
                        read_con.close()
                        nonlocal con
                        con = self.connect(write=True)
                        return con

                    with self._status(f"{model} has no {', '.join(missing)} scores: fitting a proxy on the "
                                      f"{len(have)} source benchmarks it has (once; reused later) ..."):
                        try:
                            made = predicting.fit_restricted(con, model, have, fit, reopen=reopen)
                        except (ValueError, duckdb.Error) as exc:
                            raise UserError(f"the restricted fit failed: {str(exc).splitlines()[0]}") from exc
                    report.restricted_fit, report.made_fit = made.fit_id, True
                    stored_predictions.refresh_committed(con)   # a new fit: every model's are recomputed
                    con.close()
                    con = self.connect()
            report.predictions = predicting.read_predictions(con, model, restrict=restrict)
            if not report.predictions:
                raise UserError(f"no prediction for {model!r}")
            low = [(p.target, p.coverage) for p in report.predictions
                   if p.method != "anchors" and p.coverage < min_coverage]
            if low and not allow_partial:
                detail = ", ".join(f"{t} {c:.0%}" for t, c in low)
                raise UserError(f"{model} has scores for too few of the proxy's instances ({detail}; need "
                                f"{min_coverage:.0%}). Run `{pace_command('plan', model)}` / `{pace_command('run', model)}`, or pass "
                                "--allow-partial.")
            report.notes += predicting.out_of_range_notes(con, model, report.predictions)
            report.interval_level = con.execute("SELECT interval_level FROM proxy_fits WHERE fit_id = ? LIMIT 1",
                                                [report.predictions[0].fit_id]).fetchone()[0]
            report.pairwise = [dict(zip(["target", "mean_p_win", "opponents", "win_rate"], r)) for r in con.execute(
                """SELECT target, avg(p_win), count(*), avg((p_win > 0.5)::INTEGER)
                   FROM pair_predictions WHERE model = ? GROUP BY target ORDER BY target""", [model]).fetchall()]
            return report
        finally:
            con.close()

    # ----------------------------------------------------------------------------------------- export
    def export(self, out: Union[str, os.PathLike], *, overwrite: bool = False,
               format: str = "parquet") -> list[tuple[str, int]]:
        """Write every table and view as Parquet (scores partitioned by benchmark), ``SCHEMA.md`` and
        ``spark/views.sql`` to ``out``; or, with ``format='eee'``, the per-instance scores and the
        predictions in the Every Eval Ever layout (``warehouse.export_eee``).

        Parameters
        ----------
        out : path
            A new or empty folder (its parent must exist).
        overwrite : bool
            Reuse a folder an earlier export wrote: only that export's files are replaced.
        format : {'parquet', 'eee'}

        Returns
        -------
        list of (name, rows)

        Examples
        --------
        >>> Warehouse("pace.duckdb", read_only=True).export("export")              # doctest: +SKIP
        [('scores', 1200000), ('benchmarks', 18), ...]
        """
        validate.choice(format, "--format", EXPORT_FORMATS)
        writer = export_eee if format == "eee" else export_parquet
        with self._reading() as con:
            return writer(con, settings.user_path(out), overwrite=overwrite)

    # ----------------------------------------------------------------------------------------- report
    def report(self, out: Union[str, os.PathLike], models: Union[str, Sequence[str], None] = None) -> dict:
        """Write one self-contained HTML page (``out``): per model in ``models`` its predictions drawn
        against the training models' true scores, with coverage, the proxy used and what its plan buys;
        the fit and the stored LOOCV runs (metrics, methods beside the baselines, predicted-vs-true
        scatters); the most and least informative selected instances (see ``warehouse.report``).

        Parameters
        ----------
        out : path
            The HTML file: new, or one an earlier report wrote (anything else is refused).
        models : str or list of str, optional
            Models to predict (each as :meth:`predict` does, partial coverage allowed and noted).

        Returns
        -------
        dict
            What the page shows (the JSON it carries inline).

        Examples
        --------
        >>> Warehouse("pace.duckdb").report("report.html", ["NewModel"])["targets"]   # doctest: +SKIP
        ['gaia', 'swebench', 'swebench_multimodal', 'swtbench']
        """
        items = [models] if isinstance(models, str) else list(models or [])
        names = list(dict.fromkeys(validate.model_name(m, "--model") for m in items))
        return write_report(self, settings.user_path(out), names)


    # ----------------------------------------------------------------------------------- the others
    def status(self) -> "WarehouseStatus":
        """What is in the warehouse: rows, models, benchmarks and their roles, trees, fits, lake state.
        Read from the counters kept at write time (:mod:`ingest.summaries`): no score row is scanned."""
        with self._reading() as con:
            totals = summaries.totals(con)
            per_benchmark = summaries.per_benchmark(con)
            trees = con.execute("""SELECT coalesce(tree, '(not recorded)'), coalesce(synthetic, false), count(*),
                                          sum(n_rows)
                                   FROM score_files GROUP BY ALL ORDER BY 1""").fetchall()
            fits = con.execute("""SELECT task, method, target, budget, len(trained_on), fit_id, created_at
                                  FROM current_fits ORDER BY task, target""").fetchall()
            runs = con.execute("SELECT count(*) FROM loocv_runs").fetchall()[0][0]
            lake = lake_of(con, self.lake)
            owner = owner_problem(con, lake, content=False)
            drift = [] if owner else sorted(set(lake_drift(con, lake, content=False, stored=True)) | set(pending(con)))
        return WarehouseStatus(
            str(self.path), *totals, synthetic=any(t[1] for t in trees), lake=str(lake), lake_drift=drift,
            lake_owner=owner, trees=[dict(zip(["tree", "synthetic", "files", "rows"], t)) for t in trees],
            benchmarks=[dict(zip(["benchmark", "role", "leaves", "models", "rows", "instances"], r))
                        for r in per_benchmark],
            current_fits=[dict(zip(["task", "method", "target", "budget", "trained_on", "fit_id", "created_at"], r))
                          for r in fits], evaluation_runs=runs)

    def doctor(self, *, check: bool = False, scan: bool = False, from_lake: bool = False) -> dict:
        """Check the warehouse and (unless ``check``) repair what can be derived again (see
        :mod:`warehouse.doctor`); returns its report (``lines``, ``problems``, ``repaired``, ``unrepaired``).
        ``check`` alone reads the counts kept at write time, no score row; ``scan`` (with ``check``) also
        compares every stored summary and lake partition with the score rows, which finds writes made
        outside pace (a repair always does). ``from_lake``: rebuild a missing or unreadable warehouse file
        from its lake (the damaged file is moved aside, never deleted)."""
        if from_lake:
            if check:
                raise UserError("--from-lake and --check do not go together (--from-lake changes nothing on a "
                                "working warehouse)")
            return rebuild_from_lake(Path(self.path), self.lake)
        if not check:
            self._require_writable("repairing")
        # the doctor checks and recomputes the stored collapsed cells itself (so it can say so)
        con = connect(self.path, read_only=check, create=False, refresh_collapsed=False)
        try:
            return run_doctor(con, repair=not check, lake=self.lake, scan=scan)
        finally:
            con.close()

    def shell(self, *, write: bool = False, stdin=None) -> int:
        """An interactive SQL prompt on the warehouse (sandboxed; read-only unless ``write``). Returns how
        many statements failed or were refused."""
        if write:
            self._require_writable("a writable shell")
        con = connect(self.path, read_only=not write, create=False, sandbox=True)
        try:
            failed = run_shell(con, stdin, write=write)
            if write:
                after_write(con)
            return failed
        finally:
            con.close()

    def aliases(self) -> list[tuple[str, str]]:
        """(alias, model) rows: files named ``<alias>.csv`` are ingested as ``model``."""
        with self._reading() as con:
            return con.execute("SELECT alias, model FROM model_aliases ORDER BY alias").fetchall()

    def remove_alias(self, alias: str) -> None:
        """Forget an alias (re-ingest to rename rows back)."""
        alias = validate.model_name(alias, "ALIAS")
        with self._writing("removing an alias") as con:
            known = [a for (a,) in con.execute("SELECT alias FROM model_aliases ORDER BY 1").fetchall()]
            if alias not in known:
                raise UserError(f"no alias {alias!r}; aliases: {', '.join(known) or 'none'}")
            con.execute("DELETE FROM model_aliases WHERE alias = ?", [alias])

    def benchmarks(self) -> list[tuple[str, str]]:
        """(benchmark, role) of every benchmark: target, source or excluded."""
        with self._reading() as con:
            return con.execute("SELECT benchmark, role FROM benchmarks ORDER BY role DESC, benchmark").fetchall()

    def set_role(self, benchmark: str, role: str) -> str:
        """Give a known benchmark a role (the stored collapsed cells follow); returns its name as stored."""
        validate.choice(role, "ROLE", validate.ROLES)
        self._require_writable("setting a role")
        if Path(self.path).is_file():               # check the name before opening for writing
            with self._reading() as con:
                validate.known_benchmark(con, benchmark)
        con = self.connect(write=True, create=True)
        try:
            benchmark = validate.known_benchmark(con, benchmark)
            set_role(con, benchmark, role)
            return benchmark
        finally:
            con.close()

    def families(self) -> list[tuple[str, str, bool]]:
        """(model, family, explicit) of every known model (``explicit``: set by hand, else from the name)."""
        with self._reading() as con:
            return con.execute("SELECT model, family, explicit FROM model_family ORDER BY family, model").fetchall()

    def set_family(self, model: str, family: str) -> None:
        """Put a model of the warehouse in a family (``--split family`` holds a family out together)."""
        model, family = validate.model_name(model), validate.model_name(family, "FAMILY")
        with self._writing("setting a family") as con:
            validate.models_in_warehouse(con, [model], "MODEL")
            con.execute("INSERT OR REPLACE INTO model_families VALUES (?, ?)", [model, family])

    def reset_family(self, model: str) -> None:
        """Forget a model's explicit family (it falls back to the leading letters of its name)."""
        model = validate.model_name(model)
        with self._writing("resetting a family") as con:
            if not con.execute("SELECT count(*) FROM model_families WHERE model = ?", [model]).fetchall()[0][0]:
                raise UserError(f"{model!r} has no explicit family (see `pace families list`)")
            con.execute("DELETE FROM model_families WHERE model = ?", [model])

    def metadata(self) -> list[tuple[str, Any, Optional[str]]]:
        """(model, release_date, source) of every model (view ``model_release``: ``user`` for a date set with
        :meth:`set_metadata`, which wins over an index's), dated ones first; (model, None, None) for a model
        with score rows and no known date, the ones the release-date check cannot place."""
        with self._reading() as con:
            return con.execute("""
                WITH known AS (SELECT DISTINCT model FROM score_sources UNION SELECT model FROM model_release)
                SELECT k.model, r.release_date, r.release_source
                FROM known AS k LEFT JOIN model_release AS r USING (model)
                ORDER BY r.release_date NULLS LAST, k.model""").fetchall()

    def set_metadata(self, model: str, *, released: Union[str, date, None] = None) -> dict:
        """Set a model's release date (``released``: ``YYYY-MM-DD``), e.g. for an older model no agentic
        results index describes. It is kept in ``model_metadata_set``, wins over the index's date, and
        survives a re-import; the out-of-range check (``predictions``) compares it with the dates of the
        models the fit was trained on. Returns {model, released, replaced (the date it had), note}."""
        model = validate.model_name(model)
        if released is None:
            raise UserError("nothing to set: give --released DATE (YYYY-MM-DD)")
        day = validate.iso_date(released, "--released")
        if day > date.today():          # a typo (2099) would make the model newer than every other
            raise UserError(f"--released {day.isoformat()!r} is in the future (today is {date.today().isoformat()})")
        with self._writing("setting a model's metadata") as con:
            if not (_has_rows(con, model) or _has_metadata(con, model)):
                raise UserError(f"no model {model!r} in the warehouse (no score rows, no metadata)")
            before = con.execute("SELECT release_date FROM model_release WHERE model = ?", [model]).fetchone()
            con.execute("INSERT OR REPLACE INTO model_metadata_set VALUES (?, ?, current_localtimestamp())",
                        [model, day])
            known = con.execute("SELECT count(released_lo) FROM current_fits WHERE task = 'abs'").fetchall()[0][0]
            stored_predictions.refresh_committed(con)   # the era check reads the date: the model's rows
        note = None if known else ("the current fits know no training model's release date, so the release-date "
                                   "check cannot judge a model yet (import the index's metadata, then `pace fit`)")
        return {"model": model, "released": day, "replaced": before[0] if before else None, "note": note}

    def reset_metadata(self, model: str) -> Optional[date]:
        """Forget what :meth:`set_metadata` set for ``model``; returns the release date that applies now (an
        index's), None when none does."""
        model = validate.model_name(model)
        with self._writing("resetting a model's metadata") as con:
            if not con.execute("SELECT count(*) FROM model_metadata_set WHERE model = ?", [model]).fetchone()[0]:
                raise UserError(f"{model!r} has no metadata set by `pace metadata set` (see `pace metadata list`)")
            con.execute("DELETE FROM model_metadata_set WHERE model = ?", [model])
            now = con.execute("SELECT release_date FROM model_release WHERE model = ?", [model]).fetchall()
            stored_predictions.refresh_committed(con)
        return now[0][0] if now else None

    def export_selections(self, out: Union[str, os.PathLike], *, run: Optional[str] = None, fmt: str = "csv",
                          overwrite: bool = False) -> dict:
        """Write selected instances: the published selections CSV of a run (``run``) or of the current abs
        fits (``fmt='csv'``), or the current abs fits in the PACE-Bench layout (``fmt='pace-bench'``: one
        ``<target>.jsonl`` per target). Returns ``{"path": ..., "rows": n}`` / ``{"counts": target -> n}``."""
        validate.choice(fmt, "--format", SELECTION_FORMATS)
        out = settings.user_path(out)
        with self._reading() as con:
            if fmt == "pace-bench":
                if run:
                    raise UserError("--run applies to --format csv only (pace-bench exports the current fits)")
                return {"counts": export_pace_bench(con, out, overwrite=overwrite), "path": out}
            try:
                rows = con.execute(SELECTIONS_OF_RUN if run else SELECTIONS_OF_FITS, [run] if run else []).fetchall()
            except duckdb.Error as exc:
                raise UserError(str(exc).splitlines()[0]) from exc
        if not rows:
            raise UserError("nothing to export: no such run, or no fit yet")
        write_csv(out, SELECTION_COLUMNS, rows)
        return {"path": out, "rows": len(rows)}

    def import_selections(self, path: Union[str, os.PathLike], *, name: Optional[str] = None,
                          fmt: str = "auto", allow_unknown: bool = False) -> dict:
        """Load a selections CSV as a run in loocv_selections (keyed by instance; col_idx is ignored), or a
        PACE-Bench folder as a fit that becomes the current abs fit of its targets. Checked first: unknown
        benchmarks or instances (refused unless ``allow_unknown``), repeated records, weights that are not
        finite numbers. Returns ``{"run_id", "rows", "notes"}`` / the PACE-Bench import's report."""
        validate.choice(fmt, "--format", ("auto",) + SELECTION_FORMATS)
        path = settings.user_path(path)
        if name is not None and not name.strip():
            raise UserError("--name must not be empty")
        if fmt == "pace-bench" or (fmt == "auto" and path.is_dir()):
            with self._writing("importing selections") as con:
                return import_pace_bench(con, path, name.strip() if name else None, allow_unknown=allow_unknown)
        if not path.is_file():
            raise UserError(f"no such file: {path}")
        with self._writing("importing selections") as con:
            try:
                run_id, n, notes = import_selections(con, path, name, allow_unknown=allow_unknown)
            except (UnicodeDecodeError, csv.Error) as exc:
                raise UserError(f"{path}: {str(exc).splitlines()[0]}") from exc
        return {"run_id": run_id, "rows": n, "notes": notes}

    def import_results(self, kind: str, path: Union[str, os.PathLike], map_path: Union[str, os.PathLike, None] = None,
                       *, model: Optional[str] = None, prune: bool = False, strict: bool = False,
                       duplicates: str = "first", progress: Optional[Callable[[int], None]] = None):
        """Import per-sample results an evaluation harness wrote (``kind``: 'lm-eval', 'inspect', 'helm', or
        'eee' for Every Eval Ever files), mapped to Pace benchmarks by the TOML ``map_path`` (optional for
        'eee' only), with the guarantees of :meth:`ingest`. Every file is read and checked before the
        warehouse opens. Returns the ingest report."""
        self.import_files(kind, path, map_path, model=model, duplicates=duplicates)
        self._require_writable("importing results")
        path = settings.user_path(path)
        map_path = None if map_path is None else settings.user_path(map_path)
        units, report = read_results(kind, path, map_path, model=None if model is None else model.strip(),
                                     duplicates=duplicates, progress=progress)
        with self._writing("importing results", create=True) as con:
            return load_units(con, units, report, lake_of(con, self.lake), prune=prune, strict=strict,
                              duplicates=duplicates)

    def import_files(self, kind: str, path: Union[str, os.PathLike], map_path: Union[str, os.PathLike, None] = None,
                     *, model: Optional[str] = None, duplicates: str = "first") -> int:
        """Check :meth:`import_results`' arguments (the map is read) and count the files it will read."""
        validate.choice(kind, "KIND", tuple(READERS))
        validate.choice(duplicates, "--duplicates", DUPLICATE_POLICIES)
        if model is not None:
            validate.model_name(model, "--model")
        if map_path is not None:
            load_map(settings.user_path(map_path), kind)
        return len(READERS[kind].discover(settings.user_path(path)))

    def run(self, model: str, *, plan: Union[str, os.PathLike, None] = None, dry_run: bool = False,
            max_cost: Optional[float] = None, concurrency: int = 8, rate_limit: Optional[float] = None,
            api_key: Optional[str] = None, base_url: Optional[str] = None,
            prices: Union[str, os.PathLike, None] = None, vision: bool = False, skip_unavailable: bool = False,
            timeout: float = 300, max_retries: int = 6, max_consecutive_failures: Optional[int] = 10,
            progress: bool = True):
        """Run ``model`` on its plan (or the CSV ``plan``) through an OpenAI-compatible endpoint and append
        the rows (see :mod:`eval_runners.run`); returns its ``RunSummary``. Credentials: ``api_key`` /
        ``base_url`` > $API_KEY / $BASE_URL > .env; they never appear in an error."""
        # the runner loads the OpenAI client library (~2 s to import): only `pace run` pays for it
        from eval_runners.client import normalize_base_url
        from eval_runners.plan import load_plan_csv, plan_from_warehouse
        from eval_runners.pricing import PriceTable
        from eval_runners.run import RunOptions, run_plan

        model = validate.model_name(model)
        creds = resolve_credentials(api_key, base_url)
        key = creds.api_key
        try:
            if creds.base_url:
                normalize_base_url(creds.base_url)
        except ValueError as exc:
            raise UserError(f"--base-url (or BASE_URL): {redact(exc, key)}") from None
        try:
            table = PriceTable.load(prices)
        except Exception as exc:  # noqa: BLE001 - any unreadable price file is a usage error
            msg = redact(exc, key)
            raise UserError(f"--prices {msg}" if msg.startswith(str(prices)) else f"--prices {prices}: {msg}") from None
        rows = None
        if plan:
            try:
                rows = load_plan_csv(Path(plan))
            except Exception as exc:  # noqa: BLE001 - any unreadable plan is a usage error
                msg = str(exc)
                raise UserError(msg if msg.startswith(str(plan)) else f"--plan {plan}: {msg}") from None
        if rows is None:
            with self._reading() as con:    # closed before the run, which opens the file per batch
                try:
                    rows = plan_from_warehouse(con, model)
                except (LookupError, ValueError) as exc:
                    raise UserError(redact(exc, key)) from None
        self._require_writable("running a model")
        opts = RunOptions(dry_run=dry_run, max_cost=max_cost, concurrency=concurrency, rate_limit=rate_limit,
                          vision=vision, skip_unavailable=skip_unavailable, prices=table, timeout=timeout,
                          max_retries=max_retries, max_consecutive_failures=max_consecutive_failures or None,
                          progress=progress)
        try:
            # the warehouse file, not a connection: the run holds the write lock only while it stores a batch,
            # so readers (status, predict, sql) keep working during a run of hours
            return run_plan(Path(self.path), model, rows, credentials=creds, options=opts)
        except (LookupError, ValueError) as exc:
            raise UserError(redact(exc, key)) from None


register_options(methods.options())               # the methods' options travel as **options


def _width_notes(plan: list, width_pp: float, cap: int) -> list[str]:
    """Per target where ``--target-width`` is not reached by the anchors listed: how far they get, and
    whether more anchors (past --anchors K) or no number of them would reach it."""
    notes = []
    for t in plan:
        if t.needed is not None and t.needed <= cap:
            continue
        after = 100 * (t.expected_width if t.expected_width is not None else t.width_now)
        if t.needed is None:
            notes.append(f"{t.target}: an interval of {width_pp:g} pp cannot be reached with the {t.available} "
                         f"instances available (running them all leaves about {100 * t.widths[-1]:.1f} pp); "
                         f"the {len(t.rows)} listed leave about {after:.1f} pp")
        else:
            notes.append(f"{t.target}: about {t.needed} anchors reach {width_pp:g} pp; the {len(t.rows)} of "
                         f"--anchors {cap} leave about {after:.1f} pp (raise --anchors)")
    return notes


def _exhausted_notes(plan: list, count: int) -> list[str]:
    """A note when ``--anchors K`` asks for more than a target has left and it lists all it has (not when a
    --target-width or --budget stopped the list first)."""
    short = [t for t in plan if t.available < count and len(t.rows) == t.available]
    if not short:
        return []
    return [f"--anchors {count} is more than " + ", ".join(f"{t.target} ({t.available})" for t in short)
            + " has left to run: " + ("that target lists" if len(short) == 1 else "those targets list")
            + " every instance the model has not run"]


def _within_budget(plan: list, budget: Optional[float]) -> int:
    """Drop anchors past ``budget`` (USD), best ranks first across targets; returns how many were dropped.
    An anchor of unknown cost counts as free (the plan's rows say so)."""
    if budget is None:
        return 0
    queue = sorted((r.rank, i, r) for i, t in enumerate(plan) for r in t.rows)
    spent, kept = 0.0, set()
    for _, _, row in queue:
        cost = row.expected_cost or 0.0
        if spent + cost <= budget:
            spent += cost
            kept.add(id(row))
    dropped = 0
    for t in plan:
        dropped += len(t.rows)
        t.rows = [r for r in t.rows if id(r) in kept]
        dropped -= len(t.rows)
    return dropped


def _target_only_note(con: duckdb.DuckDBPyConnection, trained: bool = False, anchors_too: bool = False) -> list[str]:
    """The models with target rows but no source rows (e.g. imported from the OpenHands Index), which the
    source-based methods leave out (``trained``: a method that trains on them, never evaluates them;
    ``anchors_too``: a fit whose anchors item models train on them), as a note (none: no note)."""
    left = [m for (m,) in con.execute("SELECT model FROM models WHERE has_target AND NOT known ORDER BY model"
                                      ).fetchall()]
    if not left:
        return []
    shown = ", ".join(left[:8]) + (f" (+{len(left) - 8} more)" if len(left) > 8 else "")
    if trained:
        return [f"{len(left)} model(s) with target rows but no source rows are trained on, not evaluated (no fold "
                f"holds them out): {shown}"]
    where = " of the source proxies (the anchors item models train on them)" if anchors_too else ""
    return [f"{len(left)} model(s) with target rows but no source rows are left out{where} (nothing to predict them "
            f"from until their source benchmarks are ingested): {shown}"]


def _preference_choices(values: Names) -> dict[str, str]:
    """``--prefer`` values -> {model or '*': source}: ``pace``, ``openhands-index`` or ``MODEL=SOURCE``."""
    choices: dict[str, str] = {}
    for item in _names(values) or []:
        model, _, source = item.rpartition("=")
        if source not in SOURCES:
            raise UserError(f"--prefer {item!r}: the source must be one of {', '.join(SOURCES)} (or MODEL=SOURCE)")
        choices[validate.model_name(model, "--prefer MODEL") if _ else EVERY_MODEL] = source
    return choices


@dataclass
class WarehouseStatus:
    """What :meth:`Warehouse.status` found (``to_dict`` is `pace status --json`)."""
    db: str
    rows: int
    files: int
    known_models: int
    other_models: int
    leaves: int
    synthetic: bool
    lake: str
    lake_drift: list[str]
    lake_owner: Optional[str]
    trees: list[dict]
    benchmarks: list[dict]
    current_fits: list[dict]
    evaluation_runs: int

    def to_dict(self) -> dict:
        return asdict(self)


SELECTION_COLUMNS = ["mode", "fold", "target", "benchmark", "subdir", "instance_id", "col_idx", "weight"]
SELECTION_FORMATS = ("csv", "pace-bench")
SELECTIONS_OF_RUN = """
    SELECT CASE WHEN r.mode = 'fit' THEN 'FIT-ALL' ELSE 'LOMO' END, s.fold, s.target,
           s.benchmark, s.subdir, s.instance_id, c.col, s.weight
    FROM loocv_selections s JOIN loocv_runs r USING (run_id)
    LEFT JOIN source_columns(r.sources) c USING (benchmark, subdir, instance_id)
    WHERE run_id = ? ORDER BY s.fold, s.side, s.target, c.col"""
SELECTIONS_OF_FITS = """
    SELECT 'FIT-ALL', 'ALL', w.target, w.benchmark, w.subdir, w.instance_id, c.col, w.weight
    FROM proxy_weights w JOIN current_fits f USING (fit_id, task, target)
    LEFT JOIN source_columns(NULL) c USING (benchmark, subdir, instance_id)
    WHERE w.task = 'abs' ORDER BY w.side, w.target, c.col"""


def write_csv(path: Path, header: list[str], rows) -> None:
    """Write a CSV the user named (a folder that does not exist is an error, not created)."""
    if path.is_dir():
        raise UserError(f"{path} is a folder; pass a file name")
    if not path.parent.is_dir():
        raise UserError(f"folder {path.parent} does not exist")
    if path.exists():                   # replace only a file of the same kind (its header), never a user's file
        with path.open(newline="", errors="replace") as fh:
            first = next(csv.reader(fh), None)
        if first != header:
            raise UserError(f"{path} exists and is not a {','.join(header)} CSV pace wrote: choose another name "
                            "(nothing was written)")
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    tmp.replace(path)


def _require_pandas() -> None:
    try:
        import pandas  # noqa: F401  (DuckDB's .df() needs it)
    except ModuleNotFoundError:
        raise UserError("output='pandas' needs pandas: pip install 'pace-warehouse[pandas]'") from None


def _has_metadata(con: duckdb.DuckDBPyConnection, model: str) -> bool:
    return con.execute("SELECT count(*) FROM model_metadata WHERE model = ?", [model]).fetchone()[0] > 0


def _aliased_to(con: duckdb.DuckDBPyConnection, model: str) -> Optional[str]:
    """The model ``model`` is an alias of (`pace alias add`: its rows were renamed), or None."""
    row = con.execute("SELECT any_value(model) FROM model_aliases WHERE alias = ?", [model]).fetchall()[0]
    return row[0]


def _has_rows(con: duckdb.DuckDBPyConnection, model: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM scores WHERE model = ?", [model]).fetchone()[0])


def checked_benchmarks(con, sources: Optional[list[str]], targets: Optional[list[str]]):
    return (validate.benchmarks(con, sources, "--sources", "source"),
            validate.benchmarks(con, targets, "--targets", "target"))


def checked_options(options: dict[str, Any]) -> dict[str, Any]:
    """The options given (None and False dropped: not given), each checked against its declaration; an
    option no method declares is refused."""
    known = {o.name: o for o in methods.options()}
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise UserError(f"unknown option(s) {', '.join(unknown)}; the methods' options are: {', '.join(known)}")
    return {k: known[k].check(v) for k, v in options.items() if v is not None and v is not False}


def run_label(method: methods.Method, task: str, given: dict[str, Any], lead: str = ", ") -> str:
    """'C=100, B=300, seed=42' for the budget options the run used (defaults filled in)."""
    read = method.read(task, given)
    opts = method.options(given)
    used = [f"{'C' if k == 'count' else k}={opts[k]}" for k in ("count", "B", "seed") if k in read]
    return (lead + (" " if lead == " " else ", ").join(used)) if used else ""


def stored_run(con: duckdb.DuckDBPyConnection, run_id: str, task: str, method: str, split: str) -> LoocvRun:
    """A stored evaluation's metrics and configurations."""
    seconds = con.execute("SELECT seconds FROM loocv_runs WHERE run_id = ?", [run_id]).fetchone()[0]
    if task == "abs":
        pair_acc = dict(con.execute("SELECT target, accuracy * 100 FROM loocv_abs_pair_metrics "
                                    "WHERE run_id = ?", [run_id]).fetchall())
        inside = dict(con.execute("SELECT target, coverage * 100 FROM loocv_metrics WHERE run_id = ?",
                                  [run_id]).fetchall())
        metrics = [dict(zip(["target", "mae_pp", "spearman", "pearson", "r2"], r),
                        pair_accuracy_pct=pair_acc.get(r[0]), coverage_pct=inside.get(r[0]))
                   for r in metrics_rows(con, run_id)]
        configs = [dict(zip(["target", "fold", "m", "nc_h", "nc_d", "q"], c)) for c in con.execute(
            "SELECT target, fold, m, nc_h, nc_d, q FROM loocv_configs WHERE run_id = ? ORDER BY target, fold",
            [run_id]).fetchall()]
    else:
        metrics = [dict(zip(["target", "accuracy_pct", "pairs"], r)) for r in pair_metrics_rows(con, run_id)]
        configs = [dict(zip(["target", "fold", "m", "nc_h", "nc_d", "platt_a", "platt_b"], c))
                   for c in con.execute("""SELECT target, fold, m, nc_h, nc_d, cal_a, cal_b FROM loocv_configs
                                           WHERE run_id = ? ORDER BY target, fold""", [run_id]).fetchall()]
    return LoocvRun(run_id, task, method, split, seconds, metrics, configs)


__all__ = ["Warehouse", "LoocvRun", "Plan", "Prediction", "UserError"]
