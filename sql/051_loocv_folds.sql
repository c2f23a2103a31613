-- Per run (loocv_runs.split says which split) and fold, the models it held out together
-- (split_folds at the time of the run). A model outside every fold was only ever trained on.
CREATE TABLE IF NOT EXISTS loocv_folds (
    run_id  VARCHAR NOT NULL,
    fold    VARCHAR NOT NULL,
    model   VARCHAR NOT NULL
);
