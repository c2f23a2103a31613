-- Pair accuracy per run and target over directed pairs with a real difference (|true margin| >= 1e-9):
-- correct iff (pred_margin > 0) = (true_margin > 0), as published; a neutral prediction counts 1/2.
-- Plus the unweighted 'AVERAGE' over targets. Plain SQL. (The average is taken over DOUBLE: over the decimal
-- literals 0.5 / 1.0 Spark would average in DECIMAL and round to 5 places.)
CREATE OR REPLACE VIEW loocv_pair_metrics AS
WITH scored AS (
    SELECT run_id, target,
           CASE WHEN neutral THEN 0.5
                WHEN (pred_margin > 0) = (true_margin > 0) THEN 1.0 ELSE 0.0 END AS correct
    FROM loocv_pair_predictions
    WHERE abs(true_margin) >= 1e-9 AND pred_margin IS NOT NULL AND NOT isnan(pred_margin)
),
per_target AS (
    SELECT run_id, target, count(*) AS n_pairs, avg(correct::DOUBLE) AS accuracy
    FROM scored GROUP BY run_id, target
)
SELECT run_id, target, n_pairs, accuracy, 0 AS is_average FROM per_target
UNION ALL
SELECT run_id, 'AVERAGE', sum(n_pairs), avg(accuracy), 1 FROM per_target GROUP BY run_id;
