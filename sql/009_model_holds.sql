-- Models held out of fits (selection, LOOCV, the ability scale) although they have source rows: ingest
-- holds a new model whose file name looks like another spelling of a known model (ingest.noise: provider
-- prefixes, size or precision suffixes, case and punctuation set aside), e.g.
-- openai_nvidia_nvidia-nemotron-3-nano-30b-a3b-bf16 for Nemotron-3-Nano. `pace alias add MODEL KNOWN`
-- merges it (the hold goes with the name); `pace alias keep MODEL` accepts it as a model of its own.
--   reason   'second_spelling'
--   detail   the known model it looks like
CREATE TABLE IF NOT EXISTS model_holds (
    model    VARCHAR PRIMARY KEY,
    reason   VARCHAR NOT NULL,
    detail   VARCHAR,
    held_at  TIMESTAMP NOT NULL
);
