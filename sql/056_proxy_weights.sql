-- The instances of a fitted proxy and their linear weights, keyed by (benchmark, subdir, instance_id).
-- side: 'H' (Local), 'D' (Global), 'HD' (both, weights already summed) or 'pair'.
-- center: the training models' mean score on the instance (what a missing score is imputed with).
CREATE TABLE IF NOT EXISTS proxy_weights (
    fit_id       VARCHAR NOT NULL,
    task         VARCHAR NOT NULL,
    target       VARCHAR NOT NULL,
    benchmark    VARCHAR NOT NULL,
    subdir       VARCHAR NOT NULL,
    instance_id  VARCHAR NOT NULL,
    side         VARCHAR NOT NULL,
    weight       DOUBLE NOT NULL,
    center       DOUBLE NOT NULL
);
