-- Held-out (or in-sample, for mode 'fit') predictions of a run, one per (model, target).
CREATE TABLE IF NOT EXISTS loocv_predictions (
    run_id     VARCHAR NOT NULL,
    model      VARCHAR NOT NULL,
    target     VARCHAR NOT NULL,
    predicted  DOUBLE,
    actual     DOUBLE,                   -- the target mean the run used (compat: published, missing = 0)
    abs_error  DOUBLE
);
