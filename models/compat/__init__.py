"""compat: the published Pace pipeline exactly as published (spec pace-method.md), Goal A and Goal B."""
