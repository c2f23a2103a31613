-- What one instance of an agentic benchmark cost a model to run (USD), from the OpenHands agent's runs
-- in agentic_runs (the agent the targets come from; other harnesses: query agentic_runs by agent). One
-- row per (model, benchmark, instance_id) the index has; cost NULL where the index gives none.
--   resolved  the run's outcome (1 / 0 / NULL), whichever source `scores` uses for the model
CREATE OR REPLACE VIEW instance_costs AS
SELECT model, benchmark, instance_id, cost, resolved, source, source_ref
FROM agentic_runs
WHERE agent = 'openhands';
