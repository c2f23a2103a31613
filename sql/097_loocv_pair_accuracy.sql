-- Pair accuracy of a Goal A run: for every held-out model i and every other model j with source rows
-- and a target score (the models the evaluation knows), is the order of i and j right? i's side is its held-out prediction; j's side is j's own
-- prediction when j was held out in the same fold (neither was trained on), else j's actual score
-- (j was a training model: its score is known). Ties in the truth are skipped. Plain SQL.
CREATE OR REPLACE VIEW loocv_abs_pair_metrics AS
WITH held AS (
    SELECT p.run_id, p.model, p.target, p.predicted, p.actual, coalesce(f.fold, p.model) AS fold
    FROM loocv_predictions AS p
    LEFT JOIN loocv_folds AS f USING (run_id, model)
    WHERE p.predicted IS NOT NULL AND p.actual IS NOT NULL
),
others AS (
    SELECT r.run_id, t.model, t.target, coalesce(h.actual, t.mean_observed) AS actual,
           h.predicted, h.fold
    FROM loocv_runs AS r
    JOIN target_means AS t ON list_contains(r.targets, t.target)
    LEFT JOIN held AS h ON h.run_id = r.run_id AND h.model = t.model AND h.target = t.target
    WHERE t.n_scored > 0 AND t.known
),
pairs AS (
    SELECT i.run_id, i.target,
           sign(i.predicted - CASE WHEN j.fold = i.fold THEN j.predicted ELSE j.actual END)
             = sign(i.actual - j.actual) AS correct
    FROM held AS i
    JOIN others AS j ON j.run_id = i.run_id AND j.target = i.target AND j.model <> i.model
    WHERE i.actual <> j.actual
)
SELECT run_id, target, count(*) AS n_pairs, avg(correct::INTEGER) AS accuracy, 0 AS is_average
FROM pairs GROUP BY run_id, target
UNION ALL
SELECT run_id, 'AVERAGE', NULL, avg(accuracy), 1
FROM (SELECT run_id, target, avg(correct::INTEGER) AS accuracy FROM pairs GROUP BY run_id, target)
GROUP BY run_id;
