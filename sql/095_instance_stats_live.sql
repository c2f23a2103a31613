-- The rule for instance difficulty, worked out from `scores` on every query. The table instance_stats
-- holds its rows, kept equal to it by every write (ingest.summaries), and is what to query; this view
-- is the definition (`pace doctor` compares the two) and costs a scan of every source row.
-- Difficulty of every source instance, over the known models that scored it:
--   mean_score / difficulty (1 - mean) / variance (population),
--   discrimination: Pearson correlation of the instance score with the models' source ability,
--   target_correlation: MAP target -> correlation with that target's mean over the models that scored
--                 the instance (instance_target_corr's formula, for the first eight targets by name:
--                 `pace benchmarks set` refuses a ninth; the tests compare the two).
-- NULL correlations mean the instance is constant over the models (it cannot rank them).
CREATE OR REPLACE VIEW instance_stats_live AS
-- One scan of the source rows. Each row carries its model's ability and its target means as a list in
-- target order (slot k = the k-th target by name), so the correlations with the targets are aggregates
-- of that one scan instead of a join that repeats every row once per target (instance_target_corr;
-- 3.3 -> 1.0 CPU-s per 2.5 M source rows at 4 targets).
WITH target_mean AS (   -- read twice: materialised once (a few rows per model)
    SELECT model, target, mean FROM target_means
),
names AS (
    SELECT list(DISTINCT target ORDER BY target) AS targets, count(DISTINCT target) AS n FROM target_mean
),
per_model AS (
    SELECT a.model, a.ability, list(t.mean ORDER BY t.target) AS means
    FROM model_ability AS a LEFT JOIN target_mean AS t USING (model)
    GROUP BY ALL
),
scored AS (
    SELECT s.benchmark, s.subdir, s.instance_id, s.score, p.ability, p.means
    FROM scores AS s
    JOIN per_model AS p USING (model)
    WHERE s.benchmark IN (SELECT benchmark FROM benchmarks WHERE role = 'source') AND s.score IS NOT NULL
),
base AS (
    SELECT benchmark, subdir, instance_id,
           count(*)                 AS n_models,
           avg(score)               AS mean_score,
           1 - avg(score)           AS difficulty,
           var_pop(score)           AS variance,
           CASE WHEN var_pop(score) > 0 THEN corr(score, ability) END AS discrimination,
           [corr(score, means[1]), corr(score, means[2]), corr(score, means[3]), corr(score, means[4]),
            corr(score, means[5]), corr(score, means[6]), corr(score, means[7]), corr(score, means[8])]
               AS slot_corr,
           [var_pop(means[1]), var_pop(means[2]), var_pop(means[3]), var_pop(means[4]),
            var_pop(means[5]), var_pop(means[6]), var_pop(means[7]), var_pop(means[8])]
               AS slot_var
    FROM scored
    GROUP BY ALL
)
SELECT b.benchmark, b.subdir, b.instance_id, b.n_models, b.mean_score, b.difficulty, b.variance, b.discrimination,
       CASE WHEN n.n > 0 THEN map_from_entries(list_slice([
                 struct_pack(k := n.targets[1], v := CASE WHEN b.variance > 0 AND b.slot_var[1] > 0 THEN b.slot_corr[1] END),
                 struct_pack(k := n.targets[2], v := CASE WHEN b.variance > 0 AND b.slot_var[2] > 0 THEN b.slot_corr[2] END),
                 struct_pack(k := n.targets[3], v := CASE WHEN b.variance > 0 AND b.slot_var[3] > 0 THEN b.slot_corr[3] END),
                 struct_pack(k := n.targets[4], v := CASE WHEN b.variance > 0 AND b.slot_var[4] > 0 THEN b.slot_corr[4] END),
                 struct_pack(k := n.targets[5], v := CASE WHEN b.variance > 0 AND b.slot_var[5] > 0 THEN b.slot_corr[5] END),
                 struct_pack(k := n.targets[6], v := CASE WHEN b.variance > 0 AND b.slot_var[6] > 0 THEN b.slot_corr[6] END),
                 struct_pack(k := n.targets[7], v := CASE WHEN b.variance > 0 AND b.slot_var[7] > 0 THEN b.slot_corr[7] END),
                 struct_pack(k := n.targets[8], v := CASE WHEN b.variance > 0 AND b.slot_var[8] > 0 THEN b.slot_corr[8] END)
             ], 1, least(n.n, 8))) END AS target_correlation
FROM base AS b
CROSS JOIN names AS n;
