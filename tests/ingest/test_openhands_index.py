"""`pace import openhands-index`: a small OpenHands-Index-shaped tree built here (three Pace-style models
with CSV files, an index with a misspelt Pace model, a Pace model whose index run disagrees, a new
model with a partial instance file and a reported score far from its instances, a metadata-only model,
a second spelling, an alternative agent, commit0), imported with every guarantee of ingest."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from ingest import derived
from ingest.errors import IngestError
from ingest.lake import lake_drift
from ingest.load import ingest_tree
from ingest.openhands_index import import_index, spelling_key
from tests.helpers import run_pace, write_csv
from warehouse import Warehouse
from warehouse.connect import connect

PACE_MODELS = ("Alpha-1.5", "Beta-2", "Gamma-3")
# Pace target rows: (gaia g1..g3, swebench s1..s3) per model
PACE_TARGETS = {"Alpha-1.5": ("110", "101"), "Beta-2": ("011", "110"), "Gamma-3": ("100", "000")}


def pace_tree(root: Path) -> Path:
    for k, model in enumerate(PACE_MODELS):
        scores = [(k + i) % 2 for i in range(4)]
        write_csv(root / "src" / "leaf_a" / f"{model}.csv",
                  "id,score,metric_name\n" + "".join(f"x{i},{s}.0,acc\n" for i, s in enumerate(scores)))
        write_csv(root / "src" / "leaf_b" / f"{model}.csv", f"id,score,metric_name\ny1,{k / 2},acc\ny2,0.5,acc\n")
        gaia, swe = PACE_TARGETS[model]
        write_csv(root / "gaia" / f"{model}.csv",
                  "id,score,metric_name\n" + "".join(f"g{i + 1},{v}.0,resolved\n" for i, v in enumerate(gaia)))
        write_csv(root / "swebench" / f"{model}.csv",
                  "id,score,metric_name\n" + "".join(f"s{i + 1},{v}.0,resolved\n" for i, v in enumerate(swe)))
    return root


def _runs(ids: str, resolved: str, costs=None) -> dict:
    """{id: {"resolved", "cost"}} from ids 'g1 g2 g3', resolved '101' ('n' = null) and costs."""
    out = {}
    for k, (i, r) in enumerate(zip(ids.split(), resolved)):
        cost = 0.25 * (k + 1) if costs is None else costs[k]
        out[i] = {"cost": cost, "resolved": None if r == "n" else r == "1"}
    return out


def _meta(model: str, agent: str = "OpenHands", **extra) -> dict:
    return {"agent_name": agent, "agent_version": "v1.0", "model": model, "openness": "open_weights",
            "release_date": "2026-01-15", "parameter_count_b": 100, "active_parameter_count_b": 10,
            "supports_vision": False, "input_price": 0.5, "output_price": 2.0, "cache_read_price": None,
            "submission_time": "2026-02-01T00:00:00+00:00", "available": True, **extra}


def _reported(**scores) -> list[dict]:
    names = {"gaia": "gaia", "swebench": "swe-bench", "commit0": "commit0"}
    return [{"benchmark": names[b], "score": s, "metric": "accuracy", "cost_per_instance": 0.5,
             "average_runtime": 100.0} for b, s in scores.items()]


def write_json(path: Path, value) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1))
    return path


def index_tree(root: Path) -> Path:
    """The index: see the module doc. Instance files of results/ are the OpenHands agent's."""
    def model(folder: str, meta=None, scores=None, **instances):
        base = root / folder
        if meta is not None:
            write_json(base / "metadata.json", meta)
        if scores is not None:
            write_json(base / "scores.json", scores)
        for bench, runs in instances.items():
            write_json(base / "instance_results" / f"{bench.replace('_', '-')}.json", runs)

    model("results/alpha-1-5", _meta("alpha-1-5"), _reported(gaia=66.7), gaia=_runs("g1 g2 g3", "110"))
    model("results/Beta-2", _meta("Beta-2"), _reported(swebench=66.7, commit0=50.0),
          swe_bench=_runs("s1 s2 s3", "101", [0.5, None, 1.0]), commit0=_runs("c1 c2", "10"))
    model("results/Delta-4", _meta("Delta-4"), _reported(gaia=90.0, swebench=50.0, commit0=0.0),
          gaia=_runs("g1 g2 g3", "100"), swe_bench=_runs("s1 s2", "1n", [None, 0.75]), commit0=_runs("c1 c2", "00"))
    model("results/Epsilon-M2", _meta("Epsilon-2"), gaia=_runs("g1 g2 g3", "011"))
    model("results/Epsilon-2", _meta("Epsilon-2"), [])
    model("results/Zeta-1", _meta("Zeta-1", parameter_count_b=None))
    model("alternative_agents/acp-x/Delta-4", _meta("Delta-4", agent="X CLI"), _reported(gaia=66.7),
          gaia=_runs("g1 g2 g3", "011"))
    (root / "README.md").write_text("an index-shaped test tree\n")
    return root


@pytest.fixture
def trees(tmp_path) -> tuple[Path, Path, Path]:
    """(warehouse with the Pace tree ingested, the Pace tree, the index tree)."""
    db = tmp_path / "pace.duckdb"
    pace = pace_tree(tmp_path / "pace")
    con = connect(db, create=True)
    try:
        ingest_tree(con, pace)
    finally:
        con.close()
    return db, pace, index_tree(tmp_path / "index")


def _import(db: Path, index: Path, **kwargs):
    return Warehouse(db).import_openhands_index(index, **kwargs)


def _q(db: Path, query: str, params=None) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(query, params or []).fetchall()
    finally:
        con.close()


def state(db: Path) -> dict:
    """Everything an import writes, timestamps aside, in a comparable form."""
    tables = {
        "scores": "SELECT model, benchmark, subdir, instance_id, score, metric_name, origin, source_ref FROM scores",
        "displaced": "SELECT model, benchmark, subdir, instance_id, score, source_ref FROM scores_displaced",
        "files": "SELECT path, sha256, model, benchmark, subdir, n_rows, source, tree FROM score_files",
        "runs": "SELECT model, index_model, agent, source, benchmark, instance_id, resolved, cost, source_ref "
                "FROM agentic_runs",
        "metadata": "SELECT model, index_model, agent, release_date, parameter_count_b, raw, source_ref "
                    "FROM model_metadata",
        "reported": "SELECT model, agent, benchmark, score, metric, source_ref FROM reported_scores",
        "roles": "SELECT * FROM benchmarks",
        "preference": "SELECT model, prefer FROM agentic_preference",
        "collapsed": "SELECT * FROM collapsed_cells",
    }
    return {name: sorted(_q(db, sql), key=repr) for name, sql in tables.items()}


def lake_rows(db: Path) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        glob = str(db.parent / "lake" / "scores" / "*" / "*.parquet")
        return sorted(con.execute(f"""SELECT benchmark, model, subdir, instance_id, score, source_ref
                                      FROM read_parquet('{glob}', hive_partitioning = true)""").fetchall(), key=repr)
    finally:
        con.close()


def assert_lake_in_step(db: Path) -> None:
    """The lake, and the stores derived from scores (collapsed cells, counters, instance_stats), equal scores."""
    con = connect(db, refresh_collapsed=False)
    try:
        assert lake_drift(con) == {}
        assert derived.stale(con) == [] and derived.drift(con) == {}
    finally:
        con.close()


def kinds(report) -> dict[str, list]:
    out: dict[str, list] = {}
    for a in report.anomalies:
        out.setdefault(a.kind, []).append(a)
    return out


# ------------------------------------------------------------------------------------------ the import
def test_import_stores_every_file_and_reports_every_anomaly(trees):
    db, _, index = trees
    report = _import(db, index)
    assert report.files == 20 and report.files_new == 20
    found = kinds(report)
    # a reported score far from its instance results (Delta-4 says 90 % on gaia; its 3 instances give 33.3 %)
    (far,) = found["reported_score_far"]
    assert far.where == "results/Delta-4/instance_results/gaia.json" and "90.0 %" in far.message \
        and "33.3 %" in far.message
    # an instance file covering part of the benchmark (Delta-4 lists 2 of the 3 swebench ids)
    (partial,) = found["partial_instances"]
    assert partial.where == "swebench" and partial.items == ["Delta-4 2"]
    # null costs, per benchmark, never 0
    assert {a.where for a in found["null_costs"]} == {"swebench"}
    assert _q(db, "SELECT count(*) FROM agentic_runs WHERE cost IS NULL")[0][0] == 2
    # a second spelling in the index (a folder and the name metadata.json gives), with the alias line
    (second,) = found["second_spelling"]
    assert set(second.where.split(" / ")) == {"Epsilon-M2", "Epsilon-2"}
    assert second.items == ["pace alias add Epsilon-2 Epsilon-M2"]
    # a spelling of a Pace model is suggested, never applied
    (suggested,) = found["alias_suggestion"]
    assert suggested.items == ["pace alias add alpha-1-5 Alpha-1.5 --yes"]
    assert _q(db, "SELECT count(*) FROM model_aliases")[0][0] == 0
    # a run that disagrees with the Pace rows of the same model, benchmark and instance: both kept
    (disagree,) = found["source_disagreement"]
    assert disagree.where == "Beta-2 swebench" and "differ on 2 of 3" in disagree.message \
        and "views use pace" in disagree.message
    # the loader's own anomalies that do not fit an index are not raised (new models are not "unknown")
    assert not {"unknown_model", "unknown_ids", "target_rows_differ"} & set(found)
    assert ("6 models in the index (7 folders): 1 have source rows; 3 have agentic results only (the source-based "
            "methods leave them out until their sources are ingested): Delta-4, Epsilon-M2, alpha-1-5; 2 have "
            "metadata only: Epsilon-2, Zeta-1") in report.notes
    assert_lake_in_step(db)


def test_rows_land_where_the_design_says(trees):
    db, _, index = trees
    _import(db, index)
    # every agent's runs in agentic_runs, with costs; the OpenHands agent's also as score rows
    assert _q(db, "SELECT agent, count(*) FROM agentic_runs GROUP BY ALL ORDER BY ALL") == \
        [("acp-x", 3), ("openhands", 18)]
    assert _q(db, "SELECT count(*) FROM scores WHERE source_ref LIKE 'alternative_agents/%'")[0][0] == 0
    assert _q(db, "SELECT min(resolved), max(resolved), count(*) - count(resolved) FROM agentic_runs") == [(0, 1, 1)]
    # Beta-2 has Pace swebench files: the Pace rows stay in scores, the index run waits in scores_displaced
    assert _q(db, "SELECT instance_id, score FROM scores WHERE model = 'Beta-2' AND benchmark = 'swebench' "
                  "ORDER BY 1") == [("s1", 1.0), ("s2", 1.0), ("s3", 0.0)]
    assert _q(db, "SELECT instance_id, score FROM scores_displaced ORDER BY 1") == [("s1", 1.0), ("s2", 0.0),
                                                                                     ("s3", 1.0)]
    assert _q(db, "SELECT source, in_use, n_rows FROM target_sources WHERE model = 'Beta-2' AND target = 'swebench' "
                  "ORDER BY 1") == [("openhands-index", False, 3), ("pace", True, 3)]
    assert _q(db, "SELECT instance_id, pace_score, openhands_index_score, used FROM source_disagreements "
                  "ORDER BY 1") == [("s2", 1.0, 0.0, "pace"), ("s3", 0.0, 1.0, "pace")]
    # commit0 is a target; its rows are score rows
    assert _q(db, "SELECT role FROM benchmarks WHERE benchmark = 'commit0'") == [("target",)]
    assert _q(db, "SELECT count(*) FROM scores WHERE benchmark = 'commit0'")[0][0] == 4
    # metadata (metadata-only folders included), reported scores as fractions, costs
    assert _q(db, "SELECT model, agent, release_date::VARCHAR, parameter_count_b FROM model_metadata "
                  "WHERE model IN ('Zeta-1', 'Delta-4') ORDER BY 1, 2") == \
        [("Delta-4", "acp-x", "2026-01-15", 100.0), ("Delta-4", "openhands", "2026-01-15", 100.0),
         ("Zeta-1", "openhands", "2026-01-15", None)]
    assert _q(db, "SELECT score FROM reported_scores WHERE model = 'Delta-4' AND agent = 'openhands' "
                  "AND benchmark = 'gaia'") == [(0.9,)]
    assert _q(db, "SELECT instance_id, cost FROM instance_costs WHERE model = 'Beta-2' AND benchmark = 'swebench' "
                  "ORDER BY 1") == [("s1", 0.5), ("s2", None), ("s3", 1.0)]
    # provenance: every file, with its source; files without score rows have n_rows 0
    assert _q(db, "SELECT count(*), sum(n_rows) FROM score_files WHERE source = 'openhands-index'") == [(20, 18)]


def test_views_say_sensible_things_about_the_new_models(trees):
    db, _, index = trees
    _import(db, index)
    models = {r[0]: r[1:] for r in _q(db, "SELECT model, n_rows, known, has_target, has_metadata FROM models")}
    assert models["Zeta-1"] == (0, False, False, True)            # metadata only: listed, nothing else
    assert models["Delta-4"] == (7, False, True, True)            # agentic results only
    assert models["Beta-2"][1:] == (True, True, True)
    means = {(m, t): r for m, t, *r in _q(db, "SELECT model, target, n_instances, n_scored, mean, mean_observed, "
                                              "known FROM target_means")}
    assert means[("Delta-4", "gaia")] == [3, 3, pytest.approx(1 / 3), pytest.approx(1 / 3), False]
    # the instance set of a target is the union over models with source rows: unchanged by the import
    assert means[("Alpha-1.5", "swebench")][:3] == [3, 3, pytest.approx(2 / 3)]
    assert means[("Beta-2", "commit0")][:2] == [2, 2]
    assert ("Zeta-1", "gaia") not in means
    # source-based folds leave out models without source rows
    con = connect(db, )
    try:
        labelled = {m for (m,) in con.execute("SELECT model FROM split_folds('loo')").fetchall()}
        coverage = con.execute("SELECT count(*), max(coverage) FROM coverage WHERE model = 'Delta-4' "
                               "AND role = 'source'").fetchone()
    finally:
        con.close()
    assert labelled == set(PACE_MODELS)
    assert coverage == (2, 0.0)


# --------------------------------------------------------------------------------- guarantees of ingest
def test_a_second_import_is_a_no_op(trees):
    db, _, index = trees
    _import(db, index)
    before, lake = state(db), lake_rows(db)
    again = _import(db, index)
    assert (again.files_unchanged, again.files_new, again.files_changed, again.rows_written) == (20, 0, 0, 0)
    assert state(db) == before and lake_rows(db) == lake
    assert kinds(again).keys() == kinds(_import(db, index)).keys()      # anomalies are reported every time


def test_a_changed_file_replaces_exactly_its_rows(trees):
    db, _, index = trees
    _import(db, index)
    before = state(db)
    write_json(index / "results/Delta-4/instance_results/gaia.json", _runs("g1 g2 g3", "111", [1.0, 2.0, 3.0]))
    report = _import(db, index)
    assert (report.files_changed, report.files_unchanged) == (1, 19)
    after = state(db)
    assert _q(db, "SELECT sum(score) FROM scores WHERE model = 'Delta-4' AND benchmark = 'gaia'") == [(3.0,)]
    assert _q(db, "SELECT sum(cost) FROM agentic_runs WHERE source_ref = 'results/Delta-4/instance_results/gaia.json'"
              ) == [(6.0,)]
    for name in ("metadata", "reported", "displaced"):
        assert after[name] == before[name]
    changed = {r for r in set(after["runs"]) ^ set(before["runs"])}
    assert {r[-1] for r in changed} == {"results/Delta-4/instance_results/gaia.json"}
    assert_lake_in_step(db)


def test_malformed_json_is_file_line_and_nothing_is_written(trees, tmp_path):
    db, _, index = trees
    _import(db, index)
    before, lake = state(db), lake_rows(db)
    write_json(index / "results/Delta-4/instance_results/gaia.json", _runs("g1 g2 g3", "000"))
    bad = index / "results/Zeta-1/instance_results/gaia.json"
    bad.parent.mkdir(parents=True)
    bad.write_text('{\n "g1": {"cost": 0.1, "resolved": true},\n "g2": {"cost": 0.1 "resolved": false}\n}\n')
    with pytest.raises(IngestError) as err:
        _import(db, index)
    assert str(err.value).startswith(f"{bad}:3: not valid JSON")
    assert state(db) == before and lake_rows(db) == lake       # the good change was not written either
    result = run_pace("import", "openhands-index", index, "--db", db)
    assert result.exit_code == 2 and result.stderr.strip().startswith(f"error: {bad}:3: not valid JSON")
    # structure errors name the line of the instance too
    bad.write_text('{\n "g1": {"cost": 0.1, "resolved": true},\n "g2": {"cost": -1, "resolved": false}\n}\n')
    with pytest.raises(IngestError, match=r"gaia.json:3: instance 'g2': cost is -1"):
        _import(db, index)
    bad.write_text('{"g1": {"cost": 0.1, "resolved": "yes"}}')
    with pytest.raises(IngestError, match=r":1: instance 'g1': resolved is \"yes\""):
        _import(db, index)
    write_json(index / "results/Zeta-1/metadata.json", _meta("Zeta-1", release_date="soon"))
    bad.unlink()
    with pytest.raises(IngestError, match=r"metadata.json:\d+: release_date is \"soon\""):
        _import(db, index)
    assert state(db) == before


def test_a_failed_first_import_leaves_no_warehouse(tmp_path):
    index = index_tree(tmp_path / "index")
    (index / "results/Beta-2/scores.json").write_text("[{\"benchmark\": \"gaia\", \"score\": NaN}]")
    db = tmp_path / "new.duckdb"
    with pytest.raises(IngestError, match="scores.json:1: not valid JSON: NaN"):
        _import(db, index)
    assert not db.exists()


def test_prefer_is_stored_and_moves_whole_cells_both_ways(trees):
    db, pace, index = trees
    _import(db, index)
    pace_rows = _q(db, "SELECT instance_id, score FROM scores WHERE model = 'Beta-2' AND benchmark = 'swebench' "
                       "ORDER BY 1")
    report = _import(db, index, prefer="openhands-index")
    assert report.rows_written == 0 and any("preference: * -> openhands-index" in n for n in report.notes)
    assert _q(db, "SELECT instance_id, score, source_ref FROM scores WHERE model = 'Beta-2' AND benchmark = 'swebench' "
                  "ORDER BY 1") == [("s1", 1.0, "results/Beta-2/instance_results/swe-bench.json"),
                                    ("s2", 0.0, "results/Beta-2/instance_results/swe-bench.json"),
                                    ("s3", 1.0, "results/Beta-2/instance_results/swe-bench.json")]
    assert _q(db, "SELECT DISTINCT source_ref FROM scores_displaced") == [("swebench/Beta-2.csv",)]
    assert "views use openhands-index" in kinds(report)["source_disagreement"][0].message
    assert_lake_in_step(db)
    # persists: a plain import, and an ingest of the Pace tree (whose rows now wait aside), keep it
    assert _import(db, index).rows_written == 0
    again = Warehouse(db).ingest(pace)
    assert (again.files_unchanged, again.files_reloaded) == (12, 0)
    assert not {"reloaded_rows", "missing_from_leaf"} & set(kinds(again))
    assert _q(db, "SELECT DISTINCT source_ref FROM scores_displaced") == [("swebench/Beta-2.csv",)]
    # one model back to pace; then every model
    _import(db, index, prefer=["Beta-2=pace"])
    assert _q(db, "SELECT instance_id, score FROM scores WHERE model = 'Beta-2' AND benchmark = 'swebench' "
                  "ORDER BY 1") == pace_rows
    assert _q(db, "SELECT model, prefer FROM agentic_preference ORDER BY 1") == [("*", "openhands-index"),
                                                                                 ("Beta-2", "pace")]
    _import(db, index, prefer="pace")
    assert _q(db, "SELECT count(*) FROM scores_displaced WHERE source_ref LIKE 'results/%'")[0][0] == 3
    assert_lake_in_step(db)


def test_the_order_of_the_two_sources_does_not_matter(trees, tmp_path):
    db, pace, index = trees
    _import(db, index)
    other = tmp_path / "other.duckdb"
    Warehouse(other).import_openhands_index(index)         # the index first, then the Pace files
    Warehouse(other).ingest(pace)
    assert state(other)["scores"] == state(db)["scores"]
    assert state(other)["displaced"] == state(db)["displaced"]
    assert_lake_in_step(other)


def test_alias_add_merges_spellings_and_applies_the_preference(trees):
    db, _, index = trees
    _import(db, index)
    result = run_pace("alias", "add", "alpha-1-5", "Alpha-1.5", "--db", db)
    assert result.exit_code == 0, result.output
    assert _q(db, "SELECT count(*) FROM agentic_runs WHERE model = 'alpha-1-5'")[0][0] == 0
    assert _q(db, "SELECT DISTINCT model FROM model_metadata WHERE index_model = 'alpha-1-5'") == [("Alpha-1.5",)]
    # the two sources now share Alpha-1.5's gaia: the Pace rows stay, the index run is displaced
    assert _q(db, "SELECT DISTINCT source_ref FROM scores WHERE model = 'Alpha-1.5' AND benchmark = 'gaia'") == \
        [("gaia/Alpha-1.5.csv",)]
    assert _q(db, "SELECT count(*) FROM scores_displaced WHERE model = 'Alpha-1.5'")[0][0] == 3
    assert_lake_in_step(db)
    again = _import(db, index)
    assert again.rows_written == 0 and "alias_suggestion" not in kinds(again)


def test_prune_removes_a_vanished_file_and_its_side_rows(trees):
    db, _, index = trees
    _import(db, index)
    (index / "alternative_agents/acp-x/Delta-4/instance_results/gaia.json").unlink()
    (index / "results/Delta-4/instance_results/commit0.json").unlink()
    kept = _import(db, index)
    assert kept.files_disappeared == 2 and len(kinds(kept)["disappeared_file"]) == 2
    assert _q(db, "SELECT count(*) FROM agentic_runs WHERE agent = 'acp-x'")[0][0] == 3
    pruned = _import(db, index, prune=True)
    assert pruned.files_pruned == 2
    assert _q(db, "SELECT count(*) FROM agentic_runs WHERE agent = 'acp-x'")[0][0] == 0
    assert _q(db, "SELECT count(*) FROM scores WHERE model = 'Delta-4' AND benchmark = 'commit0'")[0][0] == 0
    assert _q(db, "SELECT count(*) FROM model_metadata WHERE agent = 'acp-x'")[0][0] == 1
    assert_lake_in_step(db)


def test_strict_refuses_the_anomalies_and_writes_nothing(trees):
    db, _, index = trees
    before = state(db)
    with pytest.raises(IngestError, match="strict=True"):
        _import(db, index, strict=True)
    assert state(db) == before


def test_cli_json_and_bad_input(trees, tmp_path):
    db, _, index = trees
    result = run_pace("import", "openhands-index", index, "--db", db, "--json", "--prefer", "Beta-2=openhands-index")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["source"] == "openhands-index" and data["anomaly_counts"]["source_disagreement"] == 1
    for args, message in [
        (["--prefer", "index"], "--prefer 'index': the source must be one of pace, openhands-index"),
        (["--prefer", "=pace"], "--prefer MODEL must be a non-empty model name"),
        (["--prefre", "pace"], "No such option"),
    ]:
        bad = run_pace("import", "openhands-index", index, "--db", db, *args)
        assert bad.exit_code == 2 and message in bad.output, bad.output
    empty = tmp_path / "empty"
    empty.mkdir()
    for path, message in [(tmp_path / "nowhere", "no such directory"), (empty, "neither results/ nor alternative")]:
        bad = run_pace("import", "openhands-index", path, "--db", db)
        assert bad.exit_code == 2 and message in bad.output and len(bad.stderr.strip().splitlines()) == 1


def test_unknown_benchmark_files_are_skipped_and_said(trees):
    db, _, index = trees
    write_json(index / "results/Delta-4/instance_results/swe-bench-live.json", _runs("z1", "1"))
    report = _import(db, index)
    (skipped,) = kinds(report)["unknown_benchmark"]
    assert skipped.where.endswith("swe-bench-live.json")
    assert _q(db, "SELECT count(*) FROM benchmarks WHERE benchmark LIKE '%live%'")[0][0] == 0


def test_spelling_key():
    assert spelling_key("MiniMax-M2.7") == spelling_key("Minimax-2.7")
    assert spelling_key("claude-opus-4-5") == spelling_key("Claude-4.5-Opus")
    assert spelling_key("GPT-5.2") != spelling_key("GPT-5.2-Codex")
    assert spelling_key("GPT-5.4") != spelling_key("GPT-4.5")
    assert spelling_key("Kimi-K2.5") != spelling_key("Kimi-K2")


def test_import_into_a_warehouse_made_before_commit0_was_a_target(tmp_path):
    """An older warehouse holds commit0 'excluded' (the former seed): the schema turns it into a target
    once, when no commit0 rows were ingested; a role set afterwards stays."""
    db = tmp_path / "old.duckdb"
    con = connect(db, create=True)
    con.execute("UPDATE benchmarks SET role = 'excluded' WHERE benchmark = 'commit0'")
    con.execute("DELETE FROM pace_meta WHERE key IN ('commit0_target', 'schema')")
    con.close()
    con = connect(db)
    assert con.execute("SELECT role FROM benchmarks WHERE benchmark = 'commit0'").fetchone() == ("target",)
    con.execute("UPDATE benchmarks SET role = 'excluded' WHERE benchmark = 'commit0'")
    con.execute("DELETE FROM pace_meta WHERE key = 'schema'")
    con.close()
    con = connect(db)
    assert con.execute("SELECT role FROM benchmarks WHERE benchmark = 'commit0'").fetchone() == ("excluded",)
    con.close()
    report = import_index(connect(db), index_tree(tmp_path / "index"))
    assert any("commit0 has the role 'excluded' here" in n for n in report.notes)


# ------------------------------------------------------------------------------ the source-based methods
def test_source_based_methods_say_the_same_about_the_pace_models(tmp_path):
    """An import that brings disagreeing runs of two known models, an instance id no known model has and
    a model with agentic results only changes no prediction of the known models; the new model is left
    out of the folds and the fits, with a note."""
    import shutil

    from tests.helpers import synthetic_warehouse, write_index

    a, _ = synthetic_warehouse(tmp_path / "a", n_models=6, seed=1, scale=0.1)
    b = tmp_path / "b" / "pace.duckdb"
    b.parent.mkdir()
    shutil.copy(a, b)
    shutil.copytree(a.parent / "lake", b.parent / "lake")
    ids = {t: [i for (i,) in _q(a, "SELECT DISTINCT instance_id FROM scores WHERE benchmark = ? ORDER BY 1", [t])]
           for t in ("gaia", "swtbench")}
    known = [m for (m,) in _q(a, "SELECT model FROM models WHERE known ORDER BY model")]
    runs = {m: {"gaia": {i: k % 2 == 0 for k, i in enumerate(ids["gaia"])},
                "swt-bench": {i: True for i in ids["swtbench"] + ["extra-1"]}} for m in known[:2]}
    runs["Xeno-1"] = {"gaia": {i: True for i in ids["gaia"]}, "swt-bench": {"extra-1": True, "extra-2": False}}
    report = Warehouse(b).import_openhands_index(write_index(tmp_path / "index", runs, synthetic=True))
    assert {a.kind for a in report.anomalies} >= {"source_disagreement"}

    def run(db):
        wh = Warehouse(db)
        loocv = wh.loocv("abs", method="compat", strict_budget=True, count=8, B=5)
        predicted = wh.sql("SELECT model, target, predicted, actual FROM loocv_predictions WHERE run_id = ? "
                           "ORDER BY 1, 2", [loocv.run_id], output="tuples")[1]
        fit = wh.fit(method="instance", task="abs", count=8, B=5, intervals=False)
        view = wh.sql("SELECT model, target, predicted FROM predictions WHERE model IN (SELECT model FROM models "
                      "WHERE known) ORDER BY 1, 2", output="tuples")[1]
        return loocv, predicted, fit, view

    loocv_a, predicted_a, fit_a, view_a = run(a)
    loocv_b, predicted_b, fit_b, view_b = run(b)
    assert predicted_b == predicted_a and len(predicted_a) == 6 * 4
    # the view sums its terms in the order DuckDB reads them (B holds more row groups): equal to 1e-12
    assert len(view_b) == len(view_a) == 6 * 4
    assert all(x[:2] == y[:2] and abs(x[2] - y[2]) < 1e-12 for x, y in zip(view_a, view_b))
    assert fit_b.trained_on == fit_a.trained_on
    assert not loocv_a.notes and not any("no source rows" in w for w in fit_a.warnings)
    assert loocv_b.notes == ["1 model(s) with target rows but no source rows are left out (nothing to predict them "
                             "from until their source benchmarks are ingested): Xeno-1"]
    assert any("Xeno-1" in w for w in fit_b.warnings)
    # pace fit's anchors item models do train on it (the note says so; only the source proxies leave it out)
    assert any("are left out of the source proxies (the anchors item models train on them)" in w and "Xeno-1" in w
               for w in fit_b.warnings)


def test_doctor_finds_and_repairs_rows_on_the_wrong_side_of_the_rule(trees):
    db, _, index = trees
    _import(db, index)
    con = duckdb.connect(str(db))             # another DuckDB client changes the preference by hand
    con.execute("INSERT INTO agentic_preference VALUES ('Beta-2', 'openhands-index', current_localtimestamp())")
    con.close()
    check = run_pace("doctor", "--check", "--db", db)
    assert check.exit_code == 1 and "preference: 6 row(s) of swebench" in check.output, check.output
    repaired = run_pace("doctor", "--db", db)
    assert repaired.exit_code == 0 and "moved 6 row(s) of swebench" in repaired.output, repaired.output
    assert _q(db, "SELECT DISTINCT source_ref FROM scores WHERE model = 'Beta-2' AND benchmark = 'swebench'") == \
        [("results/Beta-2/instance_results/swe-bench.json",)]
    assert run_pace("doctor", "--check", "--db", db).exit_code == 0
    assert_lake_in_step(db)


def test_a_repeated_instance_id_follows_the_duplicates_policy(trees):
    db, _, index = trees
    path = index / "results/Delta-4/instance_results/gaia.json"
    path.write_text('{\n "g1": {"resolved": true, "cost": 1},\n "g2": {"resolved": false, "cost": 1},\n'
                    ' "g1": {"resolved": false, "cost": 2}\n}\n')
    with pytest.raises(IngestError, match=r"gaia.json:4: id 'g1' repeats an earlier id"):
        _import(db, index, duplicates="error")
    report = _import(db, index, duplicates="last")
    assert any(a.kind == "conflicting_duplicates" and a.where == str(path.relative_to(index)) for a in report.anomalies)
    assert _q(db, "SELECT score FROM scores WHERE model = 'Delta-4' AND benchmark = 'gaia' AND instance_id = 'g1'"
              ) == [(0.0,)]
    assert _q(db, "SELECT cost FROM agentic_runs WHERE source_ref = ? AND instance_id = 'g1'",
              [str(path.relative_to(index))]) == [(2.0,)]
