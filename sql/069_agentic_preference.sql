-- Which source's rows `scores` holds when two sources have rows for one (model, benchmark, subdir):
-- 'pace' (the warehouse's own files: results trees, harness imports, runs) or 'openhands-index'. A row
-- for a model decides for that model; the row with model '*' for every other model; with no row, 'pace'
-- (the Pace files stay the truth for the models they cover). Set with `pace import openhands-index DIR
-- --prefer SOURCE` or `--prefer MODEL=SOURCE`; the rows of the source not chosen wait in scores_displaced.
CREATE TABLE IF NOT EXISTS agentic_preference (
    model    VARCHAR PRIMARY KEY,      -- a model, or '*' for every model without a row of its own
    prefer   VARCHAR NOT NULL CHECK (prefer IN ('pace', 'openhands-index')),
    set_at   TIMESTAMP NOT NULL
);
