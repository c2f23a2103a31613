-- The family of every known model: model_families if set there, else the leading letters of its name.
CREATE OR REPLACE VIEW model_family AS
SELECT m.model,
       coalesce(f.family, nullif(regexp_extract(m.model, '^[A-Za-z]+'), ''), m.model) AS family,
       f.family IS NOT NULL AS explicit
FROM models AS m
LEFT JOIN model_families AS f USING (model)
WHERE m.known;
