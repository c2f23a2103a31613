-- How far an ability lies outside the training models' range [lo, hi], in their standard deviations
-- (0 inside the range, and for a model without an ability).
CREATE OR REPLACE MACRO ability_distance(theta, lo, hi, sd) AS
    CASE WHEN theta IS NULL THEN 0 ELSE greatest(lo - theta, theta - hi, 0) / greatest(sd, 1e-12) END;
