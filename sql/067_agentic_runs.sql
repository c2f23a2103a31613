-- Per-instance results of agentic runs imported from an agentic results index (`pace import
-- openhands-index`): every agent harness, one row per (model, benchmark, instance_id, agent, source),
-- with the run's cost. The OpenHands agent's rows are also score rows (`scores`, or `scores_displaced`
-- where the preference keeps another source's rows for that model and benchmark; view target_sources);
-- the other harnesses' rows (Claude Code, Codex, Gemini CLI, OpenHands with sub-agents, ...) live here only.
--   model        the warehouse's name (after model_aliases; `pace alias add` renames it)
--   index_model  the model directory's name in the index
--   agent        'openhands' for results/<Model>/, else the alternative_agents/<agent>/ folder name
--   source       'openhands-index'
--   benchmark    the warehouse's name (swe-bench -> swebench, swt-bench -> swtbench,
--                swe-bench-multimodal -> swebench_multimodal, gaia, commit0)
--   resolved     1 / 0; NULL when the index gives none (never 0)
--   cost         USD for this instance's run; NULL when the index gives none
--   source_ref   the instance file (score_files.path)
CREATE TABLE IF NOT EXISTS agentic_runs (
    model        VARCHAR NOT NULL,
    index_model  VARCHAR NOT NULL,
    agent        VARCHAR NOT NULL,
    source       VARCHAR NOT NULL,
    benchmark    VARCHAR NOT NULL,
    instance_id  VARCHAR NOT NULL,
    resolved     DOUBLE,
    cost         DOUBLE,
    source_ref   VARCHAR NOT NULL,
    recorded_at  TIMESTAMP NOT NULL
);
