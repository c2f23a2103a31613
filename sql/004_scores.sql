-- The long fact table: one row per (model, benchmark, subdir, instance_id).
-- score is NULL when the source gave an empty or non-numeric value; it is never turned into 0 here
-- (the compat modelling layer reproduces the published zero-filling itself).
-- Uniqueness of the key is kept by ingest and the runners (no index: bulk loads stay fast).
CREATE TABLE IF NOT EXISTS scores (
    model        VARCHAR NOT NULL,
    benchmark    VARCHAR NOT NULL,
    subdir       VARCHAR NOT NULL,       -- '' for a benchmark without leaves
    instance_id  VARCHAR NOT NULL,
    score        DOUBLE,
    metric_name  VARCHAR,
    origin       VARCHAR NOT NULL CHECK (origin IN ('ingest', 'runner')),
    source_ref   VARCHAR NOT NULL,       -- score_files.path for ingest, 'run:<run_id>' for runners
    recorded_at  TIMESTAMP NOT NULL
);
