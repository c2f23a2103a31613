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
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager, Optional, Sequence, Union

import duckdb

from warehouse import method_flags, settings, validate
from warehouse.connect import connect
from warehouse.errors import UserError, register_api
from warehouse.predict import PredictionReport

Names = Union[str, Sequence[str], None]

#: defaults of the options a method may ignore (None in a call means "not given")
DEFAULTS = {"count": 100, "B": 300, "seed": 42, "nc_max": 10, "missing": "mask"}
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
    notes: list[str] = field(default_factory=list)    # e.g. the models left out (no source rows)


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

    def _probe_writable(self, why: str) -> None:
        """Fail at once, before long work, when the file cannot be opened for writing."""
        try:
            connect(self.path).close()
        except UserError as exc:
            raise UserError(f"{why}; but {exc} (run it once with write access, or pass --no-restrict to "
                            "impute the missing benchmarks)") from exc

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
        from warehouse.sqlguard import after_write, before_write, explain

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
                rel = con.sql(query, params=params) if params is not None else con.sql(query)
                result = None if rel is None else (
                    rel.to_arrow_table() if output == "arrow" else rel.df() if output == "pandas"
                    else (list(rel.columns), rel.fetchall()))
            except duckdb.Error as exc:
                if write:           # the statements before the failing one are committed: follow them
                    after_write(con)
                raise UserError(explain(exc, write=write)) from exc
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
        from ingest.csvfile import DUPLICATE_POLICIES
        from ingest.lake import discard_if_unused, lake_of
        from ingest.load import ingest_tree
        from ingest.tree import discover

        validate.choice(duplicates, "--duplicates", DUPLICATE_POLICIES)
        self._require_writable("ingest")
        root = settings.results_path(tree)
        if root is None:
            raise UserError("no results tree: pass PATH, set PACE_RESULTS_DIR, put the Pace project's "
                            "results/standardized_results here, or make synthetic data with `pace demo-data`.")
        discover(root)                      # a bad PATH fails here, before any warehouse is created
        db = Path(self.path)
        created = not db.exists()
        con = self.connect(write=True, create=True)
        lake = lake_of(con, self.lake)
        lake_existed = lake.exists()
        try:
            return ingest_tree(con, root, lake, prune=prune, strict=strict, progress=progress,
                               duplicates=duplicates)
        except BaseException:
            if created:                     # a first ingest that failed leaves no empty warehouse behind
                con.close()
                for leftover in (db, db.with_name(db.name + ".wal")):
                    leftover.unlink(missing_ok=True)
                if not lake_existed:
                    discard_if_unused(lake)
            raise
        finally:
            con.close()

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
        from warehouse.aliases import AliasPlan, check_names, plan_alias

        if not Path(self.path).exists():      # `alias add` may start a warehouse: nothing to rename yet
            return AliasPlan(*check_names(alias, model))
        with self._reading() as con:
            return plan_alias(con, alias, model)

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
        from warehouse.aliases import add_alias

        self._require_writable("adding an alias")
        con = self.connect(write=True, create=True)
        try:
            return add_alias(con, alias, model, yes=yes)
        finally:
            con.close()

    def alias_keep(self, model: str) -> str:
        """Accept ``model``, which ingest held out of fits as another spelling of a known model
        (``models.held``), as a model of its own: it enters the next fit. Returns the model it looked like."""
        from warehouse.aliases import keep_model

        self._require_writable("keeping a held model")
        con = self.connect(write=True)
        try:
            return keep_model(con, model)
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
        from ingest.csvfile import DUPLICATE_POLICIES
        from ingest.lake import lake_of
        from ingest.openhands_index import import_index, read_index

        validate.choice(duplicates, "--duplicates", DUPLICATE_POLICIES)
        choices = _preference_choices(prefer)
        self._require_writable("import")
        root = settings.user_path(path)
        read = read_index(root, duplicates=duplicates, progress=progress)     # every file checked before any write
        db = Path(self.path)
        created = not db.exists()
        con = self.connect(write=True, create=True)
        try:
            return import_index(con, root, lake=lake_of(con, self.lake), prefer=choices, prune=prune, strict=strict,
                                duplicates=duplicates, read=read)
        except BaseException:
            if created:                     # a first import that failed leaves no empty warehouse behind
                con.close()
                for leftover in (db, db.with_name(db.name + ".wal")):
                    leftover.unlink(missing_ok=True)
            raise
        finally:
            con.close()

    # ------------------------------------------------------------------------------------------ loocv
    def loocv(self, task: str = "abs", *, method: str = "default", split: str = "loo", count: Optional[int] = None,
              B: Optional[int] = None, seed: Optional[int] = None, auto_tune: bool = False,
              strict_budget: bool = False, pin_task_a_selection: bool = False, fit_all: bool = False,
              missing: Optional[str] = None, q: Optional[float] = None, m: Optional[float] = None,
              nc_h: Optional[int] = None, nc_d: Optional[int] = None, nc_max: Optional[int] = None,
              sources: Names = None, targets: Names = None) -> LoocvRun:
        """Held-out evaluation of a method (Goal A ``abs`` or Goal B ``pair``), stored as rows.

        Parameters
        ----------
        task : {'abs', 'pair'}
        method : str
            ``abs``: default, instance, compat, mean, random-c, bench-ridge; ``pair``: default, compat.
        split : str
            loo, family, low-K or high-K: which models are held out together.
        count, B, seed : int, optional
            Instance budget C (default 100), bootstrap replicates (300), seed (42). An option the
            method does not read (e.g. ``B`` for ``default`` abs, ``q`` for anything but compat) is
            refused, naming the method; leave it None.
        auto_tune, strict_budget, pin_task_a_selection, fit_all, missing, q, m, nc_h, nc_d, nc_max
            The method's own knobs (see ``pace loocv abs --help``); compat needs ``strict_budget``
            (and for ``pair`` also ``pin_task_a_selection``).
        sources, targets : str or list of str, optional
            Source benchmarks to select from and targets to predict (default: every benchmark of
            that role); ``"a,b"``, ``"a b"`` and ``["a", "b"]`` are the same.

        Returns
        -------
        LoocvRun
            ``run_id``, seconds, per-target metrics and the configurations used.

        Examples
        --------
        >>> run = Warehouse("pace.duckdb").loocv("abs", count=40)                  # doctest: +SKIP
        >>> run.metrics[-1]["target"], round(run.metrics[-1]["mae_pp"], 2)         # doctest: +SKIP
        ('AVERAGE', 5.7)
        """
        from warehouse.evaluate import EvalRequest, compute_eval, metrics_rows, pair_metrics_rows, store_eval
        from warehouse.kernels import abs_methods, pair_methods

        validate.choice(task, "task", TASKS)
        validate.choice(method, "--method", (abs_methods() if task == "abs" else pair_methods()))
        validate.split_name(split)
        if missing is not None:
            validate.choice(missing, "--missing", ("mask", "zero", "auto"))
        check_budget(count=count, B=B, seed=seed, q=q, m=m, nc_h=nc_h, nc_d=nc_d, nc_max=nc_max)
        given = dict(count=count, B=B, seed=seed, auto_tune=auto_tune, strict_budget=strict_budget, q=q, m=m,
                     nc_h=nc_h, nc_d=nc_d, nc_max=nc_max)
        given.update(dict(fit_all=fit_all, missing=missing) if task == "abs" else
                     dict(pin_task_a_selection=pin_task_a_selection))
        if method == "compat" and task == "abs" and not strict_budget:
            raise UserError("compat implements the strict joint budget (the published headline path): add "
                            "--strict-budget")
        if method == "compat" and task == "pair" and not (strict_budget and pin_task_a_selection):
            raise UserError("compat implements the published headline path: add --strict-budget "
                            "--pin-task-a-selection")
        if method == "compat" and auto_tune and split != "loo":
            raise UserError("compat's --auto-tune scores configurations on the evaluation predictions themselves; "
                            "on a split it would tune on the held-out models: use --split loo (the published "
                            "protocol) or drop --auto-tune")
        method_flags.check_loocv(task, method, given)
        self._require_writable("storing an evaluation")
        req = EvalRequest(method=method, count=count or DEFAULTS["count"], B=B or DEFAULTS["B"],
                          seed=DEFAULTS["seed"] if seed is None else seed, auto_tune=auto_tune,
                          strict_budget=strict_budget, q=q, m=m, nc_h=nc_h, nc_d=nc_d,
                          nc_max=nc_max or DEFAULTS["nc_max"], split=split, sources=_names(sources),
                          targets=_names(targets))
        if task == "abs":
            req.fit_all, req.missing = fit_all, missing or DEFAULTS["missing"]
        with self._reading() as con:
            req.sources, req.targets = checked_benchmarks(con, req.sources, req.targets)
            notes = _target_only_note(con)
            label = (f"evaluating {'pairs ' if task == 'pair' else ''}({method}, C={req.count}, B={req.B}"
                     f"{', auto-tune' if auto_tune else ''}) ...")
            with self._status(label):
                try:
                    result = compute_eval(con, req, task)
                except Exception as exc:  # kernel errors arrive wrapped by DuckDB
                    raise UserError(f"the evaluation failed: {str(exc).splitlines()[0]}") from exc
        if not result.n_predictions():
            raise UserError("the evaluation produced no predictions (too few models with target scores for "
                            "these --sources / --targets?); nothing was written")
        con = self.connect(write=True)
        try:
            run_id = store_eval(con, result)
            seconds = con.execute("SELECT seconds FROM loocv_runs WHERE run_id = ?", [run_id]).fetchone()[0]
            if task == "abs":
                pair_acc = dict(con.execute("SELECT target, accuracy * 100 FROM loocv_abs_pair_metrics "
                                            "WHERE run_id = ?", [run_id]).fetchall())
                metrics = [dict(zip(["target", "mae_pp", "spearman", "pearson", "r2"], r),
                                pair_accuracy_pct=pair_acc.get(r[0])) for r in metrics_rows(con, run_id)]
                configs = [dict(zip(["target", "fold", "m", "nc_h", "nc_d", "q"], c)) for c in con.execute(
                    "SELECT target, fold, m, nc_h, nc_d, q FROM loocv_configs WHERE run_id = ? ORDER BY target, fold",
                    [run_id]).fetchall()]
            else:
                metrics = [dict(zip(["target", "accuracy_pct", "pairs"], r)) for r in pair_metrics_rows(con, run_id)]
                configs = [dict(zip(["target", "fold", "m", "nc_h", "nc_d", "platt_a", "platt_b"], c))
                           for c in con.execute("""SELECT target, fold, m, nc_h, nc_d, cal_a, cal_b FROM loocv_configs
                                                   WHERE run_id = ? ORDER BY target, fold""", [run_id]).fetchall()]
        finally:
            con.close()
        return LoocvRun(run_id, task, method, split, seconds, metrics, configs, notes)

    # -------------------------------------------------------------------------------------------- fit
    def fit(self, *, method: str = "default", task: str = "both", count: Optional[int] = None,
            B: Optional[int] = None, seed: Optional[int] = None, level: float = 0.8, intervals: bool = True,
            sources: Names = None, targets: Names = None, exclude: Names = None):
        """Fit each target's proxy on every model with target scores and store it as rows
        (``proxy_fits``, ``proxy_weights``, ...); the ``predictions`` view then serves any model.

        Parameters
        ----------
        method : {'default', 'instance', 'compat'}
        task : {'abs', 'pair', 'both'}
            Goal A proxies, Goal B (pairwise) proxies, or both.
        count, B, seed : int, optional
            Budget C (default 100), bootstrap replicates (300; refused for ``default`` with
            ``task='abs'``, which draws none), seed (42).
        level : float
            Central coverage of the prediction intervals, in (0, 1).
        intervals : bool
            Estimate intervals from a leave-one-out run of the same method (costs a LOOCV).
        sources, targets : str or list of str, optional
            As for :meth:`loocv`.
        exclude : str or list of str, optional
            Models left out of the fit (e.g. to predict them as new models).

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
        from warehouse.fit import FITTERS, FitRequest, fit_and_store

        validate.choice(task, "--task", FIT_TASKS)
        validate.choice(method, "--method", sorted(FITTERS))
        check_budget(count=count, B=B, seed=seed)
        validate.number(level, "--level", 0, 1, lo_open=True, hi_open=True)
        tasks = TASKS if task == "both" else (task,)
        method_flags.check_fit(method, tasks, {"B": B})
        self._require_writable("storing a fit")
        con = self.connect()
        try:
            chosen_sources, chosen_targets = checked_benchmarks(con, _names(sources), _names(targets))
            excluded = validate.models_in_warehouse(con, _names(exclude), "--exclude") or []
            req = FitRequest(method=method, count=count or DEFAULTS["count"], B=B or DEFAULTS["B"],
                             seed=DEFAULTS["seed"] if seed is None else seed, sources=chosen_sources,
                             targets=chosen_targets, exclude=excluded, level=level, intervals=intervals, tasks=tasks)

            def reopen(read_con):                  # computed without the write lock; write now
                read_con.close()
                nonlocal con
                con = self.connect(write=True)
                return con

            with self._status(f"fitting ({method}, C={req.count}){' and estimating intervals' if intervals else ''}"
                              " ..."):
                try:
                    notes = _target_only_note(con)
                    report = fit_and_store(con, req, reopen=reopen)
                    report.warnings += notes
                    return report
                except (ValueError, duckdb.Error) as exc:
                    raise UserError(f"the fit failed: {str(exc).splitlines()[0]}") from exc
        finally:
            con.close()

    # ------------------------------------------------------------------------------------------- plan
    def plan(self, model: str) -> Plan:
        """The instances ``model`` still needs for the current fits (non-zero weights only), as API
        calls, with what each benchmark's calls buy (the interval half-width its missing scores leave).

        Parameters
        ----------
        model : str
            The model to plan for; it may have no score rows yet.

        Returns
        -------
        Plan

        Examples
        --------
        >>> plan = Warehouse("pace.duckdb").plan("NewModel")                       # doctest: +SKIP
        >>> len(plan.calls), plan.per_benchmark[0]["benchmark"]                    # doctest: +SKIP
        (123, 'planbench')
        """
        from warehouse import plan as planning
        from warehouse import predict as predicting

        model = validate.model_name(model)
        with self._reading() as con:
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
        return Plan(model, rows, calls, table, value["targets"], value["total"], skipped, restricted)

    # ---------------------------------------------------------------------------------------- predict
    def predict(self, model: str, *, min_coverage: float = 0.9, allow_partial: bool = False,
                restrict: bool = True) -> Prediction:
        """Predicted target scores of ``model`` with intervals, coverage, an out-of-range note and
        win probabilities (when a pair fit exists).

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
        from warehouse import predict as api

        model = validate.model_name(model)
        validate.number(min_coverage, "--min-coverage", 0, 1)
        con = self.connect()
        try:
            fit = api.current_fit_settings(con)
            if fit is None:
                raise UserError("no fitted proxy yet: run `pace fit` (or Warehouse.fit) first")
            if not _has_rows(con, model):
                raise UserError(f"no score rows for {model!r}: ingest its results or `pace run {model}` first")
            present = api.present_sources(con, model)
            missing = [b for b in fit["sources"] if b not in present]
            have = [b for b in fit["sources"] if b in present]
            report = Prediction(model, [], missing)
            if missing and restrict and have:
                existing = api.restricted_fit_for(con, have)
                if existing:
                    report.restricted_fit = existing
                else:
                    why = (f"{model} has no {', '.join(missing)} scores, so it needs a proxy restricted to the "
                           f"benchmarks it has, which is stored in the warehouse (once)")
                    untrainable = api.targets_without_scores(con, fit["targets"])
                    if untrainable:
                        raise UserError(f"{why}; but no model here has {', '.join(untrainable)} scores to fit it on "
                                        "(pass --no-restrict to impute the missing benchmarks)")
                    self._require_writable(f"{why}: that (or --no-restrict)")
                    con.close()                      # DuckDB opens a file in one mode per process
                    self._probe_writable(why)
                    con = self.connect()

                    def reopen(read_con):
                        read_con.close()
                        nonlocal con
                        con = self.connect(write=True)
                        return con

                    with self._status(f"{model} has no {', '.join(missing)} scores: fitting a proxy on the "
                                      f"{len(have)} source benchmarks it has (once; reused later) ..."):
                        try:
                            made = api.fit_restricted(con, model, have, fit, reopen=reopen)
                        except (ValueError, duckdb.Error) as exc:
                            raise UserError(f"the restricted fit failed: {str(exc).splitlines()[0]}") from exc
                    report.restricted_fit, report.made_fit = made.fit_id, True
                    con.close()
                    con = self.connect()
            report.predictions = api.read_predictions(con, model, restrict=restrict)
            if not report.predictions:
                raise UserError(f"no prediction for {model!r}")
            low = [(p.target, p.coverage) for p in report.predictions if p.coverage < min_coverage]
            if low and not allow_partial:
                detail = ", ".join(f"{t} {c:.0%}" for t, c in low)
                raise UserError(f"{model} has scores for too few of the proxy's instances ({detail}; need "
                                f"{min_coverage:.0%}). Run `pace plan {model}` / `pace run {model}`, or pass "
                                "--allow-partial.")
            note = api.out_of_range_note(model, report.predictions)
            if note:
                report.notes.append(note)
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
        from warehouse.export import export_parquet
        from warehouse.export_eee import export_eee

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
        from warehouse.report import write_report

        items = [models] if isinstance(models, str) else list(models or [])
        names = list(dict.fromkeys(validate.model_name(m, "--model") for m in items))
        return write_report(self, settings.user_path(out), names)


def _target_only_note(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The models with target rows but no source rows (e.g. imported from the OpenHands Index), which the
    source-based methods leave out, as a note (none: no note)."""
    left = [m for (m,) in con.execute("SELECT model FROM models WHERE has_target AND NOT known ORDER BY model"
                                      ).fetchall()]
    if not left:
        return []
    shown = ", ".join(left[:8]) + (f" (+{len(left) - 8} more)" if len(left) > 8 else "")
    return [f"{len(left)} model(s) with target rows but no source rows are left out (nothing to predict them from "
            f"until their source benchmarks are ingested): {shown}"]


def _preference_choices(values: Names) -> dict[str, str]:
    """``--prefer`` values -> {model or '*': source}: ``pace``, ``openhands-index`` or ``MODEL=SOURCE``."""
    from ingest.preference import EVERY_MODEL, SOURCES

    choices: dict[str, str] = {}
    for item in _names(values) or []:
        model, _, source = item.rpartition("=")
        if source not in SOURCES:
            raise UserError(f"--prefer {item!r}: the source must be one of {', '.join(SOURCES)} (or MODEL=SOURCE)")
        choices[validate.model_name(model, "--prefer MODEL") if _ else EVERY_MODEL] = source
    return choices


def _require_pandas() -> None:
    try:
        import pandas  # noqa: F401  (DuckDB's .df() needs it)
    except ModuleNotFoundError:
        raise UserError("output='pandas' needs pandas: pip install 'pace-warehouse[pandas]'") from None


def _has_rows(con: duckdb.DuckDBPyConnection, model: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM scores WHERE model = ?", [model]).fetchone()[0])


def checked_benchmarks(con, sources: Optional[list[str]], targets: Optional[list[str]]):
    return (validate.benchmarks(con, sources, "--sources", "source"),
            validate.benchmarks(con, targets, "--targets", "target"))


def check_budget(*, count=None, B=None, seed=None, q=None, m=None, nc_h=None, nc_d=None, nc_max=None) -> None:
    """The numeric options shared by loocv, sweep and fit (None: not given)."""
    for value, flag, lo, hi in ((count, "--count", 1, None), (B, "--B", 1, None), (seed, "--seed", 0, 2**32 - 1),
                                (nc_h, "--nc-h", 1, None), (nc_d, "--nc-d", 1, None), (nc_max, "--nc-max", 1, None)):
        if value is not None:
            validate.integer(value, flag, lo, hi)
    validate.number(q, "--q", 0, 1)
    validate.number(m, "--m", 0, 1)


__all__ = ["Warehouse", "LoocvRun", "Plan", "Prediction", "UserError"]
