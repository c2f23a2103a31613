-- The known models in matrix row order (byte-wise name order, as the published model list).
CREATE OR REPLACE MACRO model_rows() AS TABLE
SELECT model, (row_number() OVER (ORDER BY model) - 1)::INTEGER AS row
FROM models WHERE known;
