-- A file named <alias>.csv is ingested as model <model> (e.g. DeepSeek-V3.2-Reasoner -> DeepSeek-V3.2).
-- Nothing is aliased unless a user says so: the published pipeline does not alias either.
CREATE TABLE IF NOT EXISTS model_aliases (
    alias VARCHAR PRIMARY KEY,
    model VARCHAR NOT NULL
);
