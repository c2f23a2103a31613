-- Ability priors from model metadata (release date, output price, open weights, active parameters: a
-- ridge regression of the training models' abilities), one per (anchor fit, target, model with metadata).
-- anchor_prior prefers them to the sources' prediction (bench/results/anchors_experiments.md).
--   mean, sd  centre and scale of the Student-t prior on theta; kind 'metadata'
CREATE TABLE IF NOT EXISTS anchor_priors (
    fit_id  VARCHAR NOT NULL,
    target  VARCHAR NOT NULL,
    model   VARCHAR NOT NULL,
    mean    DOUBLE NOT NULL,
    sd      DOUBLE NOT NULL,
    kind    VARCHAR NOT NULL
);
