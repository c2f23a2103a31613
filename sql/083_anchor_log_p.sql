-- log of anchor_p(z, slip), computed without overflow: log(1 - slip) + log sigma(z).
CREATE OR REPLACE MACRO anchor_log_p(z, slip) AS ln(1 - slip) + least(z, 0) - ln(1 + exp(-abs(z)));
