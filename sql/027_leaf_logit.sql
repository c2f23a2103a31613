-- A source leaf mean on the logit scale, clipped to [2%, 98%] first: a leaf mean of 0 or 1 carries no
-- more information than 2% / 98% (models/default/ability.py fits the ability scale on the same features, EPS).
-- Used by source_ability and by the ability part of predictions.
CREATE OR REPLACE MACRO leaf_logit(p) AS
    ln(least(greatest(p, 0.02), 0.98) / (1 - least(greatest(p, 0.02), 0.98)));
