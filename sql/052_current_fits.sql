-- The fit in use per (task, target): the most recent one.
CREATE OR REPLACE VIEW current_fits AS
SELECT * FROM proxy_fits
QUALIFY row_number() OVER (PARTITION BY task, target ORDER BY created_at DESC, fit_id DESC) = 1;
