"""instance_stats against numpy on a hand-made warehouse (the view is rewritten for scale)."""
from __future__ import annotations

import numpy as np
import pytest

from ingest.load import ingest_tree
from tests.helpers import write_csv
from warehouse.connect import connect

SOURCE = {  # model -> scores of leaf 'a' instances x1, x2 and leaf 'b' instance y1 (None: empty)
    "M1": (1.0, 0.0, 0.5), "M2": (0.0, 0.0, 1.0), "M3": (1.0, 1.0, None), "M4": (0.5, 1.0, 0.0),
}
GAIA = {"M1": (1, 1), "M2": (0, 1), "M3": (1, 0), "M4": (0, 0)}


def test_instance_stats_match_numpy(tmp_path):
    for m, (x1, x2, y1) in SOURCE.items():
        write_csv(tmp_path / "t" / "src" / "a" / f"{m}.csv", f"id,score,metric_name\nx1,{x1},m\nx2,{x2},m\n")
        write_csv(tmp_path / "t" / "src" / "b" / f"{m}.csv",
                  f"id,score,metric_name\ny1,{'' if y1 is None else y1},m\n")
        write_csv(tmp_path / "t" / "gaia" / f"{m}.csv",
                  "id,score,metric_name\n" + "".join(f"g{i},{v},r\n" for i, v in enumerate(GAIA[m])))
    write_csv(tmp_path / "t" / "gaia" / "TargetOnly.csv", "id,score,metric_name\ng0,1,r\n")   # not a known model
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, tmp_path / "t", tmp_path / "lake")
    models = sorted(SOURCE)
    # ability: mean over source leaves of the model's mean score in the leaf
    leaf_a = {m: np.mean(SOURCE[m][:2]) for m in models}
    ability = {m: np.mean([leaf_a[m]] + ([SOURCE[m][2]] if SOURCE[m][2] is not None else [])) for m in models}
    gaia = {m: np.mean(GAIA[m]) for m in models}
    got = {(r[0], r[1]): r[2:] for r in con.execute("""
        SELECT subdir, instance_id, n_models, mean_score, variance, discrimination, target_correlation['gaia']
        FROM instance_stats""").fetchall()}
    assert set(got) == {("a", "x1"), ("a", "x2"), ("b", "y1")}
    for (subdir, iid), (n, mean, var, disc, corr_gaia) in got.items():
        k = {"x1": 0, "x2": 1, "y1": 2}[iid]
        scored = [m for m in models if SOURCE[m][k] is not None]
        x = np.array([SOURCE[m][k] for m in scored])
        assert n == len(scored) and mean == pytest.approx(x.mean()) and var == pytest.approx(x.var())
        assert disc == pytest.approx(np.corrcoef(x, [ability[m] for m in scored])[0, 1])
        assert corr_gaia == pytest.approx(np.corrcoef(x, [gaia[m] for m in scored])[0, 1])


def test_the_stored_table_is_the_live_rule_and_agrees_with_instance_target_corr(tmp_path):
    """Two targets: the slot-per-target correlations of instance_stats_live equal instance_target_corr's
    join (one row per instance and target), and the stored table equals the rule."""
    from ingest.summaries import drift
    from ingest.synthetic import generate_tree

    generate_tree(tmp_path / "t", n_models=6, seed=1, scale=0.02)
    con = connect(tmp_path / "w.duckdb")
    ingest_tree(con, tmp_path / "t", tmp_path / "lake")
    assert drift(con) == {}
    slots = {(b, s, i, t): c for b, s, i, t, c in con.execute("""
        SELECT benchmark, subdir, instance_id, unnest(map_keys(target_correlation)),
               unnest(map_values(target_correlation)) FROM instance_stats""").fetchall()}
    joined = {(b, s, i, t): c for b, s, i, t, c in con.execute(
        "SELECT benchmark, subdir, instance_id, target, correlation FROM instance_target_corr").fetchall()}
    assert len({k[3] for k in joined}) >= 2 and slots.keys() == joined.keys()
    assert all((slots[k] is None) == (joined[k] is None) for k in joined)
    assert max(abs(slots[k] - joined[k]) for k in joined if joined[k] is not None) < 1e-9
    n_null = sum(v is None for v in joined.values())
    assert 0 < n_null < len(joined)                     # constant instances are NULL, the others are not


def test_a_ninth_target_is_refused(tmp_path):
    from warehouse.errors import UserError
    from warehouse.roles import MAX_TARGETS, set_role

    con = connect(tmp_path / "w.duckdb")
    have = con.execute("SELECT count(*) FROM benchmarks WHERE role = 'target'").fetchone()[0]
    for k in range(MAX_TARGETS - have):
        set_role(con, f"t{k}", "target")
    with pytest.raises(UserError, match="8 targets already"):
        set_role(con, "one_more", "target")
    set_role(con, "t0", "target")                       # one that is a target already stays one
