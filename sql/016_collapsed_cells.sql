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
-- rows cost two scans and little memory.
CREATE OR REPLACE VIEW collapsed_cells AS
WITH src AS NOT MATERIALIZED (
    SELECT s.model, s.benchmark, s.subdir, s.instance_id, s.score,
           coalesce(regexp_extract(s.instance_id, '_([A-Za-z][A-Za-z-]*)$', 1), '') AS suffix
    FROM scores AS s SEMI JOIN benchmarks AS b ON b.benchmark = s.benchmark AND b.role = 'source'
),
per_suffix AS (    -- per model, leaf and suffix: the usable scores
    SELECT model, benchmark, subdir, suffix, count(*) AS n_rows, sum(score) AS score_sum, max(score) AS max_score
    FROM src WHERE score IS NOT NULL
    GROUP BY ALL
),
suffix_ids AS (    -- per leaf and suffix: the instances (any model, any score)
    SELECT benchmark, subdir, suffix, count(DISTINCT instance_id) AS n
    FROM src GROUP BY ALL
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
-- is quadratic: 43 M pairs at 1,000 models): sort the cell's means once; leaving out the model's own
-- mean (at 0-based rank r) shifts the entries above it down by one, so the k-th remaining entry is
-- sorted[k] below r and sorted[k + 1] from r on (lists are 1-based). Ties do not matter: leaving out
-- any of equal means leaves the same values. Even counts average the two middle entries (as median).
ranked AS (
    SELECT *, row_number() OVER (PARTITION BY benchmark, subdir, facet ORDER BY mean) - 1 AS r
    FROM cells
),
sorted AS (
    SELECT benchmark, subdir, facet, list(mean ORDER BY mean) AS means, count(*) AS n
    FROM cells GROUP BY ALL
),
others AS (
    SELECT c.model, c.benchmark, c.subdir, c.facet, s.n - 1 AS n_others,
           CASE WHEN s.n < 2 THEN NULL
                WHEN (s.n - 1) % 2 = 1
                THEN CASE WHEN (s.n - 2) // 2 < c.r THEN s.means[(s.n - 2) // 2 + 1] ELSE s.means[(s.n - 2) // 2 + 2] END
                ELSE (CASE WHEN (s.n - 1) // 2 - 1 < c.r THEN s.means[(s.n - 1) // 2] ELSE s.means[(s.n - 1) // 2 + 1] END
                      + CASE WHEN (s.n - 1) // 2 < c.r THEN s.means[(s.n - 1) // 2 + 1]
                             ELSE s.means[(s.n - 1) // 2 + 2] END) / 2
           END AS others_median
    FROM ranked AS c JOIN sorted AS s USING (benchmark, subdir, facet)
)
SELECT c.model, c.benchmark, c.subdir, c.facet, c.n_rows, z.n_instances, c.mean, o.others_median,
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
