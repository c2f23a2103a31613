-- Facts about this warehouse file itself, as key/value text:
--   schema  fingerprint of the sql/ files last applied (a read-only open checks it: an older file
--           must be migrated by any write command or `pace doctor` first)
--   warehouse  this warehouse's id, made once; its lake carries it in a stamp file
--           (<lake>/.pace-lake.json), so no other warehouse writes or cleans that lake (ingest.lake)
--   lake    the Parquet lake folder this warehouse keeps in step with `scores`
--   collapsed_cells  fingerprint of the rule (collapsed_cells_live) the stored collapsed_cells were computed by;
--           absent while a writer may have left them out of date (ingest.collapsed)
CREATE TABLE IF NOT EXISTS pace_meta (
    key    VARCHAR PRIMARY KEY,
    value  VARCHAR NOT NULL
);

INSERT INTO pace_meta
SELECT 'warehouse', replace(uuid()::VARCHAR, '-', '')
WHERE NOT EXISTS (SELECT 1 FROM pace_meta WHERE key = 'warehouse');
