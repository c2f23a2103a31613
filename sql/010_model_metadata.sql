-- Model metadata from an agentic results index (`pace import openhands-index`: one row per
-- `metadata.json`, i.e. per model directory and agent harness). Prices are USD per million tokens, as
-- the index gives them; parameter counts in billions (NULL when not published). `raw` keeps the whole
-- file, fields this table does not name included.
--   model          the warehouse's name (after model_aliases; `pace alias add` renames it)
--   index_model    the model directory's name in the index
--   agent          'openhands' for results/<Model>/, else the alternative_agents/<agent>/ folder
--   source         'openhands-index'
--   source_ref     the file (score_files.path)
CREATE TABLE IF NOT EXISTS model_metadata (
    model                     VARCHAR NOT NULL,
    index_model               VARCHAR NOT NULL,
    agent                     VARCHAR NOT NULL,
    source                    VARCHAR NOT NULL,
    agent_name                VARCHAR,            -- the harness as the index names it (OpenHands, Claude Code, ...)
    agent_version             VARCHAR,
    metadata_model            VARCHAR,            -- the file's own `model` field (may differ from the folder)
    openness                  VARCHAR,            -- e.g. open_weights, closed_api_available
    country                   VARCHAR,
    tool_usage                VARCHAR,
    release_date              DATE,
    parameter_count_b         DOUBLE,
    active_parameter_count_b  DOUBLE,
    supports_vision           BOOLEAN,
    input_price               DOUBLE,
    output_price              DOUBLE,
    cache_read_price          DOUBLE,
    cache_write_price         DOUBLE,
    submission_time           VARCHAR,
    available                 BOOLEAN,
    raw                       JSON,
    source_ref                VARCHAR NOT NULL,
    recorded_at               TIMESTAMP NOT NULL
);
