-- The instance set of every target (published semantics, spec §2.2: the union of instance ids over the
-- models of the target): the ids that models with source rows (models.known, the model list the
-- source-based methods fit on) have rows for. It is the denominator of target_means.mean and the columns
-- of target_columns. A target that no such model has rows on takes the union over every model. So
-- models with agentic results only (an OpenHands Index import) never change what the Pace models are
-- scored on, while their own target means are still defined.
CREATE OR REPLACE VIEW target_instances AS
WITH target_rows AS (
    SELECT s.benchmark AS target, s.subdir, s.instance_id, m.known
    FROM scores AS s
    JOIN benchmarks AS b ON b.benchmark = s.benchmark AND b.role = 'target'
    JOIN models AS m ON m.model = s.model
),
per_target AS (
    SELECT target, bool_or(known) AS any_known FROM target_rows GROUP BY target
)
SELECT DISTINCT r.target, r.subdir, r.instance_id
FROM target_rows AS r
JOIN per_target AS p ON p.target = r.target
WHERE r.known OR NOT p.any_known;
