-- Predicted target scores of every model: per model and target the sources' prediction
-- (source_predictions), or, for a model the anchor item models were not trained on, the anchors
-- estimate (anchor_estimates) when the model has anchors on the target or no source rows to predict from.
-- So 0 anchors gives the sources' answer for a model with source rows, and a model with only metadata
-- (a new model before any run) still gets the estimate of its metadata prior. Plain SQL.
--   method    the source method, or 'anchors'
--   anchors   the model's anchors on the target used (0 for a sources prediction)
--   prior     the anchors estimate's prior: metadata | sources | population (NULL for a sources prediction)
--   coverage, n_scored, sources, ... the sources' prediction's (NULL for an anchors row of a model with no
--                source rows)
--   out_of_range, range_side, range_reason  the sources' verdict (fit_predictions); false / NULL on an
--                anchors row, whose interval is its own
CREATE OR REPLACE VIEW predictions AS
WITH stacked AS (      -- each view read once (Spark inlines every read of a view), its rows stacked under the
                       -- other's rather than joined: a filter on model (one model's lookup) then reaches both
                       -- views, which the coalesced key of a full outer join would stop
    SELECT model, target,
           predicted, low, high, coverage, n_scored, n_instances, interval_level, method, fit_id,
           ability, ability_distance, out_of_range, range_side, range_reason, sources, restricted,
           NULL AS a_predicted, NULL AS a_low, NULL AS a_high, NULL AS a_level, NULL AS a_fit_id,
           NULL AS anchors, NULL AS prior_kind
    FROM source_predictions
    UNION ALL
    SELECT model, target,
           NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
           NULL, predicted AS a_predicted, low AS a_low, high AS a_high, level AS a_level,
           fit_id AS a_fit_id, anchors, prior_kind
    FROM anchor_estimates
),
both_estimates AS (    -- one row per model and target; max: each column holds one value there (the other
                       -- view's row holds NULL in it)
    SELECT model, target,
           max(predicted) AS predicted, max(low) AS low, max(high) AS high, max(coverage) AS coverage,
           max(n_scored) AS n_scored, max(n_instances) AS n_instances,
           max(interval_level) AS interval_level, max(method) AS method, max(fit_id) AS fit_id,
           max(ability) AS ability, max(ability_distance) AS ability_distance,
           max(out_of_range) AS out_of_range, max(range_side) AS range_side,
           max(range_reason) AS range_reason, max(sources) AS sources, max(restricted) AS restricted,
           max(a_predicted) AS a_predicted, max(a_low) AS a_low, max(a_high) AS a_high,
           max(a_level) AS a_level, max(a_fit_id) AS a_fit_id, max(anchors) AS anchors,
           max(prior_kind) AS prior_kind
    FROM stacked
    GROUP BY model, target
),
judged AS (
    SELECT *, anchors IS NOT NULL AND (anchors > 0 OR coalesce(n_scored, 0) = 0) AS anchored FROM both_estimates
)
SELECT model, target,
       CASE WHEN anchored THEN a_predicted ELSE predicted END           AS predicted,
       CASE WHEN anchored THEN a_low ELSE low END                       AS low,
       CASE WHEN anchored THEN a_high ELSE high END                     AS high,
       CASE WHEN anchored AND coalesce(n_scored, 0) = 0 THEN NULL ELSE coverage END    AS coverage,
       CASE WHEN anchored AND coalesce(n_scored, 0) = 0 THEN NULL ELSE n_scored END    AS n_scored,
       CASE WHEN anchored AND coalesce(n_scored, 0) = 0 THEN NULL ELSE n_instances END AS n_instances,
       CASE WHEN anchored THEN a_level ELSE interval_level END          AS interval_level,
       CASE WHEN anchored THEN 'anchors' ELSE method END                AS method,
       CASE WHEN anchored THEN a_fit_id ELSE fit_id END                 AS fit_id,
       -- the out-of-range verdict is the sources' (their interval's widening): an anchored row has its own
       -- interval, calibrated off the anchors' training range, and no verdict
       ability, ability_distance,
       NOT anchored AND coalesce(out_of_range, false)                   AS out_of_range,
       CASE WHEN NOT anchored THEN range_side END                       AS range_side,
       CASE WHEN NOT anchored THEN range_reason END                     AS range_reason,
       CASE WHEN anchored AND coalesce(n_scored, 0) = 0 THEN NULL ELSE sources END     AS sources,
       coalesce(restricted, false)                                      AS restricted,
       CASE WHEN anchored THEN anchors ELSE 0 END                       AS anchors,
       CASE WHEN anchored THEN prior_kind END                           AS prior
FROM judged;
