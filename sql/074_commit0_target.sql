-- commit0 became a target (per-instance results arrive with `pace import openhands-index`). A warehouse
-- seeded before that holds the old default 'excluded': turn it into 'target' once, and only when no
-- commit0 rows were ingested meanwhile (a role chosen with data in hand is left alone). pace_meta's
-- 'commit0_target' records that this ran, so a role set later with `pace benchmarks set` stays.
UPDATE benchmarks SET role = 'target'
WHERE benchmark = 'commit0' AND role = 'excluded'
  AND NOT EXISTS (SELECT 1 FROM pace_meta WHERE key = 'commit0_target')
  AND NOT EXISTS (SELECT 1 FROM scores WHERE benchmark = 'commit0');
INSERT OR IGNORE INTO pace_meta VALUES ('commit0_target', 'done');
