-- The folds of an evaluation split, one row per (fold, target): the models the fold holds out (they are
-- predicted; every other known model may train) and the target. Split 'all' has the single fold 'all'
-- holding nothing out: the fit `pace fit` stores. `tgt` restricts the targets (NULL: role 'target').
--   SELECT * FROM eval_folds('family', NULL);
CREATE OR REPLACE MACRO eval_folds(split_name, tgt) AS TABLE
WITH
targets AS (
    SELECT benchmark AS target FROM benchmarks
    WHERE (tgt IS NULL AND role = 'target') OR list_contains(tgt, benchmark)
),
held AS (
    SELECT split, fold, list(model ORDER BY model) AS held_out
    FROM split_folds(split_name)
    GROUP BY ALL
),
folds AS (
    SELECT split, fold, held_out FROM held
    UNION ALL
    SELECT 'all', 'all', []::VARCHAR[] WHERE split_name = 'all'
)
SELECT f.split, f.fold, f.held_out, t.target
FROM folds AS f CROSS JOIN targets AS t;
