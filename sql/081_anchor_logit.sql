-- The logit a (theta - b) of an item's solve probability at ability theta, clipped to +-35 (beyond it the
-- logistic is 0 or 1 to double precision; models.anchors.items clips the same way).
CREATE OR REPLACE MACRO anchor_logit(a, theta, b) AS least(greatest(a * (theta - b), -35), 35);
