-- Provenance of every ingested score file. An unchanged sha256 makes re-ingest a no-op;
-- a changed one replaces exactly the rows whose source_ref is this path.
CREATE TABLE IF NOT EXISTS score_files (
    path          VARCHAR PRIMARY KEY,   -- relative to the ingested tree: <benchmark>[/<subdir>]/<file_model>.csv
    sha256        VARCHAR NOT NULL,
    model         VARCHAR NOT NULL,      -- after model_aliases
    file_model    VARCHAR NOT NULL,      -- the file name's stem, as found
    benchmark     VARCHAR NOT NULL,
    subdir        VARCHAR NOT NULL,
    n_rows        BIGINT  NOT NULL,      -- rows kept (after dropping duplicate ids)
    n_duplicates  BIGINT  NOT NULL,      -- later occurrences of an id, dropped (first kept)
    n_null_scores BIGINT  NOT NULL,      -- empty or non-numeric scores, stored as NULL
    layout        VARCHAR NOT NULL,      -- 'id,score,metric_name' or the legacy 'id,score'
    ingested_at   TIMESTAMP NOT NULL
);
