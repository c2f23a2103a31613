-- One fold's matrices, as one row of sparse (row, col, value) cells: its layout (fold_layout) plus the
-- cells (fold_cells and fold_target_cells are the same in long form). The selection view reads it.
-- Only the scores of the fold's models are read; nothing is dense and no row holds another fold.
--   models      VARCHAR[]   the fold's training models (every known model not held out), then the held-out
--                           ones; rows 0 .. n_train-1 train, the rest are only predicted (their targets are
--                           read to score the prediction, never to fit)
--   n_train     INTEGER
--   n_cols      INTEGER     source columns = source_columns(src).col
--   x           STRUCT(r, c, v)[]   source scores (NULL scores left out: missing)
--   targets     VARCHAR[]   alphabetical; t_cols INTEGER[] instance columns per target
--   p           STRUCT(t, r, c, v)[] target scores, t indexing targets, c target_columns(tgt).col
--   leaves      INTEGER[]   per source column, its leaf (benchmark, subdir) index; leaf_benchmarks VARCHAR[]
--   collapsed   INTEGER[][] [row, col] of source cells in collapsed cells (collapsed_scores)
-- `fold_held_out` is a fold's list of held-out models (eval_folds.held_out; [] for the fold 'all').
-- Example: SELECT n_train, len(models), n_cols, len(x) FROM fold_matrix(['Orrin-5.0'], NULL, NULL);
CREATE OR REPLACE MACRO fold_matrix(fold_held_out, src, tgt) AS TABLE
WITH
rows AS (FROM fold_models(fold_held_out)),
cols AS (FROM source_columns(src)),
cells AS (      -- fold_cells, written out so that rows and cols are computed once
    SELECT {'r': r.row, 'c': c.col, 'v': s.score} AS cell
    FROM scores AS s
    JOIN rows AS r USING (model)
    JOIN cols AS c USING (benchmark, subdir, instance_id)
    WHERE s.score IS NOT NULL
),
tcols AS (FROM target_columns(tgt)),
tnames AS (
    SELECT target, (row_number() OVER (ORDER BY target) - 1)::INTEGER AS t FROM tcols GROUP BY target
),
tcells AS (     -- fold_target_cells, likewise
    SELECT {'t': n.t, 'r': r.row, 'c': tc.col, 'v': s.score} AS cell
    FROM scores AS s
    JOIN rows AS r USING (model)
    JOIN tcols AS tc ON tc.target = s.benchmark AND tc.subdir = s.subdir AND tc.instance_id = s.instance_id
    JOIN tnames AS n ON n.target = tc.target
    WHERE s.score IS NOT NULL
)
SELECT l.models, l.n_train, l.n_cols,
       coalesce((SELECT list(cell) FROM cells), []) AS x,
       l.targets, l.t_cols,
       coalesce((SELECT list(cell) FROM tcells), []) AS p,
       l.leaves, l.leaf_benchmarks, l.collapsed
FROM fold_layout(fold_held_out, src, tgt) AS l;
