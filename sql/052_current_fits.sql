-- The fit in use per (task, target): the most recent one (ties: the larger fit_id).
-- Written as NOT EXISTS rather than QUALIFY so that it means the same on Spark (see warehouse/spark_sql.py).
CREATE OR REPLACE VIEW current_fits AS
SELECT * FROM proxy_fits AS f
WHERE NOT EXISTS (
    SELECT 1 FROM proxy_fits AS newer
    WHERE newer.task = f.task AND newer.target = f.target
      AND (newer.created_at > f.created_at OR (newer.created_at = f.created_at AND newer.fit_id > f.fit_id))
);
