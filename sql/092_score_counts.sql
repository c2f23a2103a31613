-- Counters of `scores` kept at write time, so that `pace status` and `pace doctor --check` read a few
-- thousand rows instead of scanning every score row: one row per (model, leaf, origin, source_ref),
-- i.e. per ingested file or per run and leaf. Every write of scores recomputes them in its own
-- transaction (ingest.summaries); `pace doctor` compares them with `scores` and recomputes them.
--   n_rows       score rows
--   n_scored     rows with a score (not NULL)
--   fingerprint  sum of the rows' hashes (ingest.lake's content fingerprint, additive): the sum over a
--                benchmark is what its lake partition must hold
CREATE TABLE IF NOT EXISTS score_counts (
    model        VARCHAR NOT NULL,
    benchmark    VARCHAR NOT NULL,
    subdir       VARCHAR NOT NULL,
    origin       VARCHAR NOT NULL,
    source_ref   VARCHAR NOT NULL,
    n_rows       BIGINT NOT NULL,
    n_scored     BIGINT NOT NULL,
    fingerprint  HUGEINT NOT NULL
);
