-- The configuration each target used (frozen table or chosen by auto-tune) in a run.
CREATE TABLE IF NOT EXISTS loocv_configs (
    run_id     VARCHAR NOT NULL,
    target     VARCHAR NOT NULL,
    fold       VARCHAR NOT NULL,         -- 'ALL' unless tuning was nested (then one per held-out model)
    m          DOUBLE,
    nc_h       INTEGER,
    nc_d       INTEGER,
    q          DOUBLE,
    objective  DOUBLE                    -- auto-tune objective of the chosen configuration (100*MAE - Spearman)
);
