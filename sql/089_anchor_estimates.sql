-- A new model's full mean on each target of the current anchor fits, from its anchors (its scored rows on
-- the target's instances) and its prior (anchor_prior): a posterior over the stored grid, as plain SQL
-- (models.anchors.target.estimate is the same computation in numpy):
--   loglik(g)  = sum over the anchors of y log p(g) + (1 - y) log(1 - p(g)),  p = anchor_p(anchor_logit(...))
--   logpost(g) = loglik(g) - (dof + 1)/2 log(1 + ((theta_g - mean)/sd)^2 / dof) + log slip_weight(g)
--   w(g)       = exp(logpost(g) - max) / sum
--   mu(g)      = (anchors solved + expected_total(g) - sum over the anchors of p(g)) / n_items
-- predicted is the posterior median of mu (points ordered by mu, midpoint CDF, linear between points);
-- the interval joins the posterior quantiles of mu with the unrun items' own variance
-- (noise_total(g) - sum over the anchors of p (1 - p)) / n_items^2, then is widened about the median by
-- anchor_factors' factor for that many anchors (NULL factor: [0, 1]); factor_outside instead when the median
-- lies outside the fit's training range (range_lo .. range_hi; NULL on older fits). Shares in [0, 1].
--   anchors      the model's scored rows on the target's instances (0: the prior's estimate)
--   prior_kind   metadata | sources | population (anchor_prior)
CREATE OR REPLACE VIEW anchor_estimates AS
WITH priors AS (
    SELECT p.*, f.n_items, f.level, f.z_level, f.dof, f.range_lo, f.range_hi
    FROM anchor_prior AS p JOIN current_anchor_fits AS f USING (fit_id, target)
),
trained AS (        -- the models each fit was trained on, as rows: a hash lookup per score row, where
                    -- list_contains(trained_on, model) scans the list for every (row, item) pair the join
                    -- meets (121 s at 1,000 models)
    SELECT fit_id, unnest(trained_on) AS model FROM current_anchor_fits
),
results AS (        -- a new model's anchors (not read through priors: Spark would compute that view twice)
    SELECT s.model, f.fit_id, f.target, i.a, i.b, s.score AS y
    FROM current_anchor_fits AS f
    JOIN anchor_items AS i ON i.fit_id = f.fit_id AND i.target = f.target
    JOIN scores AS s ON s.benchmark = f.target AND s.subdir = i.subdir AND s.instance_id = i.instance_id
    ANTI JOIN trained AS t ON t.fit_id = f.fit_id AND t.model = s.model
    WHERE s.score IS NOT NULL
),
observed AS (
    SELECT r.model, r.fit_id, r.target, g.point, count(*) AS k, sum(r.y) AS solved,
           sum(r.y * anchor_log_p(anchor_logit(r.a, g.theta, r.b), g.slip)
               + (1 - r.y) * anchor_log_q(anchor_logit(r.a, g.theta, r.b), g.slip))          AS loglik,
           sum(anchor_p(anchor_logit(r.a, g.theta, r.b), g.slip))                            AS p_run,
           sum(anchor_p(anchor_logit(r.a, g.theta, r.b), g.slip)
               * (1 - anchor_p(anchor_logit(r.a, g.theta, r.b), g.slip)))                    AS pq_run
    FROM results AS r JOIN anchor_grid AS g ON g.fit_id = r.fit_id AND g.target = r.target
    GROUP BY r.model, r.fit_id, r.target, g.point
),
points AS (
    SELECT p.model, p.fit_id, p.target, p.level, p.z_level, p.prior_kind, p.prior_mean, p.prior_sd,
           p.range_lo, p.range_hi, g.point,
           coalesce(o.k, 0) AS k,
           coalesce(o.loglik, 0)
             - (p.dof + 1) / 2 * ln(1 + ((g.theta - p.prior_mean) / p.prior_sd)
                                        * ((g.theta - p.prior_mean) / p.prior_sd) / p.dof)
             + ln(g.slip_weight)                                                       AS logpost,
           (coalesce(o.solved, 0) + g.expected_total - coalesce(o.p_run, 0)) / p.n_items  AS mu,
           (g.noise_total - coalesce(o.pq_run, 0)) / (p.n_items * p.n_items)             AS unrun_var
    FROM priors AS p
    JOIN anchor_grid AS g ON g.fit_id = p.fit_id AND g.target = p.target
    LEFT JOIN observed AS o
      ON o.model = p.model AND o.fit_id = p.fit_id AND o.target = p.target AND o.point = g.point
),
unnormalised AS (
    SELECT *, exp(logpost - max(logpost) OVER (PARTITION BY model, fit_id, target)) AS w0 FROM points
),
weighted AS (
    SELECT *, w0 / sum(w0) OVER (PARTITION BY model, fit_id, target) AS w FROM unnormalised
),
ranked AS (          -- the points in order of their full mean (rank), with the midpoint CDF
    SELECT *, sum(w) OVER (PARTITION BY model, fit_id, target ORDER BY mu, point
                           ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) - w / 2 AS cdf,
           row_number() OVER (PARTITION BY model, fit_id, target ORDER BY mu, point) AS mu_rank
    FROM weighted
),
summary AS (
    SELECT model, fit_id, target, level, z_level, prior_kind, prior_mean, prior_sd, range_lo, range_hi,
           max(k) AS anchors, greatest(sum(w * unrun_var), 0) AS unrun_var,   -- >= 0 despite rounding
           anchor_interp(0.5, arg_max(cdf, mu_rank) FILTER (WHERE cdf <= 0.5), arg_max(mu, mu_rank) FILTER (WHERE cdf <= 0.5),
                              arg_min(cdf, mu_rank) FILTER (WHERE cdf >= 0.5), arg_min(mu, mu_rank) FILTER (WHERE cdf >= 0.5))
               AS median,
           anchor_interp((1 - level) / 2,
                         arg_max(cdf, mu_rank) FILTER (WHERE cdf <= (1 - level) / 2), arg_max(mu, mu_rank) FILTER (WHERE cdf <= (1 - level) / 2),
                         arg_min(cdf, mu_rank) FILTER (WHERE cdf >= (1 - level) / 2), arg_min(mu, mu_rank) FILTER (WHERE cdf >= (1 - level) / 2))
               AS q_low,
           anchor_interp((1 + level) / 2,
                         arg_max(cdf, mu_rank) FILTER (WHERE cdf <= (1 + level) / 2), arg_max(mu, mu_rank) FILTER (WHERE cdf <= (1 + level) / 2),
                         arg_min(cdf, mu_rank) FILTER (WHERE cdf >= (1 + level) / 2), arg_min(mu, mu_rank) FILTER (WHERE cdf >= (1 + level) / 2))
               AS q_high
    FROM ranked
    GROUP BY model, fit_id, target, level, z_level, prior_kind, prior_mean, prior_sd, range_lo, range_hi
),
factor_ranges AS (   -- each learnt factor applies from its anchor count up to the next one's
    SELECT fit_id, target, k, lead(k) OVER (PARTITION BY fit_id, target ORDER BY k) AS next_k, factor,
           factor_outside
    FROM anchor_factors
),
intervals AS (       -- summary read once (so not materialised: a filter on model reaches the scans below it)
    SELECT s.*,
           CASE WHEN s.median < s.range_lo OR s.median > s.range_hi THEN f.factor_outside ELSE f.factor END
               AS factor,
           least(greatest(median - sqrt((median - q_low) * (median - q_low) + z_level * z_level * unrun_var), 0), 1)
               AS raw_low,
           least(greatest(median + sqrt((q_high - median) * (q_high - median) + z_level * z_level * unrun_var), 0), 1)
               AS raw_high
    FROM summary AS s
    LEFT JOIN factor_ranges AS f
      ON f.fit_id = s.fit_id AND f.target = s.target AND f.k <= s.anchors AND (f.next_k IS NULL OR s.anchors < f.next_k)
)
SELECT model, target, fit_id, anchors, median AS predicted,
       CASE WHEN factor IS NULL THEN 0.0 ELSE least(greatest(median - factor * (median - raw_low), 0), 1) END
           AS low,
       CASE WHEN factor IS NULL THEN 1.0 ELSE least(greatest(median + factor * (raw_high - median), 0), 1) END
           AS high,
       level, prior_kind, prior_mean, prior_sd
FROM intervals;
