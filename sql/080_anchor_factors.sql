-- How much an anchor estimate's interval is widened so that it covers the truth at its level: the
-- split-conformal factor learnt on inner folds of the training models, per anchor count k (the row with the
-- largest k <= the model's anchors applies). factor NULL: too few models to learn it (the interval is [0, 1]).
CREATE TABLE IF NOT EXISTS anchor_factors (
    fit_id  VARCHAR NOT NULL,
    target  VARCHAR NOT NULL,
    k       INTEGER NOT NULL,
    factor  DOUBLE,
    factor_outside DOUBLE
);
-- factor_outside: the factor of an estimate outside its fit's training range (anchor_fits.range_lo/hi),
-- learnt on the inner estimates made outside their own training range, never below factor (NULL on fits
-- stored before it: factor applies).
ALTER TABLE anchor_factors ADD COLUMN IF NOT EXISTS factor_outside DOUBLE;
