"""The fixed pipeline: the instance-level Pace proxy with the published flaws fixed (Goal A and
Goal B, the ``instance`` method) and the ``default`` method's source-ability scale, link and
shrinkage."""
