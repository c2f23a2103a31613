-- The expected full mean of a model with no anchors at each ability (slip levels averaged with their
-- weights): anchor_prior inverts it to turn the sources' prediction into an ability prior.
CREATE TABLE IF NOT EXISTS anchor_curve (
    fit_id     VARCHAR NOT NULL,
    target     VARCHAR NOT NULL,
    theta      DOUBLE NOT NULL,
    full_mean  DOUBLE NOT NULL
);
