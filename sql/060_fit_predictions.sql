-- Predicted target scores of every model with rows in the warehouse, from each fit it may be predicted
-- with: the current fit of each target, and, when the model lacks some of that fit's source benchmarks
-- (model_sources.present), the restricted fit made for exactly the ones it has (restricted_fits; made by
-- `pace predict`, once per set, and shared by every model with that set). Nothing else: which fits other
-- models were predicted with never changes a model's rows. `predictions` keeps one row per model and target.
-- Plain SQL: a join of the model's score rows with the stored weights (works from any DuckDB client).
--   coverage = share of the fit's instances the model has a score for; missing ones count as the
--   training mean (center). low/high: the held-out-residual interval, within [0, 1].
--   link 'logit' fits (method default) add the source-ability part (proxy_fits explains the formula):
--   ability is the model's ability on the fit's scale, ability_distance how far outside the training
--   models' [min, max] it lies (in their standard deviations; there the gate leans on the ability link and
--   the interval comes from extrapolation residuals, down to the floor link's reading).
--   range_side   'below' / 'above' / NULL: the out-of-range verdict on a model the fit was not trained on, the
--                ability check (outside the training models' second-lowest .. second-highest ability,
--                range_lo / range_hi: one odd model cannot stretch it) or else the era check (release date,
--                model_release, before / after every training model's, released_lo / released_hi; no
--                verdict when either is unknown)
--                'both' for a model with scores on under half of the current fit's source benchmarks
--                (GPT-4o: 6 of 17; a model with agentic rows only: 0), from whichever fit, and no era
--                verdict: so few sources cannot place a model on either side, whatever its ability on them
--                says (the older models of unlabelled-sources look mid-range there); the era check alone
--                gives such a row its side
--   range_reason 'ability' | 'release date' | 'few sources' | NULL: which check gave the verdict
--   out_of_range = range_side IS NOT NULL. A flagged model's bound on that side is what the data cannot rule
--                out: low = least(low, 0.01) (the floor reading, 1 %) below, high = 1.0 above (both: both).
--   residual_low, residual_high  the interval before that widening (what the residuals give)
--   restricted   the row comes from a restricted fit (else from the current fit)
--   created_at   when that fit was made
CREATE OR REPLACE VIEW fit_predictions AS
WITH current_abs AS (
    SELECT * FROM current_fits WHERE task = 'abs'
),
restricted_abs AS (   -- read once here (a view is planned again at every read)
    SELECT * FROM restricted_fits WHERE task = 'abs'
),
fits AS (
    SELECT * FROM current_abs
    UNION ALL   -- the same columns: both are proxy_fits rows
    SELECT * FROM restricted_abs
),
candidates AS (
    SELECT DISTINCT model FROM scores
),
every_source AS (   -- what a fit made before proxy_fits.sources existed selected from
    SELECT list(benchmark) AS sources FROM benchmarks WHERE role = 'source'
),
current_sources AS (   -- each target's current fit and the source benchmarks it selected from
    SELECT f.fit_id, f.target, coalesce(f.sources, e.sources) AS sources
    FROM current_abs AS f CROSS JOIN every_source AS e
),
present AS (
    SELECT model, list(benchmark) AS benchmarks FROM model_sources WHERE present GROUP BY model
),
usable AS (         -- (model, fit) pairs: the current fits, and the restricted fit on the model's own set
    SELECT c.model, f.fit_id, f.target
    FROM candidates AS c
    CROSS JOIN current_abs AS f
    UNION ALL
    SELECT p.model, r.fit_id, r.target
    FROM present AS p
    CROSS JOIN current_sources AS f
    JOIN restricted_abs AS r
      ON r.target = f.target AND list_sort(r.sources) = list_sort(array_intersect(f.sources, p.benchmarks))
),
instances AS (
    SELECT w.fit_id, w.target, w.benchmark, w.subdir, w.instance_id,
           sum(w.weight) AS weight, any_value(w.center) AS center
    FROM proxy_weights AS w
    JOIN fits AS f ON f.fit_id = w.fit_id AND f.target = w.target
    WHERE w.task = 'abs'
    GROUP BY ALL
),
terms AS (
    SELECT u.model, p.fit_id, p.target, p.weight, p.center, s.score
    FROM usable AS u
    JOIN instances AS p ON p.fit_id = u.fit_id AND p.target = u.target
    LEFT JOIN scores AS s
      ON s.model = u.model AND s.benchmark = p.benchmark AND s.subdir = p.subdir
     AND s.instance_id = p.instance_id AND s.score IS NOT NULL
),
linear AS (
    SELECT model, fit_id, target,
           sum(weight * coalesce(score - center, 0)) AS signal,
           count(score) AS n_scored,
           count(*) AS n_instances
    FROM terms
    GROUP BY ALL
),
scale_leaves AS (     -- per leaf of a fit's ability scale: centre, spread, loading and the level (the mean centre
                      -- of its instances, stored with the fit: proxy_leaf_levels_live)
    SELECT l.* FROM proxy_leaves AS l WHERE l.fit_id IN (SELECT fit_id FROM fits)
),
leaf_deviations AS (   -- rows in collapsed cells left out: collapsed_scores, written against the few stored
                       -- cells so that only the model's own rows are read (the rows of collapsed_scores
                       -- would be those of every model with a collapsed cell).
                       -- A LEFT JOIN so that the score rows meet their sources first: as an inner join DuckDB
                       -- may join score_sources with the centres on (benchmark, subdir) first, every source
                       -- times every instance of its leaf (82 M rows at 1,000 models: 56 s instead of 6.5 s)
    SELECT s.model, a.fit_id, a.benchmark, a.subdir, avg(s.score - a.centre) AS deviation
    FROM scores AS s
    LEFT JOIN proxy_ability_instances AS a
      ON a.benchmark = s.benchmark AND a.subdir = s.subdir AND a.instance_id = s.instance_id
     AND a.fit_id IN (SELECT fit_id FROM fits)
    ANTI JOIN collapsed_cells AS c
      ON c.model = s.model AND c.benchmark = s.benchmark AND c.subdir = s.subdir
     AND (c.facet = '' OR coalesce(regexp_extract(s.instance_id, '_([A-Za-z][A-Za-z-]*)$', 1), '') = c.facet)
    WHERE s.score IS NOT NULL AND a.fit_id IS NOT NULL
    GROUP BY ALL
),
abilities AS (         -- the model's leaf mean is the leaf's level plus its mean deviation from the centres
    SELECT d.model, l.fit_id,
           sum(l.loading * (leaf_logit(l.level + d.deviation) - l.centre) / l.scale) / sum(l.loading * l.loading)
               AS ability
    FROM leaf_deviations AS d
    JOIN scale_leaves AS l USING (fit_id, benchmark, subdir)
    GROUP BY ALL
),
placed AS (
    SELECT l.model, l.target, l.fit_id, l.n_scored, l.n_instances, f.method, f.link, f.interval_level,
           f.restricted_for, f.sources, f.created_at,
           least(greatest(f.intercept + l.signal, f.clamp_lo), f.clamp_hi) AS linear_part,
           CASE WHEN f.link = 'logit' THEN a.ability END AS ability,
           CASE WHEN f.link = 'logit' THEN ability_distance(a.ability, f.ability_lo, f.ability_hi, f.ability_sd)
                ELSE 0 END AS ability_distance,
           -- 1e-9: a training model at the edge of the range is inside it despite rounding
           f.link = 'logit' AND (a.ability < f.ability_lo - 1e-9 * f.ability_sd
                                 OR a.ability > f.ability_hi + 1e-9 * f.ability_sd) AS extrapolating,
           -- a model the fit was trained on sets the range: never outside it (its prediction is in-sample)
           CASE WHEN list_contains(f.trained_on, l.model) OR f.link <> 'logit' THEN NULL
                WHEN a.ability < coalesce(f.range_lo, f.ability_lo) - 1e-9 * f.ability_sd THEN 'below'
                WHEN a.ability > coalesce(f.range_hi, f.ability_hi) + 1e-9 * f.ability_sd THEN 'above'
                END AS ability_side,
           CASE WHEN list_contains(f.trained_on, l.model) THEN NULL
                WHEN r.release_date < f.released_lo THEN 'below'
                WHEN r.release_date > f.released_hi THEN 'above' END AS era_side,
           -- the model's own sources, not the fit's: the same verdict before and after `pace predict` made
           -- its restricted fit (a model with no source rows at all has none of them)
           CASE WHEN NOT list_contains(f.trained_on, l.model)
                 AND 2 * coalesce(array_length(array_intersect(c.sources, m.benchmarks)), 0)
                     < array_length(c.sources)
                THEN 'both' END AS sources_side,
           f.resid_lo, f.resid_hi, f.oor_lo, f.oor_hi, f.struct_intercept, f.struct_slope,
           f.floor_intercept, f.floor_slope, f.gate_base, f.gate_width
    FROM linear AS l
    JOIN fits AS f ON f.fit_id = l.fit_id AND f.target = l.target
    LEFT JOIN abilities AS a ON a.model = l.model AND a.fit_id = l.fit_id
    LEFT JOIN model_release AS r ON r.model = l.model
    LEFT JOIN current_sources AS c ON c.target = l.target   -- the current fit (a restricted one stands in for it)
    LEFT JOIN present AS m ON m.model = l.model
),
judged AS (   -- on few sources the ability is not to be trusted: the release date alone can tell the side
    SELECT *,
           CASE WHEN sources_side IS NOT NULL THEN coalesce(era_side, sources_side)
                ELSE coalesce(ability_side, era_side) END AS range_side,
           CASE WHEN sources_side IS NOT NULL AND era_side IS NULL THEN 'few sources'
                WHEN sources_side IS NULL AND ability_side IS NOT NULL THEN 'ability'
                WHEN era_side IS NOT NULL THEN 'release date' END AS range_reason
    FROM placed
),
combined AS (
    SELECT *,
           CASE WHEN link <> 'logit' THEN linear_part
                ELSE gated_logit(linear_part, struct_intercept + struct_slope * ability,
                                 ability_gate(ability_distance, gate_base, gate_width)) END AS z
    FROM judged
),
residual_intervals AS (   -- the interval the residuals give (extrapolation residuals outside [min, max])
    SELECT *,
           CASE WHEN link <> 'logit' THEN least(greatest(z + resid_lo, 0.0), 1.0)
                WHEN extrapolating
                THEN pace_expit(least(z + oor_lo, floor_intercept + floor_slope * ability))
                ELSE pace_expit(z + resid_lo) END AS residual_low,
           CASE WHEN link <> 'logit' THEN greatest(least(z + resid_hi, 1.0), 0.0)
                WHEN extrapolating THEN pace_expit(z + oor_hi)
                ELSE pace_expit(z + resid_hi) END AS residual_high
    FROM combined
),
scored AS (
    SELECT model, target, fit_id, method, interval_level, n_scored, n_instances, restricted_for, sources,
           ability, ability_distance, range_side, range_reason, created_at, residual_low, residual_high,
           CASE WHEN link = 'logit' THEN pace_expit(z) ELSE z END AS predicted,
           -- out of range: the flagged side reaches what the data cannot rule out (0.01: the floor reading)
           CASE WHEN range_side IN ('below', 'both') THEN least(residual_low, 0.01) ELSE residual_low END AS low,
           CASE WHEN range_side IN ('above', 'both') THEN 1.0 ELSE residual_high END AS high
    FROM residual_intervals
)
SELECT model, target, predicted, low, high,
       n_scored / n_instances                    AS coverage,
       n_scored, n_instances, interval_level, method, fit_id,
       ability, ability_distance, range_side IS NOT NULL AS out_of_range, range_side, range_reason, sources,
       restricted_for IS NOT NULL                AS restricted,
       created_at, residual_low, residual_high
FROM scored;
