-- Facts about this warehouse file itself, as key/value text:
--   schema  fingerprint of the sql/ files last applied (a read-only open checks it: an older file
--           must be migrated by any write command or `pace doctor` first)
--   lake    the Parquet lake folder this warehouse keeps in step with `scores`
--   collapsed_cells  fingerprint of the rule (sql/016) the stored collapsed_cells were computed by;
--           absent while a writer may have left them out of date (ingest.collapsed)
CREATE TABLE IF NOT EXISTS pace_meta (
    key    VARCHAR PRIMARY KEY,
    value  VARCHAR NOT NULL
);
