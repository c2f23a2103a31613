-- Fits restricted to a set of source benchmarks, made by `pace predict` for a model that lacks some of
-- the current fit's sources: the most recent one per (task, target, source set) that is at least as new
-- as the current fit of its method and budget (an older one predates the data or settings the current
-- fit reflects). NOT EXISTS rather than QUALIFY, as in current_fits, so that Spark reads it the same.
CREATE OR REPLACE VIEW restricted_fits AS
SELECT r.*
FROM proxy_fits AS r
JOIN current_fits AS c ON c.task = r.task AND c.target = r.target AND c.method = r.method
                      AND c.budget = r.budget AND r.created_at >= c.created_at
WHERE r.restricted_for IS NOT NULL
  AND NOT EXISTS (
    SELECT 1 FROM proxy_fits AS newer
    WHERE newer.restricted_for IS NOT NULL AND newer.task = r.task AND newer.target = r.target
      AND list_sort(newer.sources) = list_sort(r.sources)
      AND (newer.created_at > r.created_at OR (newer.created_at = r.created_at AND newer.fit_id > r.fit_id))
);
