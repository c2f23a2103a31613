-- Every model with rows in the warehouse. A model is "known" (part of the model set that
-- target_means, selection and LOOCV use) when it has rows in at least one source benchmark.
-- origins is sorted with list_sort rather than list(... ORDER BY ...), which Spark SQL cannot say.
CREATE OR REPLACE VIEW models AS
SELECT
    s.model,
    count(*)                                        AS n_rows,
    count(DISTINCT (s.benchmark, s.subdir))         AS n_leaves,
    coalesce(bool_or(b.role = 'source'), false)     AS has_source,
    coalesce(bool_or(b.role = 'target'), false)     AS has_target,
    coalesce(bool_or(b.role = 'source'), false)     AS known,
    list_sort(list(DISTINCT s.origin))              AS origins
FROM scores AS s
LEFT JOIN benchmarks AS b USING (benchmark)
GROUP BY s.model;
