-- Per current fit: each selected instance once, with the weight summed over sides.
CREATE OR REPLACE VIEW proxy_instances AS
SELECT w.fit_id, w.task, w.target, w.benchmark, w.subdir, w.instance_id,
       sum(w.weight) AS weight, any_value(w.center) AS center
FROM proxy_weights AS w
JOIN current_fits AS f USING (fit_id, task, target)
GROUP BY ALL;
