-- One row per (anchor fit, target): the item model of a target, fitted by `pace fit` on every model with
-- rows on it (not held out of fits, not --exclude'd); warehouse.anchors / models.anchors.target.
--   fit_id      the proxy fit it was made with (proxy_fits.fit_id)
--   n_models    the models it was trained on (trained_on), n_items the target's instances it knows
--   level       the interval level of its estimates; z_level the normal quantile of (1 + level) / 2
--   dof         degrees of freedom of the Student-t ability prior
CREATE TABLE IF NOT EXISTS anchor_fits (
    fit_id      VARCHAR NOT NULL,
    target      VARCHAR NOT NULL,
    n_models    INTEGER NOT NULL,
    n_items     INTEGER NOT NULL,
    level       DOUBLE NOT NULL,
    z_level     DOUBLE NOT NULL,
    dof         DOUBLE NOT NULL,
    trained_on  VARCHAR[] NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    range_lo    DOUBLE,
    range_hi    DOUBLE,
    PRIMARY KEY (fit_id, target)
);
-- range_lo, range_hi: the second-lowest and second-highest training mean on the target (shares); an estimate
-- outside is widened by anchor_factors.factor_outside. Added after the first release: NULL on older fits.
ALTER TABLE anchor_fits ADD COLUMN IF NOT EXISTS range_lo DOUBLE;
ALTER TABLE anchor_fits ADD COLUMN IF NOT EXISTS range_hi DOUBLE;
