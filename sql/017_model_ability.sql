-- A model's overall source ability: the mean over source leaves of its mean score in the leaf
-- (each leaf weighs the same, however many instances it has). Used to measure discrimination.
CREATE OR REPLACE VIEW model_ability AS
WITH leaf_means AS (
    SELECT s.model, s.benchmark, s.subdir, avg(s.score) AS leaf_mean
    FROM scores AS s JOIN benchmarks AS b USING (benchmark)
    WHERE b.role = 'source' AND s.score IS NOT NULL
    GROUP BY ALL
)
SELECT model, avg(leaf_mean) AS ability, count(*) AS n_leaves
FROM leaf_means
GROUP BY model;
