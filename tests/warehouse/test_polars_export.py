"""Another team reading the export with polars alone (scan_parquet over the hive-partitioned scores)
gets the warehouse's numbers: target_means and predictions of one model are recomputed from the
exported tables and compared with the exported views (DuckDB's) to 1e-9."""
from __future__ import annotations

import pytest

pl = pytest.importorskip("polars", reason="polars is not installed (extra `polars`; `make test` installs it)")


def _scores(export):
    return pl.scan_parquet(export / "scores" / "**" / "*.parquet", hive_partitioning=True)


def _one_model(export) -> str:
    known = pl.read_parquet(export / "models.parquet").filter(pl.col("known")).sort("model")
    return known["model"][0]


def test_target_means_of_one_model_from_the_export(tiny_fitted):
    _, export = tiny_fitted
    model = _one_model(export)
    targets = pl.scan_parquet(export / "benchmarks.parquet").filter(pl.col("role") == "target").select(
        pl.col("benchmark"))
    rows = _scores(export).join(targets, on="benchmark")
    n_instances = rows.group_by("benchmark").agg(pl.struct("subdir", "instance_id").n_unique().alias("n"))
    mine = (rows.filter(pl.col("model") == model).group_by("benchmark")
            .agg(pl.col("score").fill_null(0).sum().alias("total")))
    ours = (n_instances.join(mine, on="benchmark", how="left")
            .select(pl.col("benchmark").alias("target"), (pl.col("total").fill_null(0) / pl.col("n")).alias("mean"))
            .collect().sort("target"))
    exported = (pl.read_parquet(export / "target_means.parquet").filter(pl.col("model") == model)
                .select("target", "mean").sort("target"))
    assert ours["target"].to_list() == exported["target"].to_list() and len(ours) == 4
    assert max(abs(a - b) for a, b in zip(ours["mean"], exported["mean"])) <= 1e-9


def _ability(export, fit_id: str, model: str, mine) -> float | None:
    """The model's ability on the fit's scale (proxy_leaves, proxy_ability_instances; collapsed cells out)."""
    import math

    inst = pl.read_parquet(export / "proxy_ability_instances.parquet").filter(pl.col("fit_id") == fit_id)
    leaves = pl.read_parquet(export / "proxy_leaves.parquet").filter(pl.col("fit_id") == fit_id)
    collapsed = pl.read_parquet(export / "collapsed_scores.parquet").filter(pl.col("model") == model)
    keys = ["benchmark", "subdir", "instance_id"]
    levels = inst.group_by("benchmark", "subdir").agg(pl.col("centre").mean().alias("level"))
    deviations = (mine.join(collapsed.select(keys), on=keys, how="anti").join(inst, on=keys)
                  .group_by("benchmark", "subdir").agg((pl.col("score") - pl.col("centre")).mean().alias("dev")))
    parts = levels.join(deviations, on=["benchmark", "subdir"]).join(leaves, on=["benchmark", "subdir"])
    if parts.is_empty():
        return None
    num = den = 0.0
    for row in parts.iter_rows(named=True):
        p = min(max(row["level"] + row["dev"], 0.02), 0.98)
        num += row["loading"] * (math.log(p / (1 - p)) - row["centre"]) / row["scale"]
        den += row["loading"] ** 2
    return num / den


def test_predictions_of_one_model_from_the_export(tiny_fitted):
    import math

    _, export = tiny_fitted
    model = _one_model(export)
    fits = pl.read_parquet(export / "proxy_fits.parquet").filter((pl.col("task") == "abs")
                                                                & pl.col("restricted_for").is_null())
    current = (fits.sort(["created_at", "fit_id"], descending=True)
               .group_by("target", maintain_order=True).first())
    weights = (pl.read_parquet(export / "proxy_weights.parquet")
               .join(current.select("fit_id", "task", "target"), on=["fit_id", "task", "target"])
               .group_by("target", "benchmark", "subdir", "instance_id")
               .agg(pl.col("weight").sum(), pl.col("center").first()))
    mine = _scores(export).filter((pl.col("model") == model) & pl.col("score").is_not_null()).select(
        "benchmark", "subdir", "instance_id", "score").collect()
    signal = (weights.join(mine, on=["benchmark", "subdir", "instance_id"], how="left")
              .group_by("target").agg((pl.col("weight") * (pl.col("score") - pl.col("center")).fill_null(0))
                                      .sum().alias("signal")))
    ours = {}
    for row in signal.join(current, on="target").iter_rows(named=True):
        linear = min(max(row["intercept"] + row["signal"], row["clamp_lo"]), row["clamp_hi"])
        if row["link"] != "logit":
            ours[row["target"]] = linear
            continue
        theta = _ability(export, row["fit_id"], model, mine)
        if theta is None:
            z = linear
        else:   # the default method: Pace part and ability link, gated by the distance outside the range
            distance = max(row["ability_lo"] - theta, theta - row["ability_hi"], 0) / row["ability_sd"]
            w = row["gate_base"] + (1 - row["gate_base"]) * min(distance / row["gate_width"], 1)
            z = (1 - w) * linear + w * (row["struct_intercept"] + row["struct_slope"] * theta)
        ours[row["target"]] = 1 / (1 + math.exp(-z))
    exported = dict(pl.read_parquet(export / "predictions.parquet").filter(pl.col("model") == model)
                    .select("target", "predicted").iter_rows())
    assert sorted(ours) == sorted(exported) and len(ours) == 4
    assert max(abs(ours[t] - exported[t]) for t in ours) <= 1e-9
