-- A fold's layout, without its cells: what a reader of
-- the cells fold_cells / fold_target_cells needs to place them.
--   models VARCHAR[] (training models, then the held-out ones), n_train, n_cols (= source_columns(src)),
--   targets VARCHAR[] (alphabetical) and t_cols INTEGER[] (instance columns per target), leaves INTEGER[]
--   (leaf index of each source column) and leaf_benchmarks VARCHAR[], collapsed INTEGER[][] ([row, col]
--   of the source cells in collapsed cells).
-- Example: SELECT n_train, len(models), n_cols, targets FROM fold_layout(['Orrin-5.0'], NULL, NULL);
CREATE OR REPLACE MACRO fold_layout(fold_held_out, src, tgt) AS TABLE
WITH
rows AS (FROM fold_models(fold_held_out)),
cols AS (FROM source_columns(src)),
tnames AS (
    SELECT target, (row_number() OVER (ORDER BY target) - 1)::INTEGER AS t, count(*)::INTEGER AS n
    FROM target_columns(tgt) GROUP BY target
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
    (SELECT list(model ORDER BY row) FROM rows) AS models,
    (SELECT count(*) FILTER (WHERE NOT held_out) FROM rows)::INTEGER AS n_train,
    (SELECT count(*) FROM cols)::INTEGER AS n_cols,
    coalesce((SELECT list(target ORDER BY t) FROM tnames), []::VARCHAR[]) AS targets,
    coalesce((SELECT list(n ORDER BY t) FROM tnames), []::INTEGER[]) AS t_cols,
    coalesce((SELECT list(leaf ORDER BY col) FROM leaf_index), []::INTEGER[]) AS leaves,
    coalesce((SELECT list(benchmark ORDER BY leaf) FROM (SELECT DISTINCT leaf, benchmark FROM leaf_index)),
             []::VARCHAR[]) AS leaf_benchmarks,
    coalesce((SELECT list(cell ORDER BY cell) FROM collapsed), []::INTEGER[][]) AS collapsed;
