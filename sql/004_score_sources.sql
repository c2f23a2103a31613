-- What the rows of one write share: one row per ingested file (source_ref = score_files.path) and
-- per run, leaf and time for runners ('run:<run_id>'). ingest assigns the ids of a write's files in
-- its storage order, so a model's rows hold a narrow range of ids (DuckDB's min/max per row group
-- then skips the rest of score_rows when `scores` is read for one model).
CREATE TABLE IF NOT EXISTS score_sources (
    source_id    INTEGER NOT NULL,
    model        VARCHAR NOT NULL,
    benchmark    VARCHAR NOT NULL,
    subdir       VARCHAR NOT NULL,       -- '' for a benchmark without leaves
    origin       VARCHAR NOT NULL CHECK (origin IN ('ingest', 'runner')),
    source_ref   VARCHAR NOT NULL,       -- score_files.path for ingest, 'run:<run_id>' for runners
    recorded_at  TIMESTAMP NOT NULL
);
