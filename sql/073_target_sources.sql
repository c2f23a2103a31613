-- Per model, target and source: how many rows that source has and their mean, and whether it is the one
-- the views use (in_use; the preference rule: agentic_preference, default 'pace'). A model with rows from
-- one source only has one row per target here.
--   n_rows, n_scored   rows, and rows with a usable score
--   mean_observed      mean over the source's scored rows
CREATE OR REPLACE VIEW target_sources AS
SELECT model, target, source,
       count(*)          AS n_rows,
       count(score)      AS n_scored,
       avg(score)        AS mean_observed,
       bool_or(in_use)   AS in_use
FROM target_rows_by_source
GROUP BY model, target, source;
