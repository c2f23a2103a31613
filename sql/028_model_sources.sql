-- Per model and source benchmark: how many of the benchmark's instances (the union of ids over every
-- model) the model has a usable score for, and whether the benchmark counts as present for it: at least
-- half of them scored (a few missing rows are imputed by a proxy, a missing benchmark is not). A model
-- lacking source benchmarks of the current fit is predicted with a fit restricted to the ones present
-- (restricted_fits, fit_predictions); `pace predict` and `pace plan` read the same rule from here.
--   n_scored     the model's rows with a score in the benchmark (the key is unique per model)
--   n_instances  the benchmark's instances, over all models (from the stored source_leaves)
--   present      n_scored >= 0.5 * n_instances
CREATE OR REPLACE VIEW model_sources AS
WITH sizes AS (
    SELECT benchmark, sum(n_instances) AS n_instances FROM source_leaves GROUP BY benchmark
),
models AS (
    SELECT DISTINCT model FROM scores
),
scored AS (
    SELECT model, benchmark, count(score) AS n_scored FROM scores GROUP BY ALL
)
SELECT m.model, z.benchmark, coalesce(c.n_scored, 0) AS n_scored, z.n_instances,
       coalesce(c.n_scored, 0) >= 0.5 * z.n_instances AS present
FROM models AS m
CROSS JOIN sizes AS z
LEFT JOIN scored AS c ON c.model = m.model AND c.benchmark = z.benchmark;
