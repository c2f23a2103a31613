-- The instances behind a fit's source-ability scale (method default) and their centres: the mean score
-- of the models the scale was fitted on. A model's leaf mean on the scale is the leaf's mean centre plus
-- its mean deviation from the centres on the instances it has (so a model scored on a few instances of
-- a leaf is not judged by how hard those few happen to be); see models/default/shrinkage.py leaf_means.
CREATE TABLE IF NOT EXISTS proxy_ability_instances (
    fit_id       VARCHAR NOT NULL,
    benchmark    VARCHAR NOT NULL,
    subdir       VARCHAR NOT NULL,
    instance_id  VARCHAR NOT NULL,
    centre       DOUBLE NOT NULL
);
