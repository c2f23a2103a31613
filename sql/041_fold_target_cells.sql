-- A fold's target scores as sparse cells: t indexes the targets (alphabetical) of target_columns(tgt), row
-- the fold_models rows, col the target's instance column. Read with fold_cells.
--   SELECT t, count(*) FROM fold_target_cells([], NULL) GROUP BY t;
CREATE OR REPLACE MACRO fold_target_cells(fold_held_out, tgt) AS TABLE
WITH tcols AS (FROM target_columns(tgt))
SELECT (dense_rank() OVER (ORDER BY tc.target) - 1)::INTEGER AS t, r.row, tc.col, s.score
FROM scores AS s
JOIN fold_models(fold_held_out) AS r USING (model)
JOIN tcols AS tc ON tc.target = s.benchmark AND tc.subdir = s.subdir AND tc.instance_id = s.instance_id
WHERE s.score IS NOT NULL;
