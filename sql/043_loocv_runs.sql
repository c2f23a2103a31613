-- One row per evaluation run (LOOCV, fit-all): what was asked and how long it took.
CREATE TABLE IF NOT EXISTS loocv_runs (
    run_id      VARCHAR PRIMARY KEY,
    task        VARCHAR NOT NULL,        -- 'abs' (Goal A) | 'pair' (Goal B)
    mode        VARCHAR NOT NULL,        -- 'loocv' | 'loocv-autotune' | 'fit' | ...
    method      VARCHAR NOT NULL,        -- 'compat' | 'default' | a baseline
    params      JSON NOT NULL,           -- the flags (count, B, seed, q, m, nc_h, nc_d, auto_tune, ...)
    sources     VARCHAR[],               -- NULL: every source benchmark
    targets     VARCHAR[] NOT NULL,
    models      VARCHAR[] NOT NULL,      -- matrix row order
    seconds     DOUBLE,
    created_at  TIMESTAMP NOT NULL,
    split       VARCHAR DEFAULT 'loo'    -- loo | family | low-K | high-K (split_folds); folds in loocv_folds
);
ALTER TABLE loocv_runs ADD COLUMN IF NOT EXISTS split VARCHAR DEFAULT 'loo';
