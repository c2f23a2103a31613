-- Per known model and target: the target score.
--   mean          published semantics: the union of instance ids over all models of the target is
--                 the denominator; a missing id or a NULL score counts as 0 (spec §2.2-§2.3).
--                 NULL when the model has no usable score for the target at all (n_scored = 0),
--                 so avg(mean) over the view is not dragged down by models never run on it
--   mean_observed mean over the instances the model actually has a score for (NULL if none)
CREATE OR REPLACE VIEW target_means AS
WITH targets AS (
    SELECT benchmark AS target FROM benchmarks WHERE role = 'target'
),
target_ids AS (
    SELECT s.benchmark AS target, count(DISTINCT (s.subdir, s.instance_id)) AS n_instances
    FROM scores AS s JOIN targets AS t ON s.benchmark = t.target
    GROUP BY s.benchmark
),
per_model AS (
    SELECT s.model, s.benchmark AS target,
           count(*)                     AS n_rows,
           count(s.score)               AS n_scored,
           sum(coalesce(s.score, 0))    AS score_sum,
           avg(s.score)                 AS mean_observed
    FROM scores AS s JOIN targets AS t ON s.benchmark = t.target
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
    p.mean_observed
FROM models AS m
CROSS JOIN target_ids AS i
LEFT JOIN per_model AS p ON p.model = m.model AND p.target = i.target
WHERE m.known;
