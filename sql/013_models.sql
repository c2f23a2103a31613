-- Every model with rows in the warehouse, or with metadata only (model_metadata: a model directory of
-- an agentic results index that holds nothing else yet, the way a new model arrives). A model is "known"
-- (part of the model set that the source-based methods, selection and LOOCV use) when it has rows in at
-- least one source benchmark and is not held out of fits (held: a row in model_holds, e.g. a second
-- spelling of a known model); a model with target rows only (agentic results imported before its
-- source benchmarks were run) is listed with has_target and without known.
-- origins is sorted with list_sort rather than list(... ORDER BY ...), which Spark SQL cannot say.
--   held          ingest held it out of fits (model_holds)
--   has_metadata  model_metadata holds a row for it (release date, parameters, prices, ...)
CREATE OR REPLACE VIEW models AS
-- One grouping of the rows (per model, leaf and origin: a few thousand groups), the per-model figures
-- from those: the DISTINCT aggregates over the rows themselves cost DuckDB one more pass of every row each.
WITH per_leaf AS (
    SELECT s.model, s.benchmark, s.subdir, s.origin, count(*) AS n_rows
    FROM scores AS s
    GROUP BY ALL
),
scored AS (
    SELECT
        p.model,
        sum(p.n_rows)::BIGINT                           AS n_rows,
        count(DISTINCT (p.benchmark, p.subdir))         AS n_leaves,
        coalesce(bool_or(b.role = 'source'), false)     AS has_source,
        coalesce(bool_or(b.role = 'target'), false)     AS has_target,
        list_sort(list(DISTINCT p.origin))              AS origins
    FROM per_leaf AS p
    LEFT JOIN benchmarks AS b USING (benchmark)
    GROUP BY p.model
),
described AS (
    SELECT DISTINCT model FROM model_metadata
)
SELECT
    coalesce(s.model, d.model)                      AS model,
    coalesce(s.n_rows, 0)                           AS n_rows,
    coalesce(s.n_leaves, 0)                         AS n_leaves,
    coalesce(s.has_source, false)                   AS has_source,
    coalesce(s.has_target, false)                   AS has_target,
    coalesce(s.has_source, false) AND h.model IS NULL AS known,
    s.origins,
    h.model IS NOT NULL                             AS held,
    d.model IS NOT NULL                             AS has_metadata
FROM scored AS s
FULL OUTER JOIN described AS d ON d.model = s.model
-- model_holds holds at most one row per model, so this join keeps one row per model
LEFT JOIN model_holds AS h ON h.model = coalesce(s.model, d.model);
