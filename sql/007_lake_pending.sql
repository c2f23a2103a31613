-- Benchmarks whose lake partitions must be rewritten from `scores`. A write path records them in
-- the same transaction as its rows and clears them once the new partitions are in place, so a
-- process killed in between leaves this marker and the next write open finishes the work.
CREATE TABLE IF NOT EXISTS lake_pending (
    benchmark  VARCHAR PRIMARY KEY,
    since      TIMESTAMP NOT NULL
);
