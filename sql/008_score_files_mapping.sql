-- Score files that `pace import lm-eval|inspect` made from a harness's own output (layout
-- 'lm-eval samples' or 'inspect log'): the map entry that turned the file into rows, as JSON
-- (task, benchmark, subdir, metric, id, ...). An unchanged file under a changed map entry is read
-- again; NULL for the CSV files of a results tree.
ALTER TABLE score_files ADD COLUMN IF NOT EXISTS mapping VARCHAR;
