-- Every target row of every source: the rows `scores` holds (in_use: what every view and method reads)
-- and the rows the preference keeps out of it (scores_displaced), each with its source: score_files.source
-- ('openhands-index' for `pace import openhands-index`), else 'pace' (results trees, harness imports, runs).
--   target, subdir, instance_id, score   as in scores
--   source_ref   the file (score_files.path) or run the row came from
CREATE OR REPLACE VIEW target_rows_by_source AS
WITH both_tables AS (
    SELECT model, benchmark, subdir, instance_id, score, origin, source_ref, true AS in_use FROM scores
    UNION ALL
    SELECT model, benchmark, subdir, instance_id, score, origin, source_ref, false AS in_use FROM scores_displaced
)
SELECT r.model, r.benchmark AS target, r.subdir, r.instance_id, r.score,
       coalesce(f.source, 'pace') AS source, r.in_use, r.source_ref
FROM both_tables AS r
JOIN benchmarks AS b ON b.benchmark = r.benchmark AND b.role = 'target'
LEFT JOIN score_files AS f ON r.origin = 'ingest' AND f.path = r.source_ref;
