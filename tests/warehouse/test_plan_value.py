"""`pace plan` asks only for instances that can change a prediction and says what each benchmark's
calls buy (hand-made fit rows, so every figure is known)."""
from __future__ import annotations

import json
from statistics import NormalDist

import pytest
from typer.testing import CliRunner

from warehouse.cli import app
from warehouse.connect import connect
from warehouse.plan import plan_rows, plan_value, zero_weight_left_out
from ingest import score_store

Z80 = NormalDist().inv_cdf(0.9)


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "plan.duckdb"
    con = connect(path)
    for task, target in (("abs", "gaia"), ("abs", "swebench"), ("pair", "gaia")):
        con.execute("""INSERT INTO proxy_fits (fit_id, task, method, target, budget, params, intercept, clamp_lo,
                           clamp_hi, mix_weight, cal_a, cal_b, resid_lo, resid_hi, interval_level, trained_on,
                           data_hash, created_at)
                       VALUES ('f1', ?, 'instance', ?, 3, '{}', 0.5, 0, 1, 1, NULL, NULL,
                       -0.1, 0.1, 0.8, ['M1', 'M2'], 'h', now())""", [task, target])
    weights = [  # task, target, benchmark, subdir, instance_id, weight, center
        ("abs", "gaia", "b1", "s", "i1", 0.5, 0.5),
        ("abs", "swebench", "b1", "s", "i1", -0.2, 0.5),
        ("abs", "gaia", "b1", "s", "i2", 0.0, 0.5),      # weighs 0 everywhere: never planned
        ("pair", "gaia", "b1", "s", "i2", 0.0, 0.5),
        ("abs", "gaia", "b2", "", "j1", 0.0, 1.0),       # 0 in abs, but it moves the pairwise fit
        ("pair", "gaia", "b2", "", "j1", 0.3, 1.0),
        ("abs", "swebench", "b2", "", "j2", 1.0, 0.5),
    ]
    con.executemany("INSERT INTO proxy_weights VALUES ('f1', ?, ?, ?, ?, ?, 'H', ?, ?)", weights)
    scores = [("M1", "b1", "s", "i1", 1.0), ("M2", "b1", "s", "i1", 0.0),   # variance 0.25
              ("M1", "b1", "s", "i2", 1.0), ("M2", "b1", "s", "i2", 0.0),
              ("M1", "b2", "", "j1", 1.0), ("M2", "b2", "", "j1", 1.0),     # variance 0
              ("M1", "b2", "", "j2", 0.2), ("M2", "b2", "", "j2", 0.8)]     # variance 0.09
    score_store.append(con, "SELECT *, 'm' AS metric_name, 'ingest' AS origin, 'x' AS source_ref, now() AS recorded_at "
                            "FROM (VALUES " + ", ".join(["(?, ?, ?, ?, ?)"] * len(scores)) + ") AS v(model, benchmark, "
                            "subdir, instance_id, score)", [x for row in scores for x in row])
    con.close()
    return path


def test_only_weighted_instances_are_planned(db):
    con = connect(db)
    assert plan_rows(con, "New") == [("b1", "s", "i1"), ("b2", "", "j1"), ("b2", "", "j2")]
    assert zero_weight_left_out(con, "New") == 1
    score_store.execute(con, "INSERT INTO scores VALUES ('New', 'b1', 's', 'i1', 1.0, 'm', 'runner', 'r', now())")
    assert plan_rows(con, "New") == [("b2", "", "j1"), ("b2", "", "j2")]


def test_what_each_benchmark_buys(db):
    con = connect(db)
    v = plan_value(con, "New")
    assert v["z"] == pytest.approx(Z80) and v["targets"] == ["gaia", "swebench"]
    b1, b2 = v["per_benchmark"]["b1"], v["per_benchmark"]["b2"]
    # b1: gaia 0.5^2 * 0.25, swebench 0.2^2 * 0.25; b2: gaia 0 (j1 does not vary), swebench 1^2 * 0.09
    assert b1["half_width"] == pytest.approx({"gaia": Z80 * 0.25, "swebench": Z80 * 0.1})
    assert b2["half_width"] == pytest.approx({"gaia": 0.0, "swebench": Z80 * 0.3})
    total = 0.0625 + 0.01 + 0.09
    assert b1["share"] == pytest.approx(0.0725 / total) and b2["share"] == pytest.approx(0.09 / total)
    assert v["total"] == pytest.approx({"gaia": Z80 * 0.25, "swebench": Z80 * (0.01 + 0.09) ** 0.5})
    score_store.execute(con, "INSERT INTO scores VALUES ('New', 'b2', '', 'j2', 0.5, 'm', 'runner', 'r', now())")
    assert "b2" not in plan_value(con, "New")["per_benchmark"] or \
        plan_value(con, "New")["per_benchmark"]["b2"]["half_width"]["swebench"] == 0.0


def test_plan_command_reports_it(db, tmp_path):
    res = CliRunner().invoke(app, ["plan", "New", "--db", str(db), "--json", "--out", str(tmp_path / "p.csv")])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["instances"] == 3 and d["zero_weight_left_out"] == 1
    assert [r["benchmark"] for r in d["per_benchmark"]] == ["b2", "b1"]        # largest share first
    assert (tmp_path / "p.csv").read_text().count("\n") == 4                   # header + 3 rows
    text = CliRunner().invoke(app, ["plan", "New", "--db", str(db)])
    assert text.exit_code == 0 and "weigh 0 in every current fit" in text.output and "±pp gaia" in text.output
