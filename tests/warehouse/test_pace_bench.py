"""The PACE-Bench layout: a fitted selection out as one <target>.jsonl per target (benchmark, subdir,
instance_id, weight per record), and back in as a fit that plan, run and predictions use."""
from __future__ import annotations

import json
import shutil

import duckdb
import pytest

from tests.helpers import run_pace
from ingest import score_store


@pytest.fixture
def copy_db(tiny_fitted, tmp_path):
    db, _ = tiny_fitted
    (tmp_path / "w").mkdir()
    target = tmp_path / "w" / "pace.duckdb"
    shutil.copy(db, target)
    # only the current fits travel in the PACE-Bench layout: drop the fixture's restricted fit, which would
    # otherwise predict some models before the round trip and be superseded by the imported fit after it
    con = duckdb.connect(str(target))
    con.execute("DELETE FROM proxy_weights WHERE fit_id IN (SELECT fit_id FROM proxy_fits WHERE restricted_for IS NOT NULL)")
    con.execute("DELETE FROM proxy_fits WHERE restricted_for IS NOT NULL")
    con.close()
    return target


def _predictions(db):
    con = duckdb.connect(str(db), read_only=True)
    # the proxies' answers (an anchors estimate, served where a model has agentic anchors, is not a proxy's)
    rows = con.execute("SELECT model, target, predicted, low, high, fit_id FROM predictions "
                       "WHERE method <> 'anchors' ORDER BY 1, 2").fetchall()
    con.close()
    return rows


def _same(rows_a, rows_b) -> bool:
    """Same predictions: keys equal, numbers within 1e-12 (DuckDB sums in parallel, in no fixed order)."""
    close = lambda x, y: (x is None and y is None) or (x is not None and y is not None and abs(x - y) <= 1e-12)  # noqa: E731
    return len(rows_a) == len(rows_b) and all(
        a[:2] == b[:2] and a[5] == b[5] and all(close(x, y) for x, y in zip(a[2:5], b[2:5]))
        for a, b in zip(rows_a, rows_b))


def test_export_writes_one_jsonl_per_target_with_the_current_weights(copy_db, tmp_path):
    out = tmp_path / "bench"
    result = run_pace("selections", "export", out, "--format", "pace-bench", "--db", copy_db)
    assert result.exit_code == 0, result
    con = duckdb.connect(str(copy_db), read_only=True)
    expected = con.execute("""SELECT target, benchmark, subdir, instance_id, weight FROM proxy_instances
                              WHERE task = 'abs' ORDER BY ALL""").fetchall()
    targets = [t for (t,) in con.execute("SELECT DISTINCT target FROM current_fits WHERE task = 'abs'").fetchall()]
    con.close()
    assert sorted(p.name for p in out.glob("*.jsonl")) == sorted(f"{t}.jsonl" for t in targets)
    got = []
    for path in out.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            assert {"benchmark", "subdir", "instance_id", "weight"} <= set(rec)
            got.append((path.stem, rec["benchmark"], rec["subdir"], rec["instance_id"], rec["weight"]))
    assert sorted(got) == expected
    # a second export into the same folder needs --overwrite, and replaces only its own files
    (out / "notes.txt").write_text("mine")
    assert run_pace("selections", "export", out, "--format", "pace-bench", "--db", copy_db).exit_code == 2
    assert run_pace("selections", "export", out, "--format", "pace-bench", "--overwrite", "--db",
                    copy_db).exit_code == 0
    assert (out / "notes.txt").read_text() == "mine"


def _ranges(db):
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("""SELECT target, range_lo, range_hi, released_lo, released_hi FROM current_fits
                              WHERE task = 'abs' ORDER BY target""").fetchall()


def test_a_round_trip_gives_the_same_predictions_and_becomes_the_current_fit(copy_db, tmp_path):
    with duckdb.connect(str(copy_db)) as con:     # a fit made with release dates known (the fixture has none)
        con.execute("UPDATE proxy_fits SET released_lo = DATE '2025-01-02', released_hi = DATE '2026-03-04'")
    ranges = _ranges(copy_db)
    assert all(r[1] is not None for r in ranges)
    before = _predictions(copy_db)
    out = tmp_path / "bench"
    assert run_pace("selections", "export", out, "--format", "pace-bench", "--db", copy_db).exit_code == 0
    result = run_pace("selections", "import", out, "--name", "shared-fit", "--db", copy_db)
    assert result.exit_code == 0 and "shared-fit" in result.stdout, result
    after = _predictions(copy_db)
    assert [r[:2] for r in after] == [r[:2] for r in before] and {r[5] for r in after} == {"shared-fit"}
    for old, new in zip(before, after):
        for a, b in zip(old[2:5], new[2:5]):
            assert (a is None and b is None) or abs(a - b) <= 1e-12, (old, new)
    assert _ranges(copy_db) == ranges        # so the out-of-range verdicts travel too
    # importing the same folder again replaces the fit instead of adding a second copy
    assert run_pace("selections", "import", out, "--name", "shared-fit", "--db", copy_db).exit_code == 0
    con = duckdb.connect(str(copy_db), read_only=True)
    n = con.execute("SELECT count(*) FROM proxy_weights WHERE fit_id = 'shared-fit'").fetchone()[0]
    assert n == sum(len(p.read_text().splitlines()) for p in out.glob("*.jsonl"))


def test_a_published_folder_without_centers_is_completed_from_this_warehouse(copy_db, tmp_path):
    """The published dataset has weights only: centers, intercept and clamp come from the models here."""
    folder = tmp_path / "published"
    folder.mkdir()
    con = duckdb.connect(str(copy_db), read_only=True)
    picked = con.execute("""SELECT benchmark, subdir, instance_id, weight FROM proxy_instances
                            WHERE task = 'abs' AND target = 'swebench' ORDER BY ALL""").fetchall()
    con.close()
    lines = [json.dumps({"benchmark": b, "subdir": s, "instance_id": i, "weight": w, "prompt": "ignored"})
             for b, s, i, w in picked]
    (folder / "swebench.jsonl").write_text("\n".join(lines) + "\n")
    result = run_pace("selections", "import", folder, "--db", copy_db)
    assert result.exit_code == 0 and "from this warehouse" in result.stdout, result
    con = duckdb.connect(str(copy_db), read_only=True)
    fit_id, intercept, lo, hi, trained = con.execute("""SELECT fit_id, intercept, clamp_lo, clamp_hi, trained_on
        FROM current_fits WHERE task = 'abs' AND target = 'swebench'""").fetchone()
    means = dict(con.execute("""SELECT model, mean FROM target_means WHERE target = 'swebench' AND n_scored > 0""")
                 .fetchall())
    assert fit_id.startswith("pace-bench-") and sorted(trained) == sorted(means)
    assert abs(intercept - sum(means.values()) / len(means)) <= 1e-12
    assert (lo, hi) == (min(means.values()), max(means.values()))
    model = sorted(means)[0]
    scores = dict(((b, s, i), v) for b, s, i, v in con.execute(
        "SELECT benchmark, subdir, instance_id, score FROM scores WHERE score IS NOT NULL AND model IN "
        "(SELECT unnest(?::VARCHAR[]))", [[model]]).fetchall())
    expected = intercept
    for b, s, i, w in picked:
        values = [v for (v,) in con.execute("""SELECT score FROM scores WHERE benchmark = ? AND subdir = ?
            AND instance_id = ? AND score IS NOT NULL AND model IN (SELECT unnest(?::VARCHAR[]))""",
                                            [b, s, i, sorted(means)]).fetchall()]
        center = sum(values) / len(values) if values else 0.0
        if (b, s, i) in scores:
            expected += w * (scores[(b, s, i)] - center)
    got = con.execute("SELECT predicted FROM predictions WHERE model = ? AND target = 'swebench'",
                      [model]).fetchone()[0]
    assert abs(got - min(max(expected, lo), hi)) <= 1e-9


def test_plan_asks_a_new_model_for_the_imported_instances(copy_db, tmp_path):
    folder = tmp_path / "one"
    folder.mkdir()
    con = duckdb.connect(str(copy_db), read_only=True)
    b, s, i = con.execute("SELECT benchmark, subdir, instance_id FROM scores WHERE benchmark = 'lifbench' "
                          "ORDER BY ALL LIMIT 1").fetchone()
    con.close()
    (folder / "gaia.jsonl").write_text(json.dumps({"benchmark": b, "subdir": s, "instance_id": i, "weight": 0.3}))
    assert run_pace("selections", "import", folder, "--db", copy_db).exit_code == 0
    planned = run_pace("plan", "Brand-New", "--json", "--db", copy_db)
    assert planned.exit_code == 0, planned
    rows = {(r["benchmark"], r["subdir"], r["instance_id"]) for r in json.loads(planned.stdout)["rows"]}
    assert (b, s, i) in rows


@pytest.mark.parametrize("content, needle", [
    ('{"benchmark": "x", "instance_id": "1"}\n', "missing weight"),
    ('{"benchmark": "x", "instance_id": "1", "weight": "heavy"}\n', "weight 'heavy' is not a finite number"),
    ('{"benchmark": "x", "instance_id": "1", "weight": 1}\nnot json\n', "gaia.jsonl:2: not a JSON line"),
])
def test_a_bad_record_is_one_line_naming_file_and_line_and_writes_nothing(copy_db, tmp_path, content, needle):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "gaia.jsonl").write_text(content)
    before = _predictions(copy_db)
    result = run_pace("selections", "import", folder, "--db", copy_db)
    assert result.exit_code == 2 and needle in result.stderr and len(result.stderr.strip().splitlines()) == 1, result
    assert _same(_predictions(copy_db), before)


def test_a_source_benchmark_is_not_a_target_file(copy_db, tmp_path):
    folder = tmp_path / "wrong"
    folder.mkdir()
    (folder / "ifeval.jsonl").write_text('{"benchmark": "x", "instance_id": "1", "weight": 1}\n')
    result = run_pace("selections", "import", folder, "--db", copy_db)
    assert result.exit_code == 2 and "is a source benchmark here, not a target" in result.stderr, result


def _export(copy_db, tmp_path) -> tuple[object, dict[str, list[dict]]]:
    out = tmp_path / "exported"
    assert run_pace("selections", "export", out, "--format", "pace-bench", "--db", copy_db).exit_code == 0
    return out, {p.stem: [json.loads(line) for line in p.read_text().splitlines()] for p in out.glob("*.jsonl")}


def _rewrite(folder, selection: dict[str, list[dict]]) -> None:
    for target, records in selection.items():
        (folder / f"{target}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def _fits(db) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT fit_id, target FROM proxy_fits ORDER BY ALL").fetchall()
    con.close()
    return rows


@pytest.mark.parametrize("change, needle", [
    (lambda rs: [dict(r, benchmark="nosuchbench") if i % 2 else r for i, r in enumerate(rs)],
     r"record\(s\) of 1 benchmark\(s\) that are not source benchmarks here: nosuchbench \(\d+\)"),
    (lambda rs: [dict(r, instance_id=f"zz-{r['instance_id']}") for r in rs],
     r"(\d+) record\(s\) name instances this warehouse has no row for \(gaia.jsonl:1 "),
    (lambda rs: rs + rs[:2], r"2 repeated record\(s\) of 2 instance\(s\), which would add up their weights"),
    (lambda rs: [dict(rs[0], weight=float("nan"))] + rs[1:],
     r"1 record\(s\) with a weight or center that is not a finite number \(gaia.jsonl:1 "),
])
def test_a_selection_naming_unknown_or_repeated_instances_is_refused(copy_db, tmp_path, change, needle):
    """Unknown benchmarks or ids, repeated records, non-finite weights: one line with what and how many, exit
    2, nothing stored (before: the file became the current fit with at most a note)."""
    import re

    out, selection = _export(copy_db, tmp_path)
    selection["gaia"] = change(selection["gaia"])
    _rewrite(out, selection)
    before, fits = _predictions(copy_db), _fits(copy_db)
    result = run_pace("selections", "import", out, "--db", copy_db)
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result
    assert re.search(needle, result.stderr), result.stderr
    assert _fits(copy_db) == fits and _same(_predictions(copy_db), before)


def test_allow_unknown_imports_a_selection_of_instances_not_here_yet_and_says_so(copy_db, tmp_path):
    out, selection = _export(copy_db, tmp_path)
    selection = {t: [dict(r, instance_id=f"zz-{r['instance_id']}") for r in rs] for t, rs in selection.items()}
    _rewrite(out, selection)
    refused = run_pace("selections", "import", out, "--db", copy_db)
    assert refused.exit_code == 2 and "--allow-unknown" in refused.stderr
    result = run_pace("selections", "import", out, "--allow-unknown", "--db", copy_db)
    assert result.exit_code == 0, result
    assert "gaia: none of its" in result.stdout and "every model gets the same prediction" in result.stdout
    # repeated records stay refused with --allow-unknown
    selection["gaia"] += selection["gaia"][:1]
    _rewrite(out, selection)
    again = run_pace("selections", "import", out, "--allow-unknown", "--db", copy_db)
    assert again.exit_code == 2 and "1 repeated record(s)" in again.stderr


def test_a_selections_csv_is_checked_the_same_way(copy_db, tmp_path):
    con = duckdb.connect(str(copy_db), read_only=True)
    b, s, i = con.execute("SELECT benchmark, subdir, instance_id FROM scores WHERE benchmark = 'lifbench' "
                          "ORDER BY ALL LIMIT 1").fetchone()
    con.close()
    header = "mode,fold,target,benchmark,subdir,instance_id,col_idx,weight\n"
    good = f"H,all,gaia,{b},{s},{i},0,0.5\n"
    path = tmp_path / "sel.csv"
    for body, needle in [(good + good, "1 repeated record(s)"), (f"H,all,gaia,{b},{s},{i},0,nan\n", "not a finite"),
                         (good + f"H,all,gaia,{b},{s},nope,0,0.5\n", "1 record(s) name instances")]:
        path.write_text(header + body)
        result = run_pace("selections", "import", path, "--db", copy_db)
        assert result.exit_code == 2 and needle in result.stderr and len(result.stderr.splitlines()) == 1, result
    path.write_text(header + good)
    assert run_pace("selections", "import", path, "--db", copy_db).exit_code == 0


def test_predict_after_importing_a_selection_fits_a_restricted_proxy(copy_db, tmp_path, monkeypatch):
    """A model lacking a source benchmark of an imported fit (method pace-bench) gets a restricted proxy of this
    warehouse's own (the default method, `pace fit`'s defaults) on the benchmarks it has (before: 'the
    restricted fit failed: unknown method pace-bench')."""
    import warehouse.fit
    import warehouse.predict

    out, _ = _export(copy_db, tmp_path)
    assert run_pace("selections", "import", out, "--db", copy_db).exit_code == 0
    con = duckdb.connect(str(copy_db))
    model = con.execute("SELECT min(model) FROM scores WHERE benchmark = 'lifbench'").fetchone()[0]
    score_store.execute(con, "DELETE FROM scores WHERE model = ? AND benchmark = 'lifbench'", [model])
    imported = {f for (f,) in con.execute("SELECT DISTINCT fit_id FROM current_fits WHERE task = 'abs'").fetchall()}
    con.close()
    requests = []
    real_fit = warehouse.fit.fit_and_store

    def cheap_fit(con, req, reopen=None):      # the defaults (B 300, intervals) are slow for a test
        requests.append(req)
        req.options["B"], req.intervals = 5, False
        return real_fit(con, req, reopen=reopen)

    monkeypatch.setattr(warehouse.predict, "fit_and_store", cheap_fit)
    result = run_pace("predict", model, "--allow-partial", "--json", "--db", copy_db)
    assert result.exit_code == 0, result
    payload = json.loads(result.stdout)
    assert payload["missing_sources"] == ["lifbench"] and payload["made_fit"]
    assert [(r.method, r.options.get("count", 100), r.sources, r.restricted_for) for r in requests] == [
        ("default", 100, ["ifeval", "planbench"], model)]
    rows = payload["predictions"]
    restricted = [r for r in rows if r["restricted"]]
    assert restricted and all(r["method"] == "default" and r["fit_id"] == payload["restricted_fit"] for r in restricted)
    # a target whose imported proxy has no lifbench instance is covered as well by it: the current fit stays
    assert all(r["fit_id"] in imported and r["coverage"] == 1.0 for r in rows if not r["restricted"])
    con = duckdb.connect(str(copy_db), read_only=True)
    parents = {p for (p,) in con.execute("SELECT DISTINCT restricted_from FROM proxy_fits WHERE fit_id = ?",
                                         [payload["restricted_fit"]]).fetchall()}
    con.close()
    assert parents == imported
