-- Linear interpolation at q between the points (c0, v0) and (c1, v1) that bracket it; the one point
-- there is when q lies beyond either end (numpy.interp's rule).
CREATE OR REPLACE MACRO anchor_interp(q, c0, v0, c1, v1) AS
    CASE WHEN c0 IS NULL THEN v1
         WHEN c1 IS NULL OR c1 <= c0 THEN v0
         ELSE v0 + (q - c0) * (v1 - v0) / (c1 - c0) END;
