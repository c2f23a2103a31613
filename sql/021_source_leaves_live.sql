-- The rule for the stored table source_leaves (023_source_leaves.sql): per source leaf, how many instances it has (the
-- union of ids over every model). It costs a scan of every source row; the table holds its rows, kept
-- equal to it by every write together with collapsed_cells (ingest.collapsed), and is what model_sources
-- reads, so that a prediction for one model does not count every model's rows.
CREATE OR REPLACE VIEW source_leaves_live AS
SELECT s.benchmark, s.subdir, count(DISTINCT s.instance_id) AS n_instances
FROM scores AS s
SEMI JOIN benchmarks AS b ON b.benchmark = s.benchmark AND b.role = 'source'
GROUP BY ALL;
