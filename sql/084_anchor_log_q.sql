-- log(1 - anchor_p(z, slip)) = log(slip + (1 - slip) sigma(-z)), computed without overflow.
CREATE OR REPLACE MACRO anchor_log_q(z, slip) AS
    ln(slip + (1 - slip) * (CASE WHEN z >= 0 THEN exp(-abs(z)) ELSE 1 END) / (1 + exp(-abs(z))));
