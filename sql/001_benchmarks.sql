-- Role of each benchmark: 'target' (agentic, predicted), 'source' (cheap, selected from),
-- 'excluded' (never used). Seeded with the published roles; ingest adds unseen benchmarks
-- as 'source'. Change a role with `pace benchmarks set NAME ROLE`.
CREATE TABLE IF NOT EXISTS benchmarks (
    benchmark VARCHAR PRIMARY KEY,
    role      VARCHAR NOT NULL CHECK (role IN ('target', 'source', 'excluded'))
);

INSERT INTO benchmarks
SELECT * FROM (VALUES
    ('gaia', 'target'),
    ('swebench', 'target'),
    ('swebench_multimodal', 'target'),
    ('swtbench', 'target'),
    ('commit0', 'excluded'),
    ('swebench_bash_only', 'excluded')
) AS seed(benchmark, role)
WHERE NOT EXISTS (SELECT 1 FROM benchmarks);
