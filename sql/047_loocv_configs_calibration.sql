-- Goal B runs also record their Platt calibration per target (a, b: p = 1 / (1 + exp(-(a m + b)))).
ALTER TABLE loocv_configs ADD COLUMN IF NOT EXISTS cal_a DOUBLE;
ALTER TABLE loocv_configs ADD COLUMN IF NOT EXISTS cal_b DOUBLE;
