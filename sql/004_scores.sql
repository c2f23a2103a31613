-- The long fact table as every query reads it: one row per (model, benchmark, subdir, instance_id),
-- stored as score_rows + score_sources. Writes (INSERT / DELETE / UPDATE on scores, also through
-- `pace sql --write`) are carried out on those two tables by ingest.score_store.
--   subdir       '' for a benchmark without leaves
--   score        NULL when the source gave an empty or non-numeric value (never turned into 0 here)
--   origin       'ingest' (a score file) or 'runner' (`pace run`)
--   source_ref   score_files.path for ingest, 'run:<run_id>' for runners
CREATE OR REPLACE VIEW scores AS
SELECT s.model, s.benchmark, s.subdir, r.instance_id, r.score, r.metric_name, s.origin, s.source_ref,
       s.recorded_at
FROM score_rows AS r JOIN score_sources AS s USING (source_id);
