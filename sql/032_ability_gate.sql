-- The default method's gate: the weight of the ability link, `base` inside the training range, rising
-- linearly to 1 at `width` training standard deviations outside it (models/default/shrinkage.py: W_BASE, GATE).
CREATE OR REPLACE MACRO ability_gate(distance, base, width) AS
    base + (1 - base) * least(greatest(distance / width, 0), 1);
