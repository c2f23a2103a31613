-- The source-ability scale of a fit (method default): per source leaf, the logit leaf-mean centre and
-- spread over the models the scale was fitted on, and the leaf's loading. A model's ability is
--   theta = sum loading * (logit(clip(leaf mean, 0.02, 0.98)) - centre) / scale / sum loading^2
-- over the leaves it has (collapsed cells left out), as models/default/ability.py computes it, where the
-- leaf mean is the leaf's level (the mean centre of its instances in proxy_ability_instances, stored here by
-- the writer of the fit so that a lookup does not average them again) plus the model's mean deviation from
-- the centres on the instances it has.
CREATE TABLE IF NOT EXISTS proxy_leaves (
    fit_id     VARCHAR NOT NULL,
    benchmark  VARCHAR NOT NULL,
    subdir     VARCHAR NOT NULL,
    centre     DOUBLE NOT NULL,
    scale      DOUBLE NOT NULL,
    loading    DOUBLE NOT NULL,
    level      DOUBLE                -- the mean centre of the leaf's instances (proxy_leaf_levels_live)
);
ALTER TABLE proxy_leaves ADD COLUMN IF NOT EXISTS level DOUBLE;
