-- The score rows inside collapsed cells (collapsed_cells), one per (model, benchmark, subdir,
-- instance_id): what the ability model and the default method's ability leave out.
CREATE OR REPLACE VIEW collapsed_scores AS
SELECT s.model, s.benchmark, s.subdir, s.instance_id
FROM scores AS s
JOIN collapsed_cells AS c
  ON c.model = s.model AND c.benchmark = s.benchmark AND c.subdir = s.subdir
 AND (c.facet = '' OR coalesce(regexp_extract(s.instance_id, '_([A-Za-z][A-Za-z-]*)$', 1), '') = c.facet);
