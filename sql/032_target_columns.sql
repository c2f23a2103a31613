-- Per target: its instance columns (the union of ids over models), sorted as strings.
-- `tgt` restricts to those targets (NULL: every benchmark whose role is 'target').
CREATE OR REPLACE MACRO target_columns(tgt) AS TABLE
SELECT
    target, subdir, instance_id,
    (row_number() OVER (PARTITION BY target ORDER BY subdir, instance_id) - 1)::INTEGER AS col
FROM (
    SELECT DISTINCT s.benchmark AS target, s.subdir, s.instance_id
    FROM scores AS s JOIN benchmarks AS b USING (benchmark)
    WHERE (tgt IS NULL AND b.role = 'target') OR list_contains(tgt, s.benchmark)
);
