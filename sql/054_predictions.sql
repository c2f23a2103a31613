-- Predicted target scores of every model with rows in the warehouse, from the current fits.
-- Plain SQL: a join of the model's score rows with the stored weights (works from any DuckDB client).
--   coverage = share of the fit's instances the model has a score for; missing ones count as the
--   training mean (center). low/high: the held-out-residual interval, within [0, 1].
CREATE OR REPLACE VIEW predictions AS
WITH candidates AS (
    SELECT DISTINCT model FROM scores
),
terms AS (
    SELECT c.model, p.fit_id, p.target, p.weight, p.center, s.score
    FROM candidates AS c
    CROSS JOIN (SELECT * FROM proxy_instances WHERE task = 'abs') AS p
    LEFT JOIN scores AS s
      ON s.model = c.model AND s.benchmark = p.benchmark AND s.subdir = p.subdir
     AND s.instance_id = p.instance_id AND s.score IS NOT NULL
),
linear AS (
    SELECT model, fit_id, target,
           sum(weight * coalesce(score - center, 0)) AS signal,
           count(score) AS n_scored,
           count(*) AS n_instances
    FROM terms
    GROUP BY ALL
),
clamped AS (
    SELECT l.model, l.target,
           least(greatest(f.intercept + l.signal, f.clamp_lo), f.clamp_hi) AS predicted,
           f.resid_lo, f.resid_hi, f.interval_level,
           l.n_scored, l.n_instances, l.fit_id, f.method
    FROM linear AS l JOIN current_fits AS f ON f.fit_id = l.fit_id AND f.task = 'abs' AND f.target = l.target
)
SELECT model, target, predicted,
       least(greatest(predicted + resid_lo, 0.0), 1.0)   AS low,
       greatest(least(predicted + resid_hi, 1.0), 0.0)   AS high,
       n_scored / n_instances                    AS coverage,
       n_scored, n_instances, interval_level, method, fit_id
FROM clamped;
