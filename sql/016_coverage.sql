-- Per model and leaf (benchmark, subdir): how many of the leaf's instances (the union of ids over all
-- models) the model has a usable score for. A missing file shows as coverage 0. Models with source rows
-- (known) and models with target rows only (agentic results imported before any source benchmark was
-- run: coverage 0 on every source leaf says what they still need).
CREATE OR REPLACE VIEW coverage AS
WITH leaves AS (
    SELECT benchmark, subdir, count(DISTINCT instance_id) AS n_instances
    FROM scores GROUP BY ALL
),
per_model AS (
    SELECT model, benchmark, subdir, count(*) AS n_rows, count(score) AS n_scored
    FROM scores GROUP BY ALL
)
SELECT
    m.model,
    l.benchmark,
    l.subdir,
    coalesce(b.role, 'source')                      AS role,
    l.n_instances,
    coalesce(p.n_rows, 0)                           AS n_rows,
    coalesce(p.n_scored, 0)                         AS n_scored,
    coalesce(p.n_scored, 0) / l.n_instances         AS coverage
FROM models AS m
CROSS JOIN leaves AS l
LEFT JOIN per_model AS p USING (model, benchmark, subdir)
LEFT JOIN benchmarks AS b USING (benchmark)
WHERE m.known OR m.has_target;
