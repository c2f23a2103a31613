-- A fold's source scores as sparse cells (row = fold_models row, col = source_columns(src) col); a missing
-- or NULL score has no cell. What every evaluation and fit reads (fold [] once), streamed at any size.
--   SELECT count(*) FROM fold_cells([], NULL);
CREATE OR REPLACE MACRO fold_cells(fold_held_out, src) AS TABLE
SELECT r.row, c.col, s.score
FROM scores AS s
JOIN fold_models(fold_held_out) AS r USING (model)
JOIN source_columns(src) AS c USING (benchmark, subdir, instance_id)
WHERE s.score IS NOT NULL;
