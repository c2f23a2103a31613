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
CREATE OR REPLACE VIEW predictions AS
WITH both_estimates AS (     -- each view read once (Spark inlines every read of a view)
    SELECT coalesce(s.model, e.model) AS model, coalesce(s.target, e.target) AS target,
           e.model IS NOT NULL AND (e.anchors > 0 OR coalesce(s.n_scored, 0) = 0) AS anchored,
           s.predicted, s.low, s.high, s.coverage, s.n_scored, s.n_instances, s.interval_level, s.method,
           s.fit_id, s.ability, s.ability_distance, s.out_of_range, s.range_side, s.range_reason, s.sources,
           s.restricted,
           e.predicted AS a_predicted, e.low AS a_low, e.high AS a_high, e.level AS a_level, e.fit_id AS a_fit_id,
           e.anchors, e.prior_kind
    FROM source_predictions AS s
    FULL OUTER JOIN anchor_estimates AS e ON e.model = s.model AND e.target = s.target
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
       ability, ability_distance, coalesce(out_of_range, false)        AS out_of_range, range_side, range_reason,
       CASE WHEN anchored AND coalesce(n_scored, 0) = 0 THEN NULL ELSE sources END     AS sources,
       coalesce(restricted, false)                                      AS restricted,
       CASE WHEN anchored THEN anchors ELSE 0 END                       AS anchors,
       CASE WHEN anchored THEN prior_kind END                           AS prior
FROM both_estimates;
