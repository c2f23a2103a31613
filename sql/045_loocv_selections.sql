-- The instances a run selected, per (fold, target, side), keyed by (benchmark, subdir, instance_id)
-- -- never by column position, which shifts when models or data change.
-- fold is the held-out model ('ALL' for a fit on every model); side 'H' (Local) or 'D' (Global);
-- weight as spec §14.1 (prediction = centre + sum weight * (x - training mean)); rank within the side.
CREATE TABLE IF NOT EXISTS loocv_selections (
    run_id       VARCHAR NOT NULL,
    fold         VARCHAR NOT NULL,
    target       VARCHAR NOT NULL,
    side         VARCHAR NOT NULL,
    benchmark    VARCHAR NOT NULL,
    subdir       VARCHAR NOT NULL,
    instance_id  VARCHAR NOT NULL,
    rank         INTEGER,
    weight       DOUBLE,
    nc           INTEGER
);
