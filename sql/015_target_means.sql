-- Per model and target: the target score, for every model with source rows (known) and every model with
-- target rows (e.g. agentic results imported without source benchmarks: known is false; the
-- source-based methods leave such models out, see split_folds).
--   n_instances   the target's instance set (target_instances: the union of ids over the known models)
--   mean          published semantics: the instance set is the denominator; a missing id or a NULL score
--                 counts as 0 (spec §2.2-§2.3); rows of ids outside the set (a model that ran instances
--                 no known model has) do not count. NULL when the model has no usable score for the
--                 target at all (n_scored = 0), so avg(mean) over the view is not dragged down by models
--                 never run on it
--   mean_observed mean over the instances the model actually has a score for (NULL if none)
--   known         the model has source rows (models.known)
CREATE OR REPLACE VIEW target_means AS
WITH target_ids AS (
    SELECT target, count(*) AS n_instances FROM target_instances GROUP BY target
),
per_model AS (
    SELECT s.model, s.benchmark AS target,
           count(*)                     AS n_rows,
           count(s.score)               AS n_scored,
           coalesce(sum(CASE WHEN i.instance_id IS NOT NULL THEN coalesce(s.score, 0) END), 0) AS score_sum,
           avg(s.score)                 AS mean_observed
    FROM scores AS s
    JOIN target_ids AS t ON s.benchmark = t.target
    LEFT JOIN target_instances AS i
      ON i.target = s.benchmark AND i.subdir = s.subdir AND i.instance_id = s.instance_id
    GROUP BY ALL
)
SELECT
    m.model,
    i.target,
    i.n_instances,
    coalesce(p.n_rows, 0)                           AS n_rows,
    coalesce(p.n_scored, 0)                         AS n_scored,
    CASE WHEN coalesce(p.n_scored, 0) > 0
         THEN p.score_sum / i.n_instances END        AS mean,
    p.mean_observed,
    m.known
FROM models AS m
CROSS JOIN target_ids AS i
LEFT JOIN per_model AS p ON p.model = m.model AND p.target = i.target
WHERE m.known OR m.has_target;
