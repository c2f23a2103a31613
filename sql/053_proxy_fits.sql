-- A fitted proxy, one row per (fit, task, target): everything besides the instance weights that
-- turns a model's scores into a prediction. Written by `pace fit`; read by the predictions views.
--   abs, link 'identity' (compat, instance):
--         predicted = clamp(intercept + sum weight * (score - center), clamp_lo, clamp_hi)
--         interval  = predicted + [resid_lo, resid_hi] (quantiles of held-out LOOCV residuals)
--   abs, link 'logit' (default): on the logit scale of the target mean,
--         z_pace    = clamp(intercept + sum weight * (score - center), clamp_lo, clamp_hi)
--         theta     = the model's source ability on the fit's scale (proxy_leaves)
--         d         = how far theta lies outside [ability_lo, ability_hi], in units of ability_sd
--         w         = gate_base + (1 - gate_base) * min(1, d / gate_width)
--         predicted = expit((1 - w) * z_pace + w * (struct_intercept + struct_slope * theta))
--         interval  = expit(z + [resid_lo, resid_hi]) inside the range; outside it (d > 0)
--                     expit(min(z + oor_lo, floor_intercept + floor_slope * theta)) .. expit(z + oor_hi)
--   out of range (fit_predictions): theta below range_lo / above range_hi (the training models' second-lowest /
--         second-highest ability: one odd model cannot stretch the range), or a release date before
--         released_lo / after released_hi (model_release); the bound on that side then widens to 1 % / 100 %
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
    link            VARCHAR DEFAULT 'identity',   -- 'identity' | 'logit' (see above)
    struct_intercept DOUBLE,                      -- monotone link from the source ability (logit scale)
    struct_slope    DOUBLE,
    floor_intercept DOUBLE,                       -- the same link through a chance-level model (pessimistic)
    floor_slope     DOUBLE,
    gate_base       DOUBLE,                       -- weight of the ability link inside the training range
    gate_width      DOUBLE,                       -- distance (in ability_sd) at which it reaches 1
    ability_lo      DOUBLE,                       -- the training models' ability range and spread
    ability_hi      DOUBLE,
    ability_sd      DOUBLE,
    oor_lo          DOUBLE,                       -- interval offsets for a model outside the range
    oor_hi          DOUBLE,                       -- (quantiles of extrapolation-split residuals)
    sources         VARCHAR[],                    -- the source benchmarks the fit selected from
    restricted_for  VARCHAR,                      -- NULL, or the model a restricted fit was made for
    loocv_mae       DOUBLE,                       -- held-out MAE of this proxy on its training models
    restricted_from VARCHAR,                      -- the current fit (fit_id) a restricted fit stands in for
    range_lo        DOUBLE,                       -- the out-of-range check's ability range: the training models'
    range_hi        DOUBLE,                       -- second-lowest and second-highest abilities (NULL: ability_lo/hi)
    released_lo     DATE,                         -- the training models' earliest and latest release dates
    released_hi     DATE,                         -- (model_release; NULL when none is known)
    PRIMARY KEY (fit_id, task, target)
);
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS link VARCHAR DEFAULT 'identity';
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS struct_intercept DOUBLE;
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS struct_slope DOUBLE;
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS floor_intercept DOUBLE;
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS floor_slope DOUBLE;
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS gate_base DOUBLE;
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS gate_width DOUBLE;
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS ability_lo DOUBLE;
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS ability_hi DOUBLE;
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS ability_sd DOUBLE;
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS oor_lo DOUBLE;
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS oor_hi DOUBLE;
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS sources VARCHAR[];
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS restricted_for VARCHAR;
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS loocv_mae DOUBLE;
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS restricted_from VARCHAR;
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS range_lo DOUBLE;
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS range_hi DOUBLE;
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS released_lo DATE;
ALTER TABLE proxy_fits ADD COLUMN IF NOT EXISTS released_hi DATE;
