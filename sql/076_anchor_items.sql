-- Item parameters of each target instance of an anchor fit (a 1PL model with slips: one slope a shared
-- by the items, difficulty b in ability units). A model at grid point (theta, slip) solves the item with
-- probability (1 - slip) / (1 + exp(-a (theta - b))) (macros anchor_logit, anchor_p).
CREATE TABLE IF NOT EXISTS anchor_items (
    fit_id       VARCHAR NOT NULL,
    target       VARCHAR NOT NULL,
    subdir       VARCHAR NOT NULL,
    instance_id  VARCHAR NOT NULL,
    a            DOUBLE NOT NULL,
    b            DOUBLE NOT NULL,
    PRIMARY KEY (fit_id, target, subdir, instance_id)
);
