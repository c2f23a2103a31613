-- A model's ability on the source benchmarks, comparable between models that ran different subsets
-- of them: the mean, over the source leaves the model has, of its logit leaf mean minus that leaf's
-- mean over all models (one step of an additive leaf + model fit). Collapsed cells (collapsed_cells)
-- are left out. Used to find models outside the training range (`pace predict`) and for the low-K /
-- high-K extrapolation splits (split_folds); it never looks at target scores.
CREATE OR REPLACE VIEW source_ability AS
WITH leaf AS (
    SELECT s.model, s.benchmark, s.subdir, avg(s.score) AS leaf_mean
    FROM scores AS s
    JOIN benchmarks AS b USING (benchmark)
    ANTI JOIN collapsed_scores AS c
      ON c.model = s.model AND c.benchmark = s.benchmark AND c.subdir = s.subdir AND c.instance_id = s.instance_id
    WHERE b.role = 'source' AND s.score IS NOT NULL
    GROUP BY ALL
),
logits AS (
    SELECT model, benchmark, subdir, leaf_logit(leaf_mean) AS z
    FROM leaf
),
centred AS (
    SELECT model, benchmark, subdir,
           z - avg(z) OVER (PARTITION BY benchmark, subdir) AS dz,
           count(*) OVER (PARTITION BY benchmark, subdir) AS n_models
    FROM logits
)
SELECT model, avg(dz) AS ability, count(*) AS n_leaves
FROM centred
WHERE n_models >= 2
GROUP BY model;
