-- Fits restricted to a set of source benchmarks, made by `pace predict` for a model that lacks some of
-- the current fit's sources: the most recent one per (task, target, source set) that is newer than the
-- current fit of its method (an older one predates the data or settings the current fit reflects).
CREATE OR REPLACE VIEW restricted_fits AS
SELECT r.*
FROM proxy_fits AS r
JOIN current_fits AS c ON c.task = r.task AND c.target = r.target AND c.method = r.method
                      AND c.budget = r.budget AND r.created_at >= c.created_at
WHERE r.restricted_for IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY r.task, r.target, list_sort(r.sources)
                           ORDER BY r.created_at DESC, r.fit_id DESC) = 1;
