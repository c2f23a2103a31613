-- Target instances that two sources both have for a model and score differently (e.g. a Pace file and
-- the OpenHands Index run of the same model: a re-run, another agent version), one row per instance,
-- with the source the views use (used). Change it with `pace import openhands-index DIR --prefer ...`.
--   pace_score, openhands_index_score   the two sources' scores (NULL: no usable score)
CREATE OR REPLACE VIEW source_disagreements AS
SELECT model, target, subdir, instance_id,
       max(CASE WHEN source = 'pace' THEN score END)             AS pace_score,
       max(CASE WHEN source = 'openhands-index' THEN score END)  AS openhands_index_score,
       max(CASE WHEN in_use THEN source END)                     AS used
FROM target_rows_by_source
GROUP BY model, target, subdir, instance_id
HAVING count(DISTINCT source) > 1
   AND max(CASE WHEN source = 'pace' THEN score END)
       IS DISTINCT FROM max(CASE WHEN source = 'openhands-index' THEN score END);
