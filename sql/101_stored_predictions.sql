-- The rows of `predictions` (the rule), stored per model with the fingerprint of their inputs they were
-- computed at (prediction_inputs), so that one model's lookup reads a few stored rows instead of planning
-- and running the whole chain of views (~100 ms at any size): warehouse.stored_predictions. A model's rows
-- are served only while its fingerprint still holds and pace_meta's stamp names the rule's version;
-- otherwise the lookup computes them from `predictions`. Writers refresh the models whose fingerprint
-- changed (ingest, import, a run's end, alias, roles, metadata; `pace fit` and a new restricted fit: every
-- model). A fit's
-- own rows (weights, leaves, items, grid) are in no fingerprint: pace writes them once, with the fit's
-- row; an edit of them by another client is found by `pace doctor` (it compares the stored rows with
-- the view and recomputes).
-- stored_prediction_models records each model computed, also one with no prediction (no rows here).
CREATE TABLE IF NOT EXISTS stored_prediction_models (
    model        VARCHAR NOT NULL,
    fingerprint  UBIGINT NOT NULL,        -- prediction_inputs.fingerprint when its rows were computed
    n_rows       BIGINT NOT NULL          -- its rows stored (a lookup finding fewer serves none)
);
CREATE TABLE IF NOT EXISTS stored_predictions (
    model             VARCHAR NOT NULL,
    target            VARCHAR NOT NULL,
    predicted         DOUBLE,
    low               DOUBLE,
    high              DOUBLE,
    coverage          DOUBLE,
    n_scored          BIGINT,
    n_instances       BIGINT,
    interval_level    DOUBLE,
    method            VARCHAR,
    fit_id            VARCHAR,
    ability           DOUBLE,
    ability_distance  DOUBLE,
    out_of_range      BOOLEAN,
    range_side        VARCHAR,
    range_reason      VARCHAR,
    sources           VARCHAR[],
    restricted        BOOLEAN,
    anchors           BIGINT,
    prior             VARCHAR
);
