-- The rule for anchor_curve's stored columns rising_mean, next_theta, next_mean: the curve of an anchor fit
-- made non-decreasing (running maximum), and per point the segment to the next one, which anchor_prior
-- inverts by linear interpolation. Whoever writes an anchor fit fills them from here
-- (warehouse.storing.fill_fit_constants; a migration fills them for anchor fits stored before the columns).
CREATE OR REPLACE VIEW anchor_curve_segments_live AS
WITH rising AS (
    SELECT fit_id, target, theta,
           max(full_mean) OVER (PARTITION BY fit_id, target ORDER BY theta
                                ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS rising_mean
    FROM anchor_curve
)
SELECT fit_id, target, theta, rising_mean,
       lead(theta) OVER (PARTITION BY fit_id, target ORDER BY theta)       AS next_theta,
       lead(rising_mean) OVER (PARTITION BY fit_id, target ORDER BY theta) AS next_mean
FROM rising;
