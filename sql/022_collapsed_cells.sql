-- Source cells that look like a harness or answer-format failure rather than ability (a model at ~0 on a
-- cell the other models mostly solve, or a file listing only failed instances): the rows of the rule
-- collapsed_cells_live (020_collapsed_cells_live.sql, where the rule is explained), stored. Every write of scores or roles
-- recomputes it, in the writer's own transaction where there is one (ingest.collapsed); `pace doctor`
-- compares the two and recomputes it. Stored so that predictions and the ability read a few thousand rows
-- instead of every source row on each query.
--   reason   'near_zero' or 'failures_only' (see collapsed_cells_live)
CREATE TABLE IF NOT EXISTS collapsed_cells (
    model          VARCHAR NOT NULL,
    benchmark      VARCHAR NOT NULL,
    subdir         VARCHAR NOT NULL,
    facet          VARCHAR NOT NULL,       -- '' for the whole leaf, else the id suffix of one facet
    n_rows         BIGINT NOT NULL,        -- the model's scored rows in the cell
    n_instances    BIGINT NOT NULL,        -- the cell's instances (any model)
    mean           DOUBLE,                 -- the model's mean score in the cell
    others_median  DOUBLE,                 -- the median of the other models' means (NULL: fewer than 2)
    reason         VARCHAR NOT NULL,
    PRIMARY KEY (model, benchmark, subdir, facet)
);
