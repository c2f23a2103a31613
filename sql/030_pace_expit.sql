-- The logistic function: a logit back to a share in (0, 1). Used by every prediction on the logit
-- scale (predictions, pair_predictions, and the default method's evaluation, which combines its
-- parts with these same macros).
CREATE OR REPLACE MACRO pace_expit(z) AS 1 / (1 + exp(-z));
