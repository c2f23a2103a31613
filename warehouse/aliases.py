"""Model aliases: a file named <alias>.csv belongs to <model>.

An alias is applied once, when a file is ingested, and ``pace alias add`` renames the rows already stored
under the alias. So aliases never chain: a MODEL that is itself an alias, or an ALIAS that other aliases
point to, would leave one model's rows under two names (and ``A -> B`` after ``B -> A`` is a cycle);
both are refused, naming the alias in the way. Both names must be names a score file can carry. A rename
that moves many rows (:data:`CONFIRM_ROWS`) is a merge of two models rather than a misnamed file, and
needs a confirmation (``Warehouse.alias_add(..., yes=True)``, ``--yes``).

A model that ingest held out of fits as another spelling of a known one (``model_holds``, see
``ingest.noise``) leaves the hold when it is aliased (its rows move to the model) or kept
(:func:`keep_model`: a model of its own).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

from ingest import derived, preference
from ingest.lake import claim_before_writing, mark_pending, sync_lake
from ingest.openhands_index import rename_model
from warehouse import validate
from warehouse.errors import UserError, pace_command

#: a rename moving more score rows than this needs a confirmation (the README's misnamed
#: DeepSeek-V3.2-Reasoner files hold 895 rows; a whole model holds ~20,000)
CONFIRM_ROWS = 1000


@dataclass
class AliasPlan:
    """What ``pace alias add ALIAS MODEL`` does: ``rows`` score rows of ``benchmarks`` renamed."""
    alias: str
    model: str
    rows: int = 0
    benchmarks: list[str] = field(default_factory=list)
    recorded: bool = False              # the same alias is already recorded

    @property
    def needs_confirmation(self) -> bool:
        return self.rows > CONFIRM_ROWS

    def describe(self) -> str:
        return (f"renames {self.rows:,} score rows of {self.alias!r} to {self.model!r} "
                f"({len(self.benchmarks)} benchmark(s))")


def check_names(alias: str, model: str) -> tuple[str, str]:
    """Both names as a score file can carry them (``validate.file_model_name``), and different."""
    alias, model = validate.file_model_name(alias, "ALIAS"), validate.file_model_name(model, "MODEL")
    if alias == model:
        raise UserError(f"an alias must differ from the model name ({alias!r})")
    return alias, model


def plan_alias(con: duckdb.DuckDBPyConnection, alias: str, model: str) -> AliasPlan:
    """Check ``alias -> model`` against the names and the recorded aliases and count what it moves.
    Raises :class:`UserError` (one line naming the value or the existing alias in the way)."""
    alias, model = check_names(alias, model)
    recorded = dict(con.execute("SELECT alias, model FROM model_aliases").fetchall())
    if recorded.get(model) == alias:
        raise UserError(f"{model!r} is already an alias of {alias!r} (`{pace_command('alias', 'add', model, alias)}`): "
                        f"{alias} -> {model} would reverse it into a cycle; `{pace_command('alias', 'remove', model)}` "
                        "first")
    if model in recorded:
        raise UserError(f"MODEL {model!r} is itself an alias of {recorded[model]!r} (`{pace_command('alias', 'add', model, recorded[model])}`): "
                        f"alias {alias} to {recorded[model]} instead")
    if alias in recorded and recorded[alias] != model:
        raise UserError(f"{alias!r} is already an alias of {recorded[alias]!r}: `{pace_command('alias', 'remove', alias)}` "
                        "first (rows already renamed stay where they are)")
    pointing = sorted(a for a, m in recorded.items() if m == alias)
    if pointing:
        raise UserError(f"ALIAS {alias!r} is the model of alias(es) {', '.join(f'{a} -> {alias}' for a in pointing)}: "
                        f"their files would still be ingested as {alias}; alias them to {model} instead "
                        f"(`{pace_command('alias', 'remove', pointing[0])}`, then "
                        f"`{pace_command('alias', 'add', pointing[0], model)}`)")
    # rows of another source for the same key (an OpenHands Index import under the alias, Pace files under
    # the model) are allowed: the preference rule (ingest.preference) keeps one source per model and
    # benchmark in scores; two rows of one source would claim one score
    clash, _ = preference.cross_source_keys(con, alias, model)
    if clash:
        raise UserError(f"{clash} rows of {alias!r} have the same key as rows of {model!r}; "
                        "remove one of the two files first")
    rows, benchmarks = con.execute("SELECT count(*), list(DISTINCT benchmark ORDER BY benchmark) FROM scores "
                                   "WHERE model = ?", [alias]).fetchone()
    return AliasPlan(alias, model, rows, benchmarks or [], recorded.get(alias) == model)


def add_alias(con: duckdb.DuckDBPyConnection, alias: str, model: str, *, yes: bool = False) -> AliasPlan:
    """Record ``alias -> model`` and rename rows already ingested under ``alias`` (in ``scores``, in
    the stored collapsed cells and in the lake partitions that hold them).

    Checked by :func:`plan_alias` inside the transaction; more than :data:`CONFIRM_ROWS` rows need
    ``yes``. Returns the plan carried out (``rows``: the score rows renamed)."""
    claim_before_writing(con)
    con.execute("BEGIN TRANSACTION")
    try:
        plan = plan_alias(con, alias, model)
        if plan.needs_confirmation and not yes:
            raise UserError(f"{plan.alias} -> {plan.model} {plan.describe()}, more than {CONFIRM_ROWS:,}: "
                            "is that a misnamed file or a whole other model? Confirm with --yes")
        con.execute("INSERT OR REPLACE INTO model_aliases VALUES (?, ?)", [plan.alias, plan.model])
        con.execute("DELETE FROM model_holds WHERE model = ?", [plan.alias])
        con.execute("UPDATE score_sources SET model = ? WHERE model = ?", [plan.model, plan.alias])
        con.execute("UPDATE scores_displaced SET model = ? WHERE model = ?", [plan.model, plan.alias])
        con.execute("UPDATE score_files SET model = ? WHERE model = ?", [plan.model, plan.alias])
        rename_model(con, plan.alias, plan.model)
        # metadata a user set follows the rows; where both names have some, the model's own stays
        con.execute("""DELETE FROM model_metadata_set WHERE model = ? AND EXISTS (
                           SELECT 1 FROM model_metadata_set WHERE model = ?)""", [plan.alias, plan.model])
        con.execute("UPDATE model_metadata_set SET model = ? WHERE model = ?", [plan.model, plan.alias])
        # two sources may now share a (model, benchmark) cell: the rule settles it
        plan.benchmarks = sorted(set(plan.benchmarks) | preference.refresh(con))
        mark_pending(con, plan.benchmarks)
        derived.refresh(con)                    # the renamed rows' cells (and the others' medians), counts
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    sync_lake(con, plan.benchmarks)
    return plan


def keep_model(con: duckdb.DuckDBPyConnection, model: str) -> str:
    """Accept a model ingest held out of fits as a model of its own; returns what it was held as. The
    model becomes known, so what is derived from the known models (instance_stats) is recomputed with it."""
    model = validate.model_name(model)
    held = dict(con.execute("SELECT model, detail FROM model_holds").fetchall())
    if model not in held:
        raise UserError(f"{model!r} is not held out of fits; held: {', '.join(sorted(held)) or 'none'}")
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("DELETE FROM model_holds WHERE model = ?", [model])
        derived.refresh(con)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return held[model]
