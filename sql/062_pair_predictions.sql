-- Win probability of `model` over `opponent` on each target, from the current pairwise fits.
-- margin = sum weight * (score_model - score_opponent), a missing score counting as the center.
-- A model with no score on any of the fit's instances (coverage 0, e.g. a model with target files
-- only) is left out on both sides: imputing all its scores would make it a fictitious average model.
CREATE OR REPLACE VIEW pair_predictions AS
WITH candidates AS (
    SELECT DISTINCT model FROM scores
),
imputed AS (
    SELECT c.model, p.fit_id, p.target, p.benchmark, p.subdir, p.instance_id, p.weight,
           coalesce(s.score, p.center) AS value, s.score IS NOT NULL AS scored
    FROM candidates AS c
    CROSS JOIN (SELECT * FROM proxy_instances WHERE task = 'pair') AS p
    LEFT JOIN scores AS s
      ON s.model = c.model AND s.benchmark = p.benchmark AND s.subdir = p.subdir
     AND s.instance_id = p.instance_id AND s.score IS NOT NULL
),
per_model AS (
    SELECT model, fit_id, target, sum(weight * value) AS score_sum, avg(scored::INTEGER) AS coverage
    FROM imputed GROUP BY ALL
)
SELECT a.model, b.model AS opponent, a.target,
       pace_expit(f.cal_a * (a.score_sum - b.score_sum) + f.cal_b) AS p_win,
       a.score_sum - b.score_sum AS margin,
       least(a.coverage, b.coverage) AS coverage,
       a.fit_id
FROM per_model AS a
JOIN per_model AS b ON a.fit_id = b.fit_id AND a.target = b.target AND a.model <> b.model
JOIN current_fits AS f ON f.fit_id = a.fit_id AND f.task = 'pair' AND f.target = a.target
WHERE a.coverage > 0 AND b.coverage > 0;
