-- Which source a score file belongs to: NULL for the warehouse's own files (results trees, `pace import
-- lm-eval|inspect`; source 'pace'), 'openhands-index' for the files of `pace import openhands-index`.
-- Two sources may hold rows of one (model, benchmark, subdir); the preference rule keeps one source's rows
-- in `scores` and the other's in `scores_displaced` (ingest.preference, table agentic_preference).
-- Files of that import whose content is not score rows (metadata.json, scores.json, the instance results
-- of other agent harnesses: tables model_metadata, reported_scores, agentic_runs) have n_rows 0 here.
ALTER TABLE score_files ADD COLUMN IF NOT EXISTS source VARCHAR;
