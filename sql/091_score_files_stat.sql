-- The size and modification time (ns) of each ingested CSV file when its bytes were read: a file of
-- the same tree with the same size and time is unchanged without being read again (rsync's rule);
-- any other is read and its sha256 decides. NULL for imported files and rows from before they were
-- recorded (those files are hashed on the next ingest, then recorded).
ALTER TABLE score_files ADD COLUMN IF NOT EXISTS size BIGINT;
ALTER TABLE score_files ADD COLUMN IF NOT EXISTS mtime_ns BIGINT;
