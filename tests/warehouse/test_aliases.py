"""`pace alias add` / Warehouse.alias_add (issue 19): no cycles, reversals or chains, only names a score file
can carry, the rows a rename moves said, and a confirmation above aliases.CONFIRM_ROWS. Synthetic data only."""
from __future__ import annotations

import shutil

import pytest

from tests.helpers import run_pace, synthetic_warehouse
from warehouse import UserError, Warehouse
from warehouse.aliases import CONFIRM_ROWS


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    db, summary = synthetic_warehouse(tmp_path_factory.mktemp("aliases"), n_models=4, seed=1, scale=0.1)
    return db, summary.models


@pytest.fixture
def wh(base, tmp_path):
    db, models = base
    copy = tmp_path / "w.duckdb"
    shutil.copy(db, copy)
    warehouse = Warehouse(copy)
    # a misnamed file's worth of rows: one model's gaia rows under a second spelling
    warehouse.sql("UPDATE scores SET model = ? || '-Reasoner' WHERE model = ? AND benchmark = 'gaia'",
                  [models[0], models[0]], write=True)
    return warehouse, models


def _state(wh: Warehouse) -> tuple:
    return (wh.sql("SELECT alias, model FROM model_aliases ORDER BY ALL", output="tuples")[1],
            wh.sql("SELECT model, count(*) FROM scores GROUP BY ALL ORDER BY ALL", output="tuples")[1])


def test_a_reversal_or_a_chain_is_refused_naming_the_alias_in_the_way(wh):
    wh, models = wh
    first, second = models[0], models[1]
    misnamed = f"{first}-Reasoner"
    plan = wh.alias_add(misnamed, first)
    assert plan.rows > 0 and plan.benchmarks == ["gaia"]
    before = _state(wh)
    result = run_pace("alias", "add", first, misnamed, "--db", wh.path)      # the reversal: a cycle
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert f"'{misnamed}' is already an alias of '{first}'" in result.stderr and "cycle" in result.stderr
    with pytest.raises(UserError, match="MODEL .* is itself an alias of"):      # a chain through an alias
        wh.alias_add("Other", misnamed)
    with pytest.raises(UserError, match=rf"ALIAS '{first}' is the model of alias\(es\) {misnamed} -> {first}"):
        wh.alias_add(first, second, yes=True)
    with pytest.raises(UserError, match=f"already an alias of '{first}'"):      # re-pointed silently before
        wh.alias_add(misnamed, second)
    assert _state(wh) == before
    assert wh.alias_add(misnamed, first).rows == 0                            # the same alias again: a no-op


@pytest.mark.parametrize("alias, model", [
    ("A", "../../x"), ("a/b", "A"), ("..", "A"), (".hidden", "A"), ("A", "back\\slash"), ("tab\there", "A"),
    ("   ", "A"),
])
def test_a_name_a_file_cannot_carry_is_refused(wh, alias, model):
    wh, models = wh
    before = _state(wh)
    result = run_pace("alias", "add", alias.replace("A", models[0]), model.replace("A", models[0]), "--yes",
                      "--db", wh.path)
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1, result
    assert "not a model name" in result.stderr or "control character" in result.stderr \
        or "non-empty" in result.stderr
    assert _state(wh) == before


def test_a_large_rename_needs_a_confirmation(wh):
    wh, models = wh
    victim = models[2]
    rows = wh.sql("SELECT count(*) FROM scores WHERE model = ?", [victim], output="tuples")[1][0][0]
    assert rows > CONFIRM_ROWS
    before = _state(wh)
    preview = wh.alias_preview(victim, "Renamed")
    assert preview.rows == rows and preview.needs_confirmation
    with pytest.raises(UserError, match=rf"renames {rows:,} score rows .* Confirm with yes=True"):
        wh.alias_add(victim, "Renamed")
    result = run_pace("alias", "add", victim, "Renamed", "--db", wh.path)     # stdin is no terminal here
    assert result.exit_code == 2 and "stdin is not a terminal" in result.stderr and f"{rows:,}" in result.stderr
    assert _state(wh) == before
    result = run_pace("alias", "add", victim, "Renamed", "--yes", "--db", wh.path)
    assert result.exit_code == 0 and f"({rows:,} existing rows renamed" in result.stdout, result
    assert wh.sql("SELECT count(*) FROM scores WHERE model = 'Renamed'", output="tuples")[1] == [(rows,)]


def test_a_small_rename_says_how_many_rows_moved(wh):
    wh, models = wh
    misnamed = f"{models[0]}-Reasoner"
    rows = wh.sql("SELECT count(*) FROM scores WHERE model = ?", [misnamed], output="tuples")[1][0][0]
    assert 0 < rows <= CONFIRM_ROWS
    result = run_pace("alias", "add", misnamed, models[0], "--db", wh.path)
    assert result.exit_code == 0 and f"({rows:,} existing rows renamed in gaia)" in result.stdout, result


def test_a_suggested_command_is_quoted_for_the_shell(base, tmp_path):
    """A name with spaces or shell characters is suggested as one quoted word: pasted into a shell the
    command reaches `pace` with the very names (before, `pace alias remove Model X (v2)` did not parse)."""
    import shlex

    db, models = base
    copy = tmp_path / "w.duckdb"
    shutil.copy(db, copy)
    wh = Warehouse(copy)
    odd = "Model X (v2);x"
    wh.sql("UPDATE scores SET model = ? WHERE model = ? AND benchmark = 'gaia'", [odd, models[0]], write=True)
    wh.alias_add(odd, models[0])
    with pytest.raises(UserError, match="cycle") as refused:
        wh.alias_add(models[0], odd)
    suggested = str(refused.value).split("`")[-2]                    # the last command in backticks
    assert shlex.split(suggested) == ["pace", "alias", "remove", odd]
