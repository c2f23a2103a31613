-- Each model's release date, where one is known: the one a user set (model_metadata_set) wins, else the
-- earliest date of its index metadata (model_metadata, every agent harness: the date is the model's).
-- `pace fit` stores the training models' earliest and latest (proxy_fits.released_lo / released_hi) and
-- fit_predictions compares a model's date with them (the era check of the out-of-range verdict).
--   release_source   'user' (pace metadata set) or the index's source ('openhands-index')
CREATE OR REPLACE VIEW model_release AS
WITH indexed AS (
    SELECT model, min(release_date) AS release_date, min(source) AS release_source
    FROM model_metadata
    WHERE release_date IS NOT NULL
    GROUP BY model
)
SELECT coalesce(u.model, i.model)                                          AS model,
       coalesce(u.release_date, i.release_date)                            AS release_date,
       CASE WHEN u.release_date IS NOT NULL THEN 'user' ELSE i.release_source END AS release_source
FROM (SELECT * FROM model_metadata_set WHERE release_date IS NOT NULL) AS u
FULL OUTER JOIN indexed AS i ON i.model = u.model;
