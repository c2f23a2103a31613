-- Score rows that another source also supplies for the same (model, benchmark, subdir), kept out of
-- `scores` by the preference rule (ingest.preference): with the default preference, the OpenHands Index
-- rows of a model that also has Pace files for that benchmark; with `--prefer openhands-index`, the Pace
-- rows. Same columns as scores. Every write that can change which source a cell uses (ingest, `pace
-- import`, `--prune`, `pace alias add`, `pace doctor`) moves rows between the two tables, so switching the
-- preference back needs no re-import, and a file's rows are always in exactly one of the two.
CREATE TABLE IF NOT EXISTS scores_displaced (
    model        VARCHAR NOT NULL,
    benchmark    VARCHAR NOT NULL,
    subdir       VARCHAR NOT NULL,
    instance_id  VARCHAR NOT NULL,
    score        DOUBLE,
    metric_name  VARCHAR,
    origin       VARCHAR NOT NULL,
    source_ref   VARCHAR NOT NULL,       -- score_files.path of the file the row came from
    recorded_at  TIMESTAMP NOT NULL
);
