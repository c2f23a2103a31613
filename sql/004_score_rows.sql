-- The stored score rows: one per (model, benchmark, subdir, instance_id), every per-file constant
-- (model, leaf, origin, source_ref, recorded_at) kept once in score_sources. Four narrow columns make
-- a bulk append ~3x cheaper than the nine of `scores` (bench/results/scale.json, step floor). Read
-- `scores` (sql/004_scores.sql), the same rows with their keys; write through ingest.score_store.
-- score is NULL when the source gave an empty or non-numeric value; it is never turned into 0 here
-- (the compat modelling layer reproduces the published zero-filling itself).
-- Uniqueness of the key is kept by ingest and the runners (no index: bulk loads stay fast).
CREATE TABLE IF NOT EXISTS score_rows (
    source_id    INTEGER NOT NULL,       -- score_sources.source_id
    instance_id  VARCHAR NOT NULL,
    score        DOUBLE,
    metric_name  VARCHAR
);
