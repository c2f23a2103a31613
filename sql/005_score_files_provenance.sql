-- Where each ingested file came from and how its repeated ids were handled.
--   tree             the results tree (absolute folder) the file was ingested from; "disappeared"
--                    and --prune only ever look at files of the tree being ingested. NULL: ingested
--                    before trees were recorded (adopted by the next tree that holds the same path)
--   synthetic        the tree carries the SYNTHETIC marker of `pace demo-data` (made-up scores);
--                    a warehouse never mixes synthetic and real files
--   duplicates       which row of a repeated id was kept: 'first' (published) or 'last'
--   n_runs           k > 1: the file holds k whole runs over the same ids (run_means: their means)
--   conflicting_ids  ids repeated with different scores
ALTER TABLE score_files ADD COLUMN IF NOT EXISTS tree VARCHAR;
ALTER TABLE score_files ADD COLUMN IF NOT EXISTS synthetic BOOLEAN;
ALTER TABLE score_files ADD COLUMN IF NOT EXISTS duplicates VARCHAR;
ALTER TABLE score_files ADD COLUMN IF NOT EXISTS n_runs INTEGER;
ALTER TABLE score_files ADD COLUMN IF NOT EXISTS run_means DOUBLE[];
ALTER TABLE score_files ADD COLUMN IF NOT EXISTS conflicting_ids VARCHAR[];
