-- Goal B held-out predictions of a run: one row per directed pair (model, opponent) and target.
-- In a LOOCV run the row model is the held-out one. pred_margin is on the logit scale; p_win is the
-- calibrated probability that model beats opponent. neutral: the method abstained (degenerate fit).
CREATE TABLE IF NOT EXISTS loocv_pair_predictions (
    run_id       VARCHAR NOT NULL,
    model        VARCHAR NOT NULL,
    opponent     VARCHAR NOT NULL,
    target       VARCHAR NOT NULL,
    true_margin  DOUBLE,                 -- actual(model) - actual(opponent); NULL if either is masked
    pred_margin  DOUBLE,
    p_win        DOUBLE,
    neutral      BOOLEAN NOT NULL DEFAULT false
);
