-- The default method's prediction on the logit scale: the Pace part and the ability link's logit mixed
-- with the gate's weight `w`; the Pace part alone for a model without an ability (z_struct NULL).
CREATE OR REPLACE MACRO gated_logit(z_pace, z_struct, w) AS
    CASE WHEN z_struct IS NULL THEN z_pace ELSE (1 - w) * z_pace + w * z_struct END;
