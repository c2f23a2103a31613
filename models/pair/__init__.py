"""Goal B maths shared by compat and default: ordered pairs and soft labels, the pair logistic
regressions, Platt calibration."""
