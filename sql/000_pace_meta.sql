-- Facts about this warehouse file itself, as key/value text:
--   schema  fingerprint of the sql/ files last applied (a read-only open checks it: an older file
--           must be migrated by any write command or `pace doctor` first)
--   lake    the Parquet lake folder this warehouse keeps in step with `scores`
CREATE TABLE IF NOT EXISTS pace_meta (
    key    VARCHAR PRIMARY KEY,
    value  VARCHAR NOT NULL
);
