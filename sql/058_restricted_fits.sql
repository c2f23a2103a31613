-- Fits restricted to a set of source benchmarks, made by `pace predict` for a model that lacks some of
-- the current fit's sources: the most recent one per (task, target, source set) among those made for the
-- current fit of their target (restricted_from; a restricted fit stored before that column existed
-- counts when it has the current fit's method and budget and is at least as new: an older one predates
-- the data or settings the current fit reflects). Which model may use which one is decided in
-- predictions_by_fit: a model uses the one whose source set is exactly the current fit's sources it has.
-- NOT EXISTS rather than QUALIFY, as in current_fits, so that Spark reads it the same.
CREATE OR REPLACE VIEW restricted_fits AS
WITH made_for_current AS (
    SELECT r.*
    FROM proxy_fits AS r
    JOIN current_fits AS c
      ON c.task = r.task AND c.target = r.target
     AND (r.restricted_from = c.fit_id
          OR (r.restricted_from IS NULL AND c.method = r.method AND c.budget = r.budget
              AND r.created_at >= c.created_at))
    WHERE r.restricted_for IS NOT NULL
)
SELECT r.*
FROM made_for_current AS r
WHERE NOT EXISTS (
    SELECT 1 FROM made_for_current AS newer
    WHERE newer.task = r.task AND newer.target = r.target
      AND list_sort(newer.sources) = list_sort(r.sources)
      AND (newer.created_at > r.created_at OR (newer.created_at = r.created_at AND newer.fit_id > r.fit_id))
);
