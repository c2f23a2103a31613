-- The rule for proxy_leaves.level: per leaf of a fit's ability scale, the mean centre of its instances
-- (proxy_ability_instances). Whoever writes a fit's ability scale fills the stored column from here
-- (warehouse.storing.fill_fit_constants; a migration fills it for fits stored before the column existed), so
-- that fit_predictions reads one number per leaf instead of averaging every instance centre on each lookup.
CREATE OR REPLACE VIEW proxy_leaf_levels_live AS
SELECT fit_id, benchmark, subdir, avg(centre) AS level
FROM proxy_ability_instances
GROUP BY ALL;
