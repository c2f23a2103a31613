-- The fit in use per (task, target): the most recent one made by `pace fit` (not a restricted fit
-- that `pace predict` made for a model lacking some source benchmarks: see restricted_fits).
CREATE OR REPLACE VIEW current_fits AS
SELECT * FROM proxy_fits
WHERE restricted_for IS NULL
QUALIFY row_number() OVER (PARTITION BY task, target ORDER BY created_at DESC, fit_id DESC) = 1;
