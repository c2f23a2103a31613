-- The sources' predicted target scores of every model with rows in the warehouse (predictions adds the
-- agentic anchors estimate): per model and target, the row of
-- fit_predictions (the current fit, or the restricted fit made for exactly the source benchmarks the
-- model has) whose proxy the model covers best; on a tie the current fit. A model's rows therefore
-- depend on its own scores and the fits, never on which other models were predicted before.
-- Plain SQL (works from any DuckDB client); fit_predictions explains the columns.
CREATE OR REPLACE VIEW source_predictions AS
WITH ranked AS (
    SELECT *, row_number() OVER (PARTITION BY model, target
                                 ORDER BY coverage DESC, restricted, created_at DESC, fit_id DESC) AS preference
    FROM fit_predictions
)
SELECT model, target, predicted, low, high, coverage, n_scored, n_instances, interval_level, method, fit_id,
       ability, ability_distance, out_of_range, range_side, range_reason, sources, restricted
FROM ranked
WHERE preference = 1;
