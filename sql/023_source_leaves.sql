-- Per source leaf: its instances (the union of ids over every model). The rows of the rule
-- source_leaves_live (021_source_leaves_live.sql), stored and recomputed with collapsed_cells by every write of scores or
-- roles (ingest.collapsed); `pace doctor` compares the two.
CREATE TABLE IF NOT EXISTS source_leaves (
    benchmark    VARCHAR NOT NULL,
    subdir       VARCHAR NOT NULL,
    n_instances  BIGINT NOT NULL,
    PRIMARY KEY (benchmark, subdir)
);
