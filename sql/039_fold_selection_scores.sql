-- The default method's selection scores for one fold, per (target, source instance): what its Pace part
-- ranks before it selects (models/default_fold.py), computed over the fold's training models only (the
-- known models not in `fold_held_out` that have a score on the target; [] = the fit on all models).
--   relevance     |Spearman| of the instance's scores with the target over the training models: the SQL
--                 `corr` of their average ranks. As in the kernel, a training model without a score on the
--                 instance counts at the instance's training mean, an instance scored by fewer than 75 % of
--                 the training models is not usable, and the target is the clipped logit of its mean (ranks
--                 only see the clipping).
--   multiplicity  how many usable instances share this one's scores exactly (the first in key order
--                 stands for the group; the others are left out), from the fold's training basis
--   nc, global_score  the D-pt ("global") score leverage_nc * relevance, for every rank nc of the fold's
--                 basis up to 8; the leverages come from the UDF pace_fold_basis over fold_matrix (an SVD of
--                 the fold's centred training block), so this macro needs a `pace` connection
--   local_rank, global_rank  the H and D-pt orders: score descending, then instance key (col) ascending
-- The selection takes round(q * C) from the top of local_rank and the rest from global_rank (strict joint
-- budget, spec §4.4); q, nc and the blend are tuned by an inner leave-one-out inside the kernel.
-- Example: the top 5 relevant gaia instances when Orrin-5.0 is held out:
--   SELECT benchmark, instance_id, relevance FROM fold_selection_scores(['Orrin-5.0'], NULL, ['gaia'])
--   WHERE nc = 1 ORDER BY local_rank LIMIT 5;
CREATE OR REPLACE MACRO fold_selection_scores(fold_held_out, src, tgt) AS TABLE
WITH
held AS (
    SELECT unnest(fold_held_out) AS model
),
train AS (
    SELECT t.model, t.target, least(greatest(t.mean_observed, 0.001), 0.999) AS y
    FROM target_means AS t
    JOIN model_rows() AS r USING (model)
    WHERE t.mean_observed IS NOT NULL
      AND (tgt IS NULL OR list_contains(tgt, t.target))
      AND t.model NOT IN (SELECT model FROM held)
),
sizes AS (
    SELECT target, count(*) AS m FROM train GROUP BY target
),
cols AS (FROM source_columns(src)),
cells AS (
    SELECT t.target, t.model, c.col, s.score
    FROM scores AS s
    JOIN cols AS c USING (benchmark, subdir, instance_id)
    JOIN train AS t USING (model)
    WHERE s.score IS NOT NULL
),
usable AS (
    SELECT c.target, c.col, avg(c.score) AS mu
    FROM cells AS c JOIN sizes AS z USING (target)
    GROUP BY c.target, c.col
    HAVING count(*) >= greatest(2, ceil(0.75 * any_value(z.m) - 1e-9))
),
imputed AS (
    SELECT u.target, u.col, t.y, coalesce(c.score, u.mu) AS x
    FROM usable AS u
    JOIN train AS t USING (target)
    LEFT JOIN cells AS c ON c.target = u.target AND c.col = u.col AND c.model = t.model
),
ranked AS (
    SELECT target, col,
           rank() OVER (PARTITION BY target, col ORDER BY x)
               + (count(*) OVER (PARTITION BY target, col, x) - 1) / 2 AS rank_x,
           rank() OVER (PARTITION BY target, col ORDER BY y)
               + (count(*) OVER (PARTITION BY target, col, y) - 1) / 2 AS rank_y
    FROM imputed
),
relevance AS (
    SELECT target, col, abs(coalesce(corr(rank_x, rank_y), 0)) AS relevance
    FROM ranked
    GROUP BY target, col
),
basis AS (
    SELECT unnest(pace_fold_basis(f.models, f.n_train, f.n_cols, f.x, f.targets, f.t_cols, f.p, f.leaves,
                                  f.leaf_benchmarks, f.collapsed, '{}')) AS b
    FROM fold_matrix(fold_held_out, src, tgt) AS f
),
scored AS (
    SELECT r.target, r.col, r.relevance, b.b.multiplicity AS multiplicity, n.nc,
           b.b.leverage[n.nc] * r.relevance AS global_score
    FROM relevance AS r
    JOIN basis AS b ON b.b.target = r.target AND b.b.col = r.col
    CROSS JOIN LATERAL (SELECT unnest(range(1, len(b.b.leverage) + 1)) AS nc) AS n
)
SELECT s.target, c.benchmark, c.subdir, c.instance_id, s.col, s.relevance, s.multiplicity,
       row_number() OVER (PARTITION BY s.target, s.nc ORDER BY s.relevance DESC, s.col) AS local_rank,
       s.nc, s.global_score,
       row_number() OVER (PARTITION BY s.target, s.nc ORDER BY s.global_score DESC, s.col) AS global_rank
FROM scored AS s
JOIN cols AS c USING (col);
