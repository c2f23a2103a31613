-- Held-out (or in-sample, for mode 'fit') predictions of a run, one per (model, target).
CREATE TABLE IF NOT EXISTS loocv_predictions (
    run_id     VARCHAR NOT NULL,
    model      VARCHAR NOT NULL,
    target     VARCHAR NOT NULL,
    predicted  DOUBLE,
    actual     DOUBLE,                   -- the target mean the run used (compat: published, missing = 0)
    abs_error  DOUBLE,
    low        DOUBLE,                   -- the method's interval (anchors); NULL where its LOOCV makes none
    high       DOUBLE                    -- its upper end (NULL with low)
);
ALTER TABLE loocv_predictions ADD COLUMN IF NOT EXISTS low DOUBLE;
ALTER TABLE loocv_predictions ADD COLUMN IF NOT EXISTS high DOUBLE;
