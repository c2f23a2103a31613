-- Per run and target: MAE (score units; x100 = percentage points), Spearman (average ranks),
-- Pearson and R^2 over the models; plus an 'AVERAGE' row per run (unweighted mean over targets),
-- as the published table prints it. Plain SQL: works from any DuckDB client.
--   coverage  share of the models whose truth lies inside the method's interval (low .. high), over the
--             models with one; NULL for a method whose LOOCV makes no interval
CREATE OR REPLACE VIEW loocv_metrics AS
WITH ranked AS (
    SELECT run_id, target, predicted, actual, low, high,
           rank() OVER (PARTITION BY run_id, target ORDER BY predicted)
             + (count(*) OVER (PARTITION BY run_id, target, predicted) - 1) / 2.0 AS rank_pred,
           rank() OVER (PARTITION BY run_id, target ORDER BY actual)
             + (count(*) OVER (PARTITION BY run_id, target, actual) - 1) / 2.0 AS rank_actual
    FROM loocv_predictions
    WHERE predicted IS NOT NULL AND actual IS NOT NULL
),
per_target AS (
    SELECT run_id, target,
           count(*)                                         AS n_models,
           avg(abs(predicted - actual))                     AS mae,
           coalesce(corr(rank_pred, rank_actual), 0)        AS spearman,
           coalesce(corr(predicted, actual), 0)             AS pearson,
           CASE WHEN var_pop(actual) * count(*) <= 1e-12 THEN 0
                ELSE 1 - sum((actual - predicted) ^ 2) / (var_pop(actual) * count(*)) END AS r2,
           avg(CASE WHEN low IS NOT NULL AND high IS NOT NULL
                    THEN CASE WHEN actual BETWEEN low AND high THEN 1.0 ELSE 0.0 END END) AS coverage
    FROM ranked
    GROUP BY run_id, target
)
SELECT run_id, target, n_models, mae, spearman, pearson, r2, 0 AS is_average, coverage FROM per_target
UNION ALL
SELECT run_id, 'AVERAGE', NULL, avg(mae), avg(spearman), avg(pearson), avg(r2), 1, avg(coverage) FROM per_target
GROUP BY run_id;
