-- Every model with rows in the warehouse. A model is "known" (part of the model set that
-- target_means, selection and LOOCV use) when it has rows in at least one source benchmark and is not
-- held out of fits (held: a row in model_holds, e.g. a second spelling of a known model).
-- origins is sorted with list_sort rather than list(... ORDER BY ...), which Spark SQL cannot say.
CREATE OR REPLACE VIEW models AS
SELECT
    s.model,
    count(*)                                        AS n_rows,
    count(DISTINCT (s.benchmark, s.subdir))         AS n_leaves,
    coalesce(bool_or(b.role = 'source'), false)     AS has_source,
    coalesce(bool_or(b.role = 'target'), false)     AS has_target,
    coalesce(bool_or(b.role = 'source'), false) AND count(h.model) = 0 AS known,
    list_sort(list(DISTINCT s.origin))              AS origins,
    count(h.model) > 0                              AS held
FROM scores AS s
LEFT JOIN benchmarks AS b USING (benchmark)
LEFT JOIN model_holds AS h ON h.model = s.model     -- at most one row per model
GROUP BY s.model;
