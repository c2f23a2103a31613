-- Per target: its instance columns (target_instances: the union of ids over the models with source
-- rows), sorted as strings. `tgt` restricts to those targets (NULL: every benchmark whose role is 'target').
CREATE OR REPLACE MACRO target_columns(tgt) AS TABLE
SELECT
    target, subdir, instance_id,
    (row_number() OVER (PARTITION BY target ORDER BY subdir, instance_id) - 1)::INTEGER AS col
FROM target_instances
WHERE tgt IS NULL OR list_contains(tgt, target);
