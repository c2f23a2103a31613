-- The rule for collapsed source cells, worked out from `scores` on every query. The table
-- collapsed_cells holds its rows, kept equal to it by every write (ingest.collapsed), and is what pace
-- reads; this view is the definition (`pace doctor` compares the two) and costs two scans of every source
-- row, so query collapsed_cells instead.
-- Source cells that look like a harness or answer-format failure rather than ability: a model scores
-- (almost) nothing on a cell that the other models mostly solve. A cell is a leaf (benchmark, subdir),
-- or a facet of it when the leaf's instance ids carry a small set of alphabetic suffixes (logiqa's
-- `<n>_strict-match` / `<n>_flexible-extract`: one answer filter can fail while the other works).
--   reason 'near_zero'      the model's mean is <= 0.05 while the other models' median is >= 0.15, and
--                           either the model does the benchmark's other cells (their mean >= 0.15) or
--                           it scores near zero on every cell of the benchmark (the whole benchmark
--                           failed); a model that is weak across a benchmark is weak, not collapsed
--          'failures_only'  every listed score is 0 and the file lists < 90% of the cell's instances
--                           (upstream bfcl files that list only the failed instances)
-- The ability model (source_ability, the default method) treats these cells as missing; compat keeps
-- the published zeros. Ingest reports them as anomalies.
-- The score rows are read in two aggregations (per model, leaf and suffix; per leaf and suffix: distinct
-- ids, an id having one suffix); everything after works on those few thousand rows, so 10^8 score
-- rows cost two scans and little memory. (Each aggregation reads `scores` itself: a CTE read twice
-- would be materialised, all 10^8 rows of it.)
CREATE OR REPLACE VIEW collapsed_cells_live AS
WITH per_suffix AS (    -- per model, source leaf and suffix: the usable scores
    SELECT s.model, s.benchmark, s.subdir,
           coalesce(regexp_extract(s.instance_id, '_([A-Za-z][A-Za-z-]*)$', 1), '') AS suffix,
           count(*) AS n_rows, sum(s.score) AS score_sum, max(s.score) AS max_score
    FROM scores AS s SEMI JOIN benchmarks AS b ON b.benchmark = s.benchmark AND b.role = 'source'
    WHERE s.score IS NOT NULL
    GROUP BY ALL
),
suffix_ids AS (    -- per source leaf and suffix: the instances (any model, any score)
    SELECT s.benchmark, s.subdir,
           coalesce(regexp_extract(s.instance_id, '_([A-Za-z][A-Za-z-]*)$', 1), '') AS suffix,
           count(DISTINCT s.instance_id) AS n
    FROM scores AS s SEMI JOIN benchmarks AS b ON b.benchmark = s.benchmark AND b.role = 'source'
    GROUP BY ALL
),
suffixes AS (      -- leaves whose ids split into 2-8 alphabetic suffixes, each >= 10% of the ids
    SELECT benchmark, subdir
    FROM (SELECT *, sum(n) OVER (PARTITION BY benchmark, subdir) AS total FROM suffix_ids)
    GROUP BY benchmark, subdir
    HAVING count(*) BETWEEN 2 AND 8 AND min(n) >= 0.1 * any_value(total) AND min(length(suffix)) > 0
),
cells AS (
    SELECT p.model, p.benchmark, p.subdir, CASE WHEN f.benchmark IS NOT NULL THEN p.suffix ELSE '' END AS facet,
           sum(p.n_rows) AS n_rows, sum(p.score_sum) / sum(p.n_rows) AS mean, max(p.max_score) AS max_score
    FROM per_suffix AS p LEFT JOIN suffixes AS f USING (benchmark, subdir)
    GROUP BY ALL
),
cell_sizes AS (
    SELECT i.benchmark, i.subdir, CASE WHEN f.benchmark IS NOT NULL THEN i.suffix ELSE '' END AS facet,
           sum(i.n) AS n_instances
    FROM suffix_ids AS i LEFT JOIN suffixes AS f USING (benchmark, subdir)
    GROUP BY ALL
),
siblings AS (
    SELECT model, benchmark, count(*) AS n_cells, count(*) FILTER (WHERE mean <= 0.05) AS n_near_zero,
           sum(mean) AS mean_sum
    FROM cells GROUP BY ALL
),
-- The median of the other models' means, per cell, without pairing every model with every other (that
-- is quadratic: 43 M pairs at 1,000 models): rank the cell's n means once (0-based rank r); the other
-- n - 1 means in order are the ranked ones with the model's own left out, so their p-th is the one
-- ranked p below r and p + 1 from r on. Their median is the mean of positions lo and hi (equal for
-- an odd count). Ties do not matter: leaving out any of equal means leaves the same values.
ranked AS (
    SELECT *, row_number() OVER (PARTITION BY benchmark, subdir, facet ORDER BY mean) - 1 AS r,
           count(*) OVER (PARTITION BY benchmark, subdir, facet) AS n
    FROM cells
),
wanted AS (
    SELECT model, benchmark, subdir, facet, r, n, floor((n - 2) / 2) AS lo, floor((n - 1) / 2) AS hi
    FROM ranked
),
others AS (
    SELECT w.model, w.benchmark, w.subdir, w.facet, w.n - 1 AS n_others,
           CASE WHEN w.n >= 2 THEN (a.mean + b.mean) / 2 END AS others_median
    FROM wanted AS w
    LEFT JOIN ranked AS a ON a.benchmark = w.benchmark AND a.subdir = w.subdir AND a.facet = w.facet
                         AND a.r = w.lo + CASE WHEN w.lo >= w.r THEN 1 ELSE 0 END
    LEFT JOIN ranked AS b ON b.benchmark = w.benchmark AND b.subdir = w.subdir AND b.facet = w.facet
                         AND b.r = w.hi + CASE WHEN w.hi >= w.r THEN 1 ELSE 0 END
)
SELECT c.model, c.benchmark, c.subdir, c.facet, c.n_rows::BIGINT AS n_rows, z.n_instances::BIGINT AS n_instances,
       c.mean, o.others_median,
       CASE WHEN c.max_score = 0 AND c.n_rows < 0.9 * z.n_instances THEN 'failures_only'
            ELSE 'near_zero' END AS reason
FROM cells AS c
JOIN cell_sizes AS z USING (benchmark, subdir, facet)
JOIN siblings AS g USING (model, benchmark)
LEFT JOIN others AS o USING (model, benchmark, subdir, facet)
WHERE (c.mean <= 0.05 AND o.others_median >= 0.15 AND o.n_others >= 2
       AND (g.n_near_zero = g.n_cells
            OR (g.mean_sum - c.mean) / greatest(g.n_cells - 1, 1) >= 0.15))
   OR (c.max_score = 0 AND c.n_rows < 0.9 * z.n_instances);
