-- Per model, a fingerprint of everything its rows of `predictions` are computed from: its own score rows,
-- its own rows of the small per-model tables the prediction reads (collapsed cells, metadata, a set release
-- date, a hold, metadata priors of the anchor fits), and the rows every model's prediction shares (every
-- proxy fit and anchor fit, as their whole rows: a fit's weights, leaves, items and grid are written with
-- its row and keyed by its fit_id; the benchmark roles; the source leaves). Equal fingerprints, equal
-- inputs: stored_predictions keeps each model's rows with the fingerprint they were computed at, and a
-- lookup serves them only while it still holds. A filter on model reaches every scan, so one model's
-- fingerprint reads its own rows (a sum of row hashes: no order, any number of rows).
--   fingerprint  hash of (the model's row count and row-hash sum, its facts' hash sum, the shared hash)
CREATE OR REPLACE VIEW prediction_inputs AS
WITH own_rows AS (     -- one read of each per-model table, stacked: a filter on model reaches each of them
    SELECT s.model, 1 AS is_score, hash(s.benchmark, s.subdir, r.instance_id, r.score) AS h
    FROM score_rows AS r JOIN score_sources AS s USING (source_id)
    UNION ALL SELECT model, 0, hash('collapsed', c) FROM collapsed_cells AS c
    UNION ALL SELECT model, 0, hash('metadata', m) FROM model_metadata AS m
    UNION ALL SELECT model, 0, hash('release', d) FROM model_metadata_set AS d
    UNION ALL SELECT model, 0, hash('hold', h) FROM model_holds AS h
    UNION ALL SELECT model, 0, hash('prior', p) FROM anchor_priors AS p
),
shared AS (            -- a handful of rows each
    SELECT hash((SELECT sum(hash(f)::HUGEINT) FROM proxy_fits AS f),
                (SELECT sum(hash(a)::HUGEINT) FROM anchor_fits AS a),
                (SELECT sum(hash(b)::HUGEINT) FROM benchmarks AS b),
                (SELECT sum(hash(l)::HUGEINT) FROM source_leaves AS l)) AS h
)
SELECT o.model,
       hash(sum(o.is_score), sum(o.h::HUGEINT) FILTER (WHERE o.is_score = 1),
            sum(o.h::HUGEINT) FILTER (WHERE o.is_score = 0), any_value(s.h)) AS fingerprint
FROM own_rows AS o CROSS JOIN shared AS s
GROUP BY o.model;
