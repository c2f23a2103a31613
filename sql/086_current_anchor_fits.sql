-- Per target, the newest anchor fit (the one anchor_estimates and predictions use).
CREATE OR REPLACE VIEW current_anchor_fits AS
WITH ranked AS (
    SELECT *, row_number() OVER (PARTITION BY target ORDER BY created_at DESC, fit_id DESC) AS newest
    FROM anchor_fits
)
SELECT fit_id, target, n_models, n_items, level, z_level, dof, trained_on, created_at
FROM ranked
WHERE newest = 1;
