-- One row holding everything a proxy kernel needs, as dense nested lists (NaN = no usable score):
--   x        DOUBLE[n][S]       source scores, rows = model_rows(), columns = source_columns(src)
--   p        DOUBLE[T][n][N_t]  per target (alphabetical) the per-instance scores
--   targets  VARCHAR[T], models VARCHAR[n]
--   leaves   INTEGER[S]         per source column, the index of its leaf (benchmark, subdir) in 0..L-1
--   leaf_benchmarks VARCHAR[L]  the benchmark of each leaf
--   collapsed INTEGER[][]       [row, col] of every source cell in a collapsed cell (collapsed_scores),
--                              which the default method leaves out of its ability scale
-- The evaluation calls a Python kernel (a UDF registered by `pace`) on this row.
CREATE OR REPLACE MACRO loocv_inputs(src, tgt) AS TABLE
WITH
rows AS (FROM model_rows()),
cols AS (FROM source_columns(src)),
cells AS (
    SELECT r.row, c.col, s.score
    FROM scores AS s
    JOIN rows AS r USING (model)
    JOIN cols AS c USING (benchmark, subdir, instance_id)
    WHERE s.score IS NOT NULL
),
dense AS (
    SELECT r.row, list(coalesce(cells.score, 'NaN'::DOUBLE) ORDER BY c.col) AS x_row
    FROM rows AS r CROSS JOIN cols AS c
    LEFT JOIN cells ON cells.row = r.row AND cells.col = c.col
    GROUP BY r.row
),
tcols AS (FROM target_columns(tgt)),
tcells AS (
    SELECT r.row, t.target, t.col, s.score
    FROM scores AS s
    JOIN rows AS r USING (model)
    JOIN tcols AS t ON t.target = s.benchmark AND t.subdir = s.subdir AND t.instance_id = s.instance_id
    WHERE s.score IS NOT NULL
),
tdense AS (
    SELECT t.target, r.row, list(coalesce(tc.score, 'NaN'::DOUBLE) ORDER BY t.col) AS p_row
    FROM rows AS r CROSS JOIN tcols AS t
    LEFT JOIN tcells AS tc ON tc.row = r.row AND tc.target = t.target AND tc.col = t.col
    GROUP BY t.target, r.row
),
per_target AS (
    SELECT target, list(p_row ORDER BY row) AS p FROM tdense GROUP BY target
),
leaf_index AS (
    SELECT col, benchmark, (dense_rank() OVER (ORDER BY benchmark, subdir) - 1)::INTEGER AS leaf FROM cols
),
collapsed AS (
    SELECT [r.row, c.col] AS cell
    FROM collapsed_scores AS z
    JOIN rows AS r USING (model)
    JOIN cols AS c USING (benchmark, subdir, instance_id)
)
SELECT
    (SELECT list(x_row ORDER BY row) FROM dense)              AS x,
    (SELECT list(p ORDER BY target) FROM per_target)          AS p,
    (SELECT list(target ORDER BY target) FROM per_target)     AS targets,
    (SELECT list(model ORDER BY row) FROM rows)               AS models,
    (SELECT list(leaf ORDER BY col) FROM leaf_index)          AS leaves,
    (SELECT list(benchmark ORDER BY leaf) FROM (SELECT DISTINCT leaf, benchmark FROM leaf_index)) AS leaf_benchmarks,
    -- never NULL: a UDF called with a NULL argument is skipped and returns NULL
    coalesce((SELECT list(cell ORDER BY cell) FROM collapsed), []::INTEGER[][]) AS collapsed;
