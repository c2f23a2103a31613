-- What running one target instance is expected to cost a model (USD), for `pace plan --anchors`: its own
-- cost where the index has it (instance_costs), else the instance's median cost over the models that ran
-- it, scaled by the model's output price against those models' median price (1 when a price is unknown).
--   cost_source  own | scaled | NULL (no model has a cost for the instance)
CREATE OR REPLACE VIEW anchor_costs AS
WITH prices AS (
    SELECT model, any_value(output_price) AS price FROM model_metadata WHERE agent = 'openhands' GROUP BY model
),
costed AS (
    SELECT c.model, c.benchmark, c.instance_id, c.cost, p.price
    FROM instance_costs AS c LEFT JOIN prices AS p USING (model)
    WHERE c.cost IS NOT NULL
),
per_instance AS (
    SELECT benchmark, instance_id, median(cost) AS median_cost, median(price) AS median_price
    FROM costed GROUP BY ALL
),
items AS (
    SELECT DISTINCT i.target AS benchmark, i.subdir, i.instance_id
    FROM anchor_items AS i JOIN current_anchor_fits AS f USING (fit_id, target)
),
candidates AS (
    SELECT m.model, i.benchmark, i.subdir, i.instance_id FROM models AS m CROSS JOIN items AS i
)
SELECT c.model, c.benchmark, c.subdir, c.instance_id,
       coalesce(o.cost, q.median_cost * coalesce(p.price / nullif(q.median_price, 0), 1)) AS expected_cost,
       CASE WHEN o.cost IS NOT NULL THEN 'own' WHEN q.median_cost IS NOT NULL THEN 'scaled' END AS cost_source
FROM candidates AS c
LEFT JOIN costed AS o ON o.model = c.model AND o.benchmark = c.benchmark AND o.instance_id = c.instance_id
LEFT JOIN per_instance AS q ON q.benchmark = c.benchmark AND q.instance_id = c.instance_id
LEFT JOIN prices AS p ON p.model = c.model;
