"""Intervals that tell the truth (issue 23, item 5): a model is out of range when its source ability lies
outside the training models' second-lowest .. second-highest ability or its release date outside theirs;
the flagged side of its interval then reaches 1 % / 100 % and `pace predict` says so in the numbers it
prints; a user may set a release date (`pace metadata set`); a proxy restricted to under half of the
sources cannot place a model; `pace plan --target-width` stops adding anchors once the width is reached.
Synthetic data only."""
from __future__ import annotations

import json
import math
import re
import shutil

import numpy as np
import pytest

from ingest.synthetic import generate_tree
from models.anchors.target import anchors_to_reach
from models.default.shrinkage import robust_range
from tests.helpers import run_pace, write_index
from warehouse.anchors import TargetAnchors
from warehouse.api import Warehouse, _width_notes
from ingest import score_store

TRAINING_DATES = ["2025-07-01", "2025-08-15", "2025-09-01", "2025-10-01", "2025-11-01", "2025-12-01",
                  "2026-01-01", "2026-01-15", "2026-02-01"]


def _rows(db, query, *params):
    with Warehouse(db, read_only=True).connect() as con:
        return con.execute(query, list(params)).fetchall()


@pytest.fixture(scope="module")
def dated(tmp_path_factory):
    """10 synthetic models; the one of median source ability plays a new model (its target rows removed);
    the nine others carry release dates (2025-07-01 .. 2026-02-01) and gaia costs from an index folder;
    fitted with its anchors item models. Returns (db, held model, index folder)."""
    tmp = tmp_path_factory.mktemp("range")
    generate_tree(tmp / "tree", n_models=10, seed=3, scale=0.15)
    wh = Warehouse(tmp / "pace.duckdb")
    wh.ingest(tmp / "tree")
    with wh.connect(write=True) as con:
        order = [m for (m,) in con.execute("SELECT model FROM source_ability ORDER BY ability, model").fetchall()]
        held = order[len(order) // 2]
        score_store.execute(con, "DELETE FROM scores WHERE model = ? AND benchmark IN (SELECT benchmark FROM benchmarks "
                    "WHERE role = 'target')", [held])
        trained = sorted(m for m in order if m != held)
        gaia = {m: dict(con.execute("SELECT instance_id, score = 1 FROM scores WHERE model = ? AND benchmark = 'gaia'",
                                    [m]).fetchall()) for m in trained}
    index = write_index(tmp / "index", {m: {"gaia": gaia[m]} for m in trained}, synthetic=True)
    for model, day in zip(trained, TRAINING_DATES):
        meta = index / "results" / model / "metadata.json"
        meta.write_text(meta.read_text().replace("2026-01-01", day))
    wh.import_openhands_index(index)
    wh.fit(count=12, task="abs")
    return tmp / "pace.duckdb", held, index


@pytest.fixture
def work(dated, tmp_path):
    db, held, index = dated
    shutil.copy(db, tmp_path / "pace.duckdb")
    return tmp_path / "pace.duckdb", held, index


def _served(db, model):
    return {r[0]: r[1:] for r in _rows(db, """SELECT target, predicted, low, high, out_of_range, range_side,
                                                     range_reason, method FROM predictions WHERE model = ?""", model)}


def _every_other(db, model):
    """Every other model's rows of fit_predictions."""
    return _rows(db, "SELECT * EXCLUDE (created_at) FROM fit_predictions WHERE model <> ? ORDER BY ALL", model)


def _same_rows(a, b) -> bool:
    """Equal rows, numbers to 1e-12 (DuckDB's parallel sums may differ in the last bit between queries)."""
    return len(a) == len(b) and all(
        len(x) == len(y) and all(u == pytest.approx(v, abs=1e-12) if isinstance(u, float) and isinstance(v, float)
                                 else u == v for u, v in zip(x, y)) for x, y in zip(a, b))


def test_a_release_date_before_every_training_model_widens_low_to_1_percent_and_the_note_says_so(work):
    db, held, _ = work
    before, others = _served(db, held), _every_other(db, held)
    assert before and not any(oor for _, _, _, oor, *_ in before.values())      # in range on its ability
    done = run_pace("metadata", "set", held, "--released", "2024-05-13", "--db", db)
    assert done.exit_code == 0, done.output
    assert f"{held}: released 2024-05-13" in done.stdout
    after = _served(db, held)
    for target, (predicted, low, high, oor, side, reason, method) in after.items():
        assert method == "default" and oor and (side, reason) == ("below", "release date")
        # only the low bound moves (to 1e-12: DuckDB's parallel sums may differ in the last bit between queries)
        assert (predicted, high) == pytest.approx((before[target][0], before[target][2]), abs=1e-12)
        assert low == pytest.approx(min(before[target][1], 0.01), abs=1e-12)
    assert _same_rows(_every_other(db, held), others)                            # no other model's answer moves
    payload = json.loads(run_pace("predict", held, "--json", "--allow-partial", "--db", db).stdout)
    notes = [n for n in payload["notes"] if n.startswith("out of range")]
    assert len(notes) == 1
    note = notes[0]
    assert f"{held} was released (2024-05-13) before every model the fit was trained on (2025-07-01 to 2026-02-01)" \
        in note
    shown = re.search(r"cannot rule out scores down to (.+?);", note).group(1)     # '1.0 %' or '1.0 % (t 0.4 %)'
    for p in payload["predictions"]:
        printed = f"{100 * p['low']:.1f} %"                                      # as the table prints it
        assert shown.split(" (")[0] == printed or f"{p['target']} {printed}" in shown
    # the gaia runs cost 0.1 USD each: 10 anchors there, the other targets' costs unknown
    assert f"`pace plan {held} --anchors 10` places it for about $1." in note
    text = " ".join(run_pace("predict", held, "--allow-partial", "--db", db).stdout.split())
    assert "released (2024-05-13) before every model" in text and "1.0–" in text   # the note and the table


def test_a_release_date_after_every_training_model_reaches_up_to_100_percent(work):
    db, held, _ = work
    assert run_pace("metadata", "set", held, "--released", "2026-06-01", "--db", db).exit_code == 0
    for predicted, low, high, oor, side, reason, _ in _served(db, held).values():
        assert (side, reason, high) == ("above", "release date", 1.0) and low < predicted
    notes = json.loads(run_pace("predict", held, "--json", "--allow-partial", "--db", db).stdout)["notes"]
    assert any("after every model the fit was trained on" in n and "up to 100.0 %" in n for n in notes)


def test_a_user_set_date_wins_over_the_index_and_survives_a_reimport(work):
    db, held, index = work
    trained = sorted(index.joinpath("results").iterdir())[0].name
    assert _rows(db, "SELECT release_date::VARCHAR, release_source FROM model_release WHERE model = ?", trained) \
        == [(TRAINING_DATES[0], "openhands-index")]
    assert run_pace("metadata", "set", trained, "--released", "2020-02-02", "--db", db).exit_code == 0
    meta = index / "results" / trained / "metadata.json"
    original = meta.read_text()
    try:                                    # a changed file: the import replaces that model's index rows
        meta.write_text(original.replace(TRAINING_DATES[0], "2025-06-30"))
        Warehouse(db).import_openhands_index(index)
    finally:
        meta.write_text(original)
    assert _rows(db, "SELECT release_date::VARCHAR, release_source FROM model_release WHERE model = ?", trained) \
        == [("2020-02-02", "user")]
    listed = json.loads(run_pace("metadata", "list", "--json", "--db", db).stdout)
    assert {"model": trained, "released": "2020-02-02", "source": "user"} in listed
    assert {"model": held, "released": None, "source": None} in listed       # undated models are listed too
    reset = run_pace("metadata", "reset", trained, "--db", db)
    assert reset.exit_code == 0 and "released 2025-06-30 again" in reset.stdout
    assert _rows(db, "SELECT release_date::VARCHAR FROM model_release WHERE model = ?", trained) == [("2025-06-30",)]


@pytest.mark.parametrize("bad", ["2024-13-01", "2024-5-13", "yesterday", "", "2999-01-01"])
def test_a_bad_release_date_is_refused_in_one_line_and_nothing_is_written(work, bad):
    db, held, _ = work
    result = run_pace("metadata", "set", held, "--released", bad, "--db", db)
    assert result.exit_code == 2 and repr(bad) in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert _rows(db, "SELECT count(*) FROM model_metadata_set") == [(0,)]


def test_setting_metadata_needs_a_known_model_and_a_value(work):
    db, held, _ = work
    unknown = run_pace("metadata", "set", "NoSuchModel", "--released", "2024-05-13", "--db", db)
    assert unknown.exit_code == 2 and "NoSuchModel" in unknown.stderr
    nothing = run_pace("metadata", "set", held, "--db", db)
    assert nothing.exit_code == 2 and "--released" in nothing.stderr
    assert run_pace("metadata", "reset", held, "--db", db).exit_code == 2


def test_the_ability_range_is_the_second_lowest_to_second_highest_training_ability(dated):
    db, _, _ = dated
    for fit_id, target, lo, hi, range_lo, range_hi in _rows(db, """SELECT fit_id, target, ability_lo, ability_hi,
                                                                      range_lo, range_hi FROM current_fits
                                                                      WHERE task = 'abs'"""):
        theta = sorted(a for (a,) in _rows(db, """SELECT p.ability FROM fit_predictions AS p JOIN proxy_fits AS f
                                                 USING (fit_id, target) WHERE p.fit_id = ? AND p.target = ?
                                                 AND list_contains(f.trained_on, p.model)""", fit_id, target))
        assert len(theta) == 9
        assert (lo, hi) == pytest.approx((theta[0], theta[-1]))
        assert (range_lo, range_hi) == pytest.approx((theta[1], theta[-2]))
    # a model the fit was trained on sets the range and is never flagged outside it
    assert _rows(db, """SELECT count(*) FROM fit_predictions AS p JOIN proxy_fits AS f USING (fit_id, target)
                        WHERE list_contains(f.trained_on, p.model) AND p.out_of_range""") == [(0,)]


def test_robust_range_ignores_one_odd_value():
    assert robust_range(np.array([-50.0, 0.0, 1.0, 2.0, 3.0])) == (0.0, 2.0)
    assert robust_range(np.array([1.0, np.nan, -2.0, 4.0])) == (-2.0, 4.0)        # under 4 values: [min, max]
    assert all(math.isnan(v) for v in robust_range(np.array([np.nan])))


def test_one_odd_training_model_does_not_stretch_the_range(dated, tmp_path):
    """The second-weakest model, held out of a fit: the weakest training model alone lies below it, so the
    [min, max] check would call it inside; the robust range calls it below, by its ability."""
    db, _, _ = dated
    work = shutil.copy(db, tmp_path / "odd.duckdb")
    order = [m for (m,) in _rows(work, """SELECT model FROM fit_predictions WHERE target = 'gaia'
                                          ORDER BY ability""")]
    second = order[1]
    Warehouse(work).fit(count=12, task="abs", exclude=[second], anchors=False, intervals=False)
    rows = _rows(work, """SELECT p.ability > f.ability_lo, p.ability < f.range_lo, p.out_of_range, p.range_side,
                                 p.range_reason, p.ability_distance, p.low
                          FROM predictions AS p JOIN proxy_fits AS f ON f.fit_id = p.fit_id AND f.target = p.target
                          WHERE p.model = ?""", second)
    assert rows and all(r[:6] == (True, True, True, "below", "ability", 0) and r[6] <= 0.01 for r in rows)
    notes = Warehouse(work).predict(second, allow_partial=True).notes
    assert any("all but the weakest of the models the fit was trained on" in n and "down to" in n for n in notes)


def test_in_range_models_keep_the_residual_interval_exactly(dated):
    """Nothing changes for a model inside the range: its interval is the residuals' (today's formula,
    recomputed here from proxy_fits), and with 0 anchors it is the sources' answer."""
    db, held, _ = dated
    rows = _rows(db, """SELECT p.model, p.predicted, p.low, p.high, p.residual_low, p.residual_high,
                               ln(p.predicted / (1 - p.predicted)) AS z, f.resid_lo, f.resid_hi, p.ability_distance
                        FROM fit_predictions AS p JOIN proxy_fits AS f USING (fit_id, target)
                        WHERE NOT p.out_of_range""")
    assert len({r[0] for r in rows}) == 10
    for model, predicted, low, high, r_low, r_high, z, lo, hi, distance in rows:
        assert (low, high) == (r_low, r_high)
        if distance == 0:
            assert (low, high) == pytest.approx((1 / (1 + math.exp(-(z + lo))), 1 / (1 + math.exp(-(z + hi)))),
                                                abs=1e-12)
    assert _rows(db, "SELECT target, predicted, low, high FROM predictions WHERE model = ? ORDER BY 1", held) == \
        _rows(db, "SELECT target, predicted, low, high FROM source_predictions WHERE model = ? ORDER BY 1", held)


def test_an_anchored_prediction_keeps_its_own_interval_when_flagged(work):
    db, held, _ = work
    with Warehouse(db).connect(write=True) as con:          # three swebench anchors: the held model's own results
        score_store.execute(con, """INSERT INTO scores SELECT ?, benchmark, subdir, instance_id, score, metric_name, origin,
                       'anchors:t', now() FROM scores WHERE benchmark = 'swebench'
                       AND model = (SELECT min(model) FROM scores WHERE benchmark = 'swebench') LIMIT 3""", [held])
    prior = "SELECT prior_kind, prior_sd FROM anchor_estimates WHERE model = ? AND target = 'swebench'"
    (kind, sd_before), = _rows(db, prior, held)
    assert run_pace("metadata", "set", held, "--released", "2024-05-13", "--db", db).exit_code == 0
    served = _served(db, held)
    estimate = _rows(db, "SELECT predicted, low, high FROM anchor_estimates WHERE model = ? AND target = 'swebench'",
                     held)
    assert served["swebench"][-1] == "anchors" and [served["swebench"][:3]] == estimate      # its own interval
    assert served["swebench"][3:6] == (False, None, None)          # and no verdict of the sources' on it
    (kind_after, sd_after), = _rows(db, prior, held)
    assert kind == kind_after == "sources" and sd_after > sd_before    # the sources prior is as wide as served
    notes = json.loads(run_pace("predict", held, "--json", "--allow-partial", "--db", db).stdout)["notes"]
    flagged = next(n for n in notes if n.startswith("out of range"))
    said = flagged.split(":")[0].removeprefix("out of range (").rstrip(")").split(", ")
    assert "swebench" not in said and "gaia" in said            # the anchored target is not said to reach 1 %


def test_a_proxy_on_under_half_of_the_sources_cannot_place_a_model(work):
    db, _, _ = work
    sources = _rows(db, "SELECT sources FROM current_fits WHERE task = 'abs' LIMIT 1")[0][0]
    donor = _rows(db, "SELECT min(model) FROM scores WHERE benchmark = 'gaia'")[0][0]
    few, most = sorted(sources)[:2], sorted(sources)[1:]
    with Warehouse(db).connect(write=True) as con:
        for name, keep in (("Fewsources-1", few), ("Mostsources-1", most)):
            score_store.execute(con, """INSERT INTO scores SELECT ?, benchmark, subdir, instance_id, score, metric_name, origin,
                           'run:t', now() FROM scores WHERE model = ? AND benchmark IN (SELECT unnest(?::VARCHAR[]))""",
                        [name, donor, keep])
        # and ten rows of a benchmark it mostly lacks: under half of its instances, so not counted as had
        partial = sorted(set(sources) - set(few))[-1]
        score_store.execute(con, """INSERT INTO scores SELECT 'Fewsources-1', benchmark, subdir, instance_id, score,
                       metric_name, origin, 'run:t', now() FROM scores WHERE model = ? AND benchmark = ?
                       ORDER BY subdir, instance_id LIMIT 10""", [donor, partial])
    # the verdict is the model's, not its restricted fit's: the view says it before `pace predict` made that fit
    before = _rows(db, "SELECT bool_and(range_reason = 'few sources' AND low <= 0.01 AND high = 1.0), "
                       "bool_or(restricted) FROM predictions WHERE model = ?", "Fewsources-1")
    assert before == [(True, False)]
    thin = Warehouse(db).predict("Fewsources-1", allow_partial=True)
    assert all(p.restricted for p in thin.predictions)
    # its words match its numbers: so few sources rule out nothing, on either side
    assert all((p.out_of_range, p.range_side, p.range_reason) == (True, "both", "few sources")
               and p.low <= 0.01 and p.high == 1.0 for p in thin.predictions)
    said = next(n for n in thin.notes if n.startswith("the sources cannot place this model"))
    assert f"{len(few)} of the current fit's {len(sources)} source benchmarks" in said
    assert "cannot rule out scores from 1.0 % to 100.0 %" in said.replace("\n", " ")
    assert f"({', '.join(few)})" in said          # the benchmarks it has, named
    assert f"; fewer on {partial} (" in said            # and the one it has a few rows of, with its share
    enough = Warehouse(db).predict("Mostsources-1", allow_partial=True)
    assert enough.predictions and not any("cannot place" in n for n in enough.notes)
    assert not any(p.range_reason == "few sources" for p in enough.predictions)
    # a release date tells the side: then only that side is widened, and the note says why
    assert run_pace("metadata", "set", "Fewsources-1", "--released", "1999-01-01", "--db", db).exit_code == 0
    dated = Warehouse(db).predict("Fewsources-1", allow_partial=True)
    assert all((p.range_side, p.range_reason) == ("below", "release date") and p.low <= 0.01 and p.high < 1.0
               for p in dated.predictions)
    # to rounding: two reads of a view sum the weights in whatever order DuckDB's threads take (seen: 3e-16)
    assert [p.high for p in dated.predictions] == pytest.approx([
        r[0] for r in _rows(db, "SELECT residual_high FROM fit_predictions WHERE model = ? AND restricted ORDER BY target",
                            "Fewsources-1")], rel=1e-12, abs=0)


def test_target_width_stops_adding_anchors_once_the_width_is_reached(dated):
    db, held, _ = dated
    everything = Warehouse(db, read_only=True).plan(held, anchors=40).anchors
    path = {t.target: t.widths for t in everything}
    target_pp = 100 * float(np.median([w for t in everything for w in t.widths[1:]]))
    plan = Warehouse(db, read_only=True).plan(held, anchors=40, target_width=target_pp)
    for t in plan.anchors:
        assert t.needed == anchors_to_reach(np.array(t.widths), t.width_now, target_pp / 100)
        assert t.widths[:41] == pytest.approx(path[t.target])          # the same adaptive order, cut short
        if t.needed is not None and t.needed <= 40:
            assert len(t.rows) == t.needed and (t.expected_width <= target_pp / 100 or t.needed == 0)
            assert all(w > target_pp / 100 for w in t.widths[1:t.needed])   # no shorter list reaches it
        else:
            assert len(t.rows) == 40 and any(t.target in n for n in plan.notes)
    assert sum(len(t.rows) for t in plan.anchors) < sum(len(t.rows) for t in everything)
    wide = Warehouse(db, read_only=True).plan(held, anchors=40, target_width=99.9)
    assert all(t.needed == 0 and not t.rows for t in wide.anchors) and not wide.notes   # the sources reach it
    payload = json.loads(run_pace("plan", held, "--anchors", "40", "--json", "--db", db,
                                  env={"PACE_TARGET_WIDTH": str(target_pp)}).stdout)
    assert [a["anchors_listed"] for a in payload["anchors"]] == [len(t.rows) for t in plan.anchors]


@pytest.mark.parametrize("bad", ["0", "-5", "nan", "inf"])
def test_target_width_refuses_a_non_positive_or_non_finite_value(dated, bad):
    db, held, _ = dated
    result = run_pace("plan", held, "--anchors", "10", "--target-width", bad, "--db", db)
    assert result.exit_code == 2 and "--target-width" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert bad in result.stderr.lower()


def test_target_width_needs_anchors(dated):
    db, held, _ = dated
    result = run_pace("plan", held, "--target-width", "10", "--db", db)
    assert result.exit_code == 2 and "--anchors" in result.stderr


def test_anchor_variables_apply_only_with_anchors_and_a_bad_one_is_named(dated):
    """PACE_BUDGET / PACE_TARGET_WIDTH set for anchor plans do not break a plain plan (the flags still do);
    a bad PACE_ANCHOR_COUNT is refused naming the variable."""
    db, held, _ = dated
    for var in ("PACE_BUDGET", "PACE_TARGET_WIDTH"):
        assert run_pace("plan", held, "--db", db, env={var: "5"}).exit_code == 0, var
    bad = run_pace("plan", held, "--db", db, env={"PACE_ANCHOR_COUNT": "-3"})
    assert bad.exit_code == 2 and "(from PACE_ANCHOR_COUNT='-3')" in bad.stderr
    wide = run_pace("plan", held, "--anchors", "5", "--db", db, env={"PACE_TARGET_WIDTH": "0"})
    assert wide.exit_code == 2 and "(from PACE_TARGET_WIDTH='0')" in wide.stderr


def test_an_unreachable_width_is_said_per_target():
    assert anchors_to_reach(np.array([0.5, 0.4, 0.3]), 0.5, 0.1) is None
    assert anchors_to_reach(np.array([0.5, 0.4, 0.3]), 0.05, 0.1) == 0
    assert anchors_to_reach(np.array([0.08, 0.4, 0.09]), 0.5, 0.1) == 2     # the first anchor switches to this path
    stuck = TargetAnchors("swebench", 0.5, 0.3, 0.7, 0, "sources", [], 0.4, [0.4, 0.35, 0.3], None, 2)
    short = TargetAnchors("gaia", 0.5, 0.3, 0.7, 0, "sources", [], 0.4, [0.4, 0.3, 0.2, 0.1], 3, 20)
    notes = _width_notes([stuck, short], 5.0, 2)
    assert notes[0].startswith("swebench: an interval of 5 pp cannot be reached with the 2 instances available")
    assert "about 30.0 pp" in notes[0]
    assert notes[1].startswith("gaia: about 3 anchors reach 5 pp") and "raise --anchors" in notes[1]


def test_a_set_date_follows_its_model_through_an_alias(work):
    db, held, _ = work
    with Warehouse(db).connect(write=True) as con:
        score_store.execute(con, """INSERT INTO scores SELECT 'Spelling-A', benchmark, subdir, instance_id, score, metric_name,
                       origin, 'run:t', now() FROM scores WHERE model = ? AND benchmark = 'ifeval'""", [held])
    assert run_pace("metadata", "set", "Spelling-A", "--released", "2023-03-03", "--db", db).exit_code == 0
    assert run_pace("alias", "add", "Spelling-A", "Renamed-A", "--yes", "--db", db).exit_code == 0
    assert _rows(db, "SELECT model, release_date::VARCHAR FROM model_metadata_set") == [("Renamed-A", "2023-03-03")]


def test_the_release_date_note_gives_the_dates_of_the_fits_it_speaks_of(work):
    """One target flagged on its release date, another on its ability: the date note's range is that of the
    first target's proxy (it took the range over every flagged proxy, so another proxy's older model showed)."""
    from dataclasses import replace

    from warehouse.predict import out_of_range_notes

    db, held, _ = work
    assert run_pace("metadata", "set", held, "--released", "2024-05-13", "--db", db).exit_code == 0
    preds = Warehouse(db).predict(held, allow_partial=True, restrict=False).predictions
    with Warehouse(db).connect(write=True) as con:
        assert len(preds) >= 2
        other = preds[1]                    # its proxy trained on an older model too
        con.execute("UPDATE proxy_fits SET released_lo = DATE '2020-01-01' WHERE fit_id = ? AND target = ?",
                    [other.fit_id, other.target])
        mixed = [preds[0], replace(other, range_reason="ability", ability_distance=0.5),
                 *[replace(p, out_of_range=False) for p in preds[2:]]]
        notes = out_of_range_notes(con, held, mixed)
    dated_note = next(n for n in notes if "was released" in n)
    assert "before every model the fit was trained on (2025-07-01 to 2026-02-01)" in dated_note
    assert any("source ability lies below" in n for n in notes)


def test_a_set_release_date_gives_a_model_without_metadata_a_metadata_prior_from_the_next_fit(work):
    """The anchors' metadata prior read the index's dates only: a date set with `pace metadata set` (which wins
    over an index's everywhere else) gave a model without index metadata no prior."""
    db, held, _ = work
    priors = "SELECT count(*) FROM anchor_priors WHERE model = ? AND kind = 'metadata'"
    assert _rows(db, priors, held) == [(0,)]
    assert run_pace("metadata", "set", held, "--released", "2025-10-15", "--db", db).exit_code == 0
    Warehouse(db).fit(count=12, task="abs")
    assert _rows(db, priors, held)[0][0] >= 1
