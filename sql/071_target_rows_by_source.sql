-- Every target row of every source: the rows `scores` holds (in_use: what every view and method reads)
-- and the rows the preference keeps out of it (scores_displaced), each with its source: score_files.source
-- ('openhands-index' for `pace import openhands-index`), else 'pace' (results trees, harness imports, runs).
--   target, subdir, instance_id, score   as in scores
--   source_ref   the file (score_files.path) or run the row came from
-- (Each table is joined with the targets on its own, before the union: Spark's dynamic partition pruning
-- fails on a union of the benchmark-partitioned tables joined afterwards.)
CREATE OR REPLACE VIEW target_rows_by_source AS
WITH targets AS (
    SELECT benchmark FROM benchmarks WHERE role = 'target'
),
both_tables AS (
    SELECT s.model, s.benchmark, s.subdir, s.instance_id, s.score, s.origin, s.source_ref, true AS in_use
    FROM scores AS s JOIN targets AS t ON t.benchmark = s.benchmark
    UNION ALL
    SELECT d.model, d.benchmark, d.subdir, d.instance_id, d.score, d.origin, d.source_ref, false AS in_use
    FROM scores_displaced AS d JOIN targets AS t ON t.benchmark = d.benchmark
)
SELECT r.model, r.benchmark AS target, r.subdir, r.instance_id, r.score,
       coalesce(f.source, 'pace') AS source, r.in_use, r.source_ref
FROM both_tables AS r
LEFT JOIN score_files AS f ON r.origin = 'ingest' AND f.path = r.source_ref;
