-- What each lake partition held when pace last wrote it: its Parquet files (name, size and modification
-- time, as JSON) and the row count and content fingerprint of `scores` it was written from. While
-- the files on disk are those, the partition holds those rows, so `pace status` and `pace doctor
-- --check` compare fingerprints without reading the lake (ingest.lake.lake_drift, stored=True); a
-- partition whose files differ is read.
CREATE TABLE IF NOT EXISTS lake_partitions (
    benchmark    VARCHAR PRIMARY KEY,
    files        VARCHAR NOT NULL,
    n_rows       BIGINT NOT NULL,
    fingerprint  HUGEINT
);
