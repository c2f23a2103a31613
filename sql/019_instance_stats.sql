-- Difficulty of every source instance, over the known models that scored it:
--   mean_score / difficulty (1 - mean) / variance (population),
--   discrimination: Pearson correlation of the instance score with the models' source ability,
--   target_correlation: MAP target -> correlation with that target's mean (see instance_target_corr).
-- NULL correlations mean the instance is constant over the models (it cannot rank them).
CREATE OR REPLACE VIEW instance_stats AS
-- (A model with a source row is known by definition, so no join with `models` is needed; the
-- role filter is a semi-join so DuckDB does not materialise the source rows it shares with
-- instance_target_corr: at 27 M rows that halves the time, 37 -> 18 s.)
WITH scored AS (
    SELECT s.benchmark, s.subdir, s.instance_id, s.model, s.score, a.ability
    FROM scores AS s
    LEFT JOIN model_ability AS a USING (model)
    WHERE s.benchmark IN (SELECT benchmark FROM benchmarks WHERE role = 'source') AND s.score IS NOT NULL
),
base AS (
    SELECT benchmark, subdir, instance_id,
           count(*)                 AS n_models,
           avg(score)               AS mean_score,
           1 - avg(score)           AS difficulty,
           var_pop(score)           AS variance,
           CASE WHEN var_pop(score) > 0 THEN corr(score, ability) END AS discrimination
    FROM scored
    GROUP BY ALL
),
by_target AS (
    SELECT benchmark, subdir, instance_id,
           map_from_entries(list(struct_pack(k := target, v := correlation) ORDER BY target))
               AS target_correlation
    FROM instance_target_corr
    GROUP BY ALL
)
SELECT base.*, by_target.target_correlation
FROM base
LEFT JOIN by_target USING (benchmark, subdir, instance_id);
