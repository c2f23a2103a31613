-- The solve probability (1 - slip) sigma(z) at a grid point with slip rate `slip`, z = anchor_logit(...).
CREATE OR REPLACE MACRO anchor_p(z, slip) AS (1 - slip) / (1 + exp(-z));
