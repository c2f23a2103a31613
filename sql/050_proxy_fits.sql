-- A fitted proxy, one row per (fit, task, target): everything besides the instance weights that
-- turns a model's scores into a prediction. Written by `pace fit`; read by the predictions views.
--   abs:  predicted = clamp(intercept + sum weight * (score - center), clamp_lo, clamp_hi)
--         interval  = predicted + [resid_lo, resid_hi] (quantiles of held-out LOOCV residuals)
--   pair: margin(a, b) = sum weight * (score_a - score_b); p_win = 1 / (1 + exp(-(cal_a * margin + cal_b)))
-- A missing score counts as the instance's center (the training models' mean), never as 0.
CREATE TABLE IF NOT EXISTS proxy_fits (
    fit_id          VARCHAR NOT NULL,
    task            VARCHAR NOT NULL CHECK (task IN ('abs', 'pair')),
    method          VARCHAR NOT NULL,
    target          VARCHAR NOT NULL,
    budget          INTEGER NOT NULL,          -- C: instances per target
    params          JSON NOT NULL,             -- configuration (m, nc_h, nc_d, q, B, seed, ...)
    intercept       DOUBLE,
    clamp_lo        DOUBLE,
    clamp_hi        DOUBLE,
    mix_weight      DOUBLE,                    -- m: share of the Local (H) side
    cal_a           DOUBLE,                    -- Platt calibration (pair)
    cal_b           DOUBLE,
    resid_lo        DOUBLE,                    -- interval offsets from held-out residuals (abs)
    resid_hi        DOUBLE,
    interval_level  DOUBLE,
    trained_on      VARCHAR[] NOT NULL,
    data_hash       VARCHAR NOT NULL,          -- sha256 of the matrices the fit saw
    created_at      TIMESTAMP NOT NULL,
    PRIMARY KEY (fit_id, task, target)
);
