-- Per source instance and target: Pearson correlation, over the known models that scored the
-- instance, between the instance score and the model's target mean (published semantics).
CREATE OR REPLACE VIEW instance_target_corr AS
SELECT
    s.benchmark, s.subdir, s.instance_id, t.target,
    count(*)                    AS n_models,
    CASE WHEN var_pop(s.score) > 0 AND var_pop(t.mean) > 0
         THEN corr(s.score, t.mean) END AS correlation
FROM scores AS s
JOIN benchmarks AS b USING (benchmark)
JOIN target_means AS t USING (model)
WHERE b.role = 'source' AND s.score IS NOT NULL
GROUP BY ALL;
