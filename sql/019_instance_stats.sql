-- Difficulty of every source instance (the rows of the rule instance_stats_live, sql/095, where the
-- columns are explained), stored. Every write of scores or roles recomputes it, in the writer's own
-- transaction where there is one (ingest.summaries); `pace doctor` compares the two and recomputes it.
-- Stored so that a query of it reads ~10^5 rows instead of scanning every source row (74.8 s at 10^8
-- score rows before); instance_stats_live computes the same from `scores` for ad-hoc use.
--   n_models            known models with a score for the instance
--   mean_score          their mean score
--   difficulty          1 - mean_score
--   variance            population variance of their scores
--   discrimination      correlation of the scores with the models' source ability (NULL: constant)
--   target_correlation  MAP target -> correlation of the scores with the models' target means
CREATE TABLE IF NOT EXISTS instance_stats (
    benchmark           VARCHAR NOT NULL,
    subdir              VARCHAR NOT NULL,
    instance_id         VARCHAR NOT NULL,
    n_models            BIGINT NOT NULL,
    mean_score          DOUBLE,
    difficulty          DOUBLE,
    variance            DOUBLE,
    discrimination      DOUBLE,
    target_correlation  MAP(VARCHAR, DOUBLE)
);
