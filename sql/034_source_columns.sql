-- The source instance columns a proxy may select from, in the published column order
-- (benchmark, subdir, instance_id sorted as strings). `src` restricts to those benchmarks (NULL: all).
CREATE OR REPLACE MACRO source_columns(src) AS TABLE
SELECT
    benchmark, subdir, instance_id,
    (row_number() OVER (ORDER BY benchmark, subdir, instance_id) - 1)::INTEGER AS col
FROM (
    SELECT DISTINCT s.benchmark, s.subdir, s.instance_id
    FROM scores AS s JOIN benchmarks AS b USING (benchmark)
    WHERE b.role = 'source' AND (src IS NULL OR list_contains(src, s.benchmark))
);
