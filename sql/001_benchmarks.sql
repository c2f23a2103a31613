-- Role of each benchmark: 'target' (agentic, predicted), 'source' (cheap, selected from),
-- 'excluded' (never used). Seeded with the published roles, except commit0, a target since the
-- OpenHands Index brings per-instance results for it (074_commit0_target.sql turns an older warehouse's seeded
-- 'excluded' into 'target' once); ingest adds unseen benchmarks as 'source', `pace import
-- openhands-index` its agentic ones as 'target'. Change a role with `pace benchmarks set NAME ROLE`.
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
    ('commit0', 'target'),
    ('swebench_bash_only', 'excluded')
) AS seed(benchmark, role)
WHERE NOT EXISTS (SELECT 1 FROM benchmarks);
