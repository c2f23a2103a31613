-- The expected full mean of a model with no anchors at each ability (slip levels averaged with their
-- weights): anchor_prior inverts it to turn the sources' prediction into an ability prior. The inverse's
-- per-fit constants are stored with the fit (the rule: anchor_curve_segments_live), so that a lookup reads them:
--   rising_mean           the curve made non-decreasing (the running maximum of full_mean up to theta)
--   next_theta, next_mean the next point's theta and rising_mean (NULL at the last point): the segment to it
CREATE TABLE IF NOT EXISTS anchor_curve (
    fit_id     VARCHAR NOT NULL,
    target     VARCHAR NOT NULL,
    theta      DOUBLE NOT NULL,
    full_mean  DOUBLE NOT NULL,
    rising_mean DOUBLE,
    next_theta DOUBLE,
    next_mean  DOUBLE
);
ALTER TABLE anchor_curve ADD COLUMN IF NOT EXISTS rising_mean DOUBLE;
ALTER TABLE anchor_curve ADD COLUMN IF NOT EXISTS next_theta DOUBLE;
ALTER TABLE anchor_curve ADD COLUMN IF NOT EXISTS next_mean DOUBLE;
