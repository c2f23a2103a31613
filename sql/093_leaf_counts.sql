-- The distinct instances of every leaf (benchmark, subdir), any model, any score: kept at write time
-- with score_counts (ingest.summaries), for `pace status`.
CREATE TABLE IF NOT EXISTS leaf_counts (
    benchmark    VARCHAR NOT NULL,
    subdir       VARCHAR NOT NULL,
    n_instances  BIGINT NOT NULL
);
