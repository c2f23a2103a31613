"""When a stored number equals the one its rule computes again: the comparison every drift check writes in SQL.

Sums run in DuckDB's thread order, so a recomputed number may differ from the stored one in its last bits;
a correlation over a constant column is NaN in both; a missing one is NULL in both.
"""
from __future__ import annotations


def same_number(stored: str, recomputed: str, tolerance: float) -> str:
    """SQL, true when the two DOUBLE expressions are both NULL, both NaN, equal (infinities too), or within
    ``tolerance`` of each other; false otherwise (never NULL). ``abs(a - b) <= tolerance`` alone is false
    for two NaN, so a store holding one was reported as differing after every repair."""
    a, b = stored, recomputed
    return (f"(CASE WHEN {a} IS NULL OR {b} IS NULL THEN {a} IS NULL AND {b} IS NULL "
            f"WHEN isnan({a}) OR isnan({b}) THEN isnan({a}) AND isnan({b}) "
            f"ELSE {a} = {b} OR abs({a} - {b}) <= {tolerance} END)")
