-- Metadata a user set for a model with `pace metadata set MODEL --released DATE` (e.g. an older model that
-- no agentic results index describes). It wins over model_metadata (the index's rows, which an import
-- replaces file by file): a re-import never touches this table; `pace metadata reset MODEL` forgets it.
--   release_date   the model's release date (the out-of-range check compares it with the fit's models')
--   set_at         when it was set
CREATE TABLE IF NOT EXISTS model_metadata_set (
    model         VARCHAR PRIMARY KEY,
    release_date  DATE,
    set_at        TIMESTAMP NOT NULL
);
