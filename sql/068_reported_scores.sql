-- The aggregate scores an agentic results index reports (`scores.json`: one row per model directory,
-- agent and benchmark), beside the per-instance rows they summarise. The import reports a score far from
-- the mean of the instance results (the index's per-instance files are not always the run behind its
-- figure). score is a fraction (the index's percentage / 100), like every score in the warehouse.
--   model, index_model, agent, source, source_ref   as in agentic_runs
--   index_benchmark    the index's name (swe-bench, ...); benchmark the warehouse's
--   metric             e.g. accuracy; swe-bench-multimodal reports solveable_accuracy, which is not the
--                      plain mean of the instance results (component_scores holds combined_accuracy)
--   cost_per_instance  USD; average_runtime seconds
CREATE TABLE IF NOT EXISTS reported_scores (
    model              VARCHAR NOT NULL,
    index_model        VARCHAR NOT NULL,
    agent              VARCHAR NOT NULL,
    source             VARCHAR NOT NULL,
    benchmark          VARCHAR NOT NULL,
    index_benchmark    VARCHAR NOT NULL,
    score              DOUBLE,
    metric             VARCHAR,
    cost_per_instance  DOUBLE,
    average_runtime    DOUBLE,
    agent_version      VARCHAR,
    submission_time    VARCHAR,
    full_archive       VARCHAR,
    component_scores   JSON,
    raw                JSON,
    source_ref         VARCHAR NOT NULL,
    recorded_at        TIMESTAMP NOT NULL
);
