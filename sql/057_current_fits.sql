-- The fit in use per (task, target): the most recent one made by `pace fit` (ties: the larger fit_id);
-- not a restricted fit that `pace predict` made for a model lacking some source benchmarks (see
-- restricted_fits). Written as NOT EXISTS rather than QUALIFY so that it means the same on Spark
-- (see warehouse/spark_sql.py).
CREATE OR REPLACE VIEW current_fits AS
SELECT * FROM proxy_fits AS f
WHERE f.restricted_for IS NULL
  AND NOT EXISTS (
    SELECT 1 FROM proxy_fits AS newer
    WHERE newer.task = f.task AND newer.target = f.target AND newer.restricted_for IS NULL
      AND (newer.created_at > f.created_at OR (newer.created_at = f.created_at AND newer.fit_id > f.fit_id))
);
