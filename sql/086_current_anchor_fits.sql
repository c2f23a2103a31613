-- Per target, the anchor fit anchor_estimates and predictions use: the newest one made with a current
-- proxy fit (`pace fit` makes both; a later `pace fit --no-anchors`, or an imported PACE-Bench fit, leaves
-- no anchors item model in use rather than one of an older fit).
CREATE OR REPLACE VIEW current_anchor_fits AS
WITH ranked AS (
    SELECT *, row_number() OVER (PARTITION BY target ORDER BY created_at DESC, fit_id DESC) AS newest
    FROM anchor_fits
    WHERE fit_id IN (SELECT fit_id FROM current_fits)
)
SELECT fit_id, target, n_models, n_items, level, z_level, dof, trained_on, created_at, range_lo, range_hi
FROM ranked
WHERE newest = 1;
