-- The held-out sets of an evaluation split, as rows (split, fold, model): every labelled model (one
-- with source rows and a usable target score) appears in at most one fold; the others of that fold train
-- the proxy. A model with target rows but no source rows (agentic results only) is in no fold: the
-- source-based methods have nothing to predict it from.
--   'loo'     one fold per model (leave-one-model-out)
--   'family'  one fold per model family (model_family): the whole family is held out together
--   'low-K'   one fold: the K labelled models with the lowest source_ability (extrapolation downwards)
--   'high-K'  one fold: the K with the highest (extrapolation upwards)
--   'kfold-K' K folds of the labelled models in name order, dealt round-robin (fold 'k01' .. 'kK'):
--             the interval residuals of `pace fit` when leave-one-out is too costly (many models)
--   'all'     no fold holds anything out (eval_folds gives it the one fold 'all': the final fit)
-- The ability comes from source scores only, so a split never peeks at the targets it is scored on.
-- Each split is its own branch of a UNION ALL whose condition on `split_name` is a constant, so DuckDB
-- drops the branches not asked for: loo never computes the families or the source abilities.
CREATE OR REPLACE MACRO split_folds(split_name) AS TABLE
WITH labelled AS (
    SELECT DISTINCT model FROM target_means WHERE n_scored > 0 AND known
),
size AS (
    SELECT try_cast(regexp_extract(split_name, '^(low|high|kfold)-([0-9]+)$', 2) AS INTEGER) AS k
)
SELECT split_name AS split, l.model AS fold, l.model
FROM labelled AS l
WHERE split_name = 'loo'
UNION ALL
SELECT split_name, f.family, l.model
FROM labelled AS l JOIN model_family AS f USING (model)
WHERE split_name = 'family'
UNION ALL
SELECT split_name,
       'k' || lpad(((r.rank_name - 1) % size.k + 1)::VARCHAR, length(size.k::VARCHAR)::INTEGER, '0'), r.model
FROM (SELECT model, row_number() OVER (ORDER BY model) AS rank_name FROM labelled) AS r, size
WHERE starts_with(split_name, 'kfold-') AND size.k >= 1
UNION ALL
SELECT split_name, split_name, r.model
FROM (
    SELECT l.model,
           row_number() OVER (ORDER BY a.ability ASC NULLS LAST, l.model) AS rank_low,
           row_number() OVER (ORDER BY a.ability DESC NULLS LAST, l.model) AS rank_high
    FROM labelled AS l LEFT JOIN source_ability AS a USING (model)
) AS r, size
WHERE (starts_with(split_name, 'low-') AND r.rank_low <= size.k)
   OR (starts_with(split_name, 'high-') AND r.rank_high <= size.k);
