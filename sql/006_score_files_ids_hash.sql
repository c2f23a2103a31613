-- An order-free fingerprint of the set of instance ids a file's kept rows hold: the sum of their
-- hashes modulo 2^64 (ingest.bulk.IDS_HASH). Two files of a leaf with equal row counts and equal
-- fingerprints hold the same ids, so the anomaly report compares id sets per file instead of per
-- row; NULL (ingested before it was recorded) makes the report count the leaf's ids row by row.
ALTER TABLE score_files ADD COLUMN IF NOT EXISTS ids_hash UBIGINT;
