-- A fold's models in matrix row order: the known models not in `fold_held_out` (they train) in byte-wise
-- name order, then the held-out ones (only predicted). `fold_held_out` is eval_folds.held_out ([] = none).
--   SELECT * FROM fold_models(['Orrin-5.0']);
CREATE OR REPLACE MACRO fold_models(fold_held_out) AS TABLE
SELECT r.model, h.model IS NOT NULL AS held_out,
       (row_number() OVER (ORDER BY h.model IS NOT NULL, r.row) - 1)::INTEGER AS row
FROM model_rows() AS r
LEFT JOIN (SELECT unnest(fold_held_out) AS model) AS h USING (model);
