-- Per model the item models were not trained on (a new model: rows or metadata only) and target of the
-- current anchor fits, its ability prior: from its metadata (anchor_priors) if it has any; else from the
-- sources' prediction (source_predictions, when it has source rows), whose median full mean is that
-- prediction: centre = curve^-1(predicted), sd = (curve^-1(high) - curve^-1(low)) / (2 z_level) (the interval
-- as served: for a model out of range it reaches 1 % or 100 %, so the prior is as wide as what the sources
-- cannot rule out, and the anchors, not a narrow sources prior, place the model), with the
-- curve of anchor_curve made non-decreasing and inverted by linear interpolation (clamped to the grid);
-- else the training population's N(0, 1). A Student-t with anchor_fits.dof degrees of freedom throughout.
--   prior_kind  metadata | sources | population
CREATE OR REPLACE VIEW anchor_prior AS
WITH listed AS (      -- the models of view `models` (rows or metadata) without its per-model counts, so that
                     -- a filter on model reaches both reads (one model's lookup reads its own rows only)
    SELECT model FROM scores
    UNION
    SELECT model FROM model_metadata
),
candidates AS (
    SELECT m.model, f.fit_id, f.target, f.z_level
    FROM listed AS m CROSS JOIN current_anchor_fits AS f
    WHERE NOT list_contains(f.trained_on, m.model)
      -- a second spelling awaiting `pace alias` is not a model of its own yet
      AND m.model NOT IN (SELECT model FROM model_holds)
),
sourced AS (        -- every model's (the final join keeps the candidates'): candidates is read once, so it is
                    -- not materialised and a filter on model reaches source_predictions' scans
    SELECT s.model, f.fit_id, f.target, s.predicted, s.low, s.high
    FROM source_predictions AS s JOIN current_anchor_fits AS f ON f.target = s.target
    WHERE s.n_scored > 0
),
segments AS (       -- the stored inverse of each curve (anchor_curve_segments_live): the segment from each point
    SELECT fit_id, target, theta AS t0, rising_mean AS c0, next_theta AS t1, next_mean AS c1 FROM anchor_curve
),
ends AS (
    SELECT fit_id, target, min(t0) AS t_lo, max(t0) AS t_hi, min(c0) AS c_lo, max(c0) AS c_hi
    FROM segments GROUP BY ALL
),
asked AS (          -- the three shares to turn into abilities (one read of sourced: Spark inlines each read)
    SELECT s.model, s.fit_id, s.target, w.which,
           CASE w.which WHEN 'predicted' THEN s.predicted WHEN 'low' THEN s.low ELSE s.high END AS share
    FROM sourced AS s CROSS JOIN (VALUES ('predicted'), ('low'), ('high')) AS w(which)
),
inverted AS (
    SELECT a.model, a.fit_id, a.target, a.which,
           CASE WHEN a.share <= e.c_lo THEN e.t_lo
                WHEN a.share >= e.c_hi THEN e.t_hi
                ELSE max(s.t0 + (a.share - s.c0) * (s.t1 - s.t0) / (s.c1 - s.c0)) END AS theta
    FROM asked AS a
    JOIN ends AS e ON e.fit_id = a.fit_id AND e.target = a.target
    LEFT JOIN segments AS s
      ON s.fit_id = a.fit_id AND s.target = a.target AND s.c0 <= a.share AND a.share < s.c1
    GROUP BY a.model, a.fit_id, a.target, a.which, a.share, e.c_lo, e.c_hi, e.t_lo, e.t_hi
),
from_sources AS (
    SELECT model, fit_id, target,
           max(theta) FILTER (WHERE which = 'predicted') AS centre,
           max(theta) FILTER (WHERE which = 'high') - max(theta) FILTER (WHERE which = 'low') AS spread
    FROM inverted GROUP BY ALL
)
SELECT c.model, c.target, c.fit_id,
       coalesce(p.mean, s.centre, 0.0)                                        AS prior_mean,
       coalesce(p.sd, CASE WHEN s.model IS NOT NULL THEN greatest(s.spread / (2 * c.z_level), 0.05) END, 1.0)
                                                                              AS prior_sd,
       CASE WHEN p.model IS NOT NULL THEN 'metadata'
            WHEN s.model IS NOT NULL THEN 'sources' ELSE 'population' END     AS prior_kind
FROM candidates AS c
LEFT JOIN anchor_priors AS p ON p.fit_id = c.fit_id AND p.target = c.target AND p.model = c.model
LEFT JOIN from_sources AS s ON s.model = c.model AND s.fit_id = c.fit_id AND s.target = c.target;
