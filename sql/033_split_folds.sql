-- The held-out sets of an evaluation split, as rows (split, fold, model): every labelled model (one
-- with a usable target score) appears in at most one fold; the others of that fold train the proxy.
--   'loo'     one fold per model (leave-one-model-out)
--   'family'  one fold per model family (model_family): the whole family is held out together
--   'low-K'   one fold: the K labelled models with the lowest source_ability (extrapolation downwards)
--   'high-K'  one fold: the K with the highest (extrapolation upwards)
-- The ability comes from source scores only, so a split never peeks at the targets it is scored on.
CREATE OR REPLACE MACRO split_folds(split_name) AS TABLE
WITH labelled AS (
    SELECT DISTINCT model FROM target_means WHERE n_scored > 0
),
ranked AS (
    SELECT l.model, f.family, a.ability,
           row_number() OVER (ORDER BY a.ability ASC NULLS LAST, l.model) AS rank_low,
           row_number() OVER (ORDER BY a.ability DESC NULLS LAST, l.model) AS rank_high
    FROM labelled AS l
    JOIN model_family AS f USING (model)
    LEFT JOIN source_ability AS a USING (model)
),
size AS (
    SELECT try_cast(regexp_extract(split_name, '^(low|high)-([0-9]+)$', 2) AS INTEGER) AS k
)
SELECT split_name AS split,
       CASE split_name WHEN 'loo' THEN r.model WHEN 'family' THEN r.family ELSE split_name END AS fold,
       r.model
FROM ranked AS r, size
WHERE split_name IN ('loo', 'family')
   OR (starts_with(split_name, 'low-') AND r.rank_low <= size.k)
   OR (starts_with(split_name, 'high-') AND r.rank_high <= size.k);
