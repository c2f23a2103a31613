-- The person grid of an anchor fit: every point an ability theta (training models' spread = 1) and a slip
-- rate (the share of items a model fails whatever their difficulty), with the learnt weight of its slip
-- level; and what every item together gives there (model-independent, so a model's estimate reads only
-- its own anchors):
--   expected_total  sum over the target's items of the solve probability at this point
--   noise_total     sum over the items of p (1 - p): the variance the unrun items' outcomes add
CREATE TABLE IF NOT EXISTS anchor_grid (
    fit_id          VARCHAR NOT NULL,
    target          VARCHAR NOT NULL,
    point           INTEGER NOT NULL,
    theta           DOUBLE NOT NULL,
    slip            DOUBLE NOT NULL,
    slip_weight     DOUBLE NOT NULL,
    expected_total  DOUBLE NOT NULL,
    noise_total     DOUBLE NOT NULL,
    PRIMARY KEY (fit_id, target, point)
);
