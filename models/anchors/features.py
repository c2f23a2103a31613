"""Model metadata as numbers for the regression prior (models.anchors.prior.regression_prior). Pure.

The features are the ones bench/anchors.py measured (bench/results/anchors_experiments.md): release date
(years since 2025-01-01), log10 output price (USD per million tokens), open weights (0/1) and log10 active
parameters (billions; the total where the active count is not published). NaN where unknown.
"""
from __future__ import annotations

from datetime import date
from typing import Any, Mapping

import numpy as np

__all__ = ["FEATURES", "metadata_features"]

FEATURES = ("release_years", "log10_output_price", "open_weights", "log10_active_params")
_EPOCH = date(2025, 1, 1)


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if np.isfinite(number) else None


def metadata_features(meta: Mapping[str, Any] | None) -> np.ndarray:
    """(4,) the features of one model's metadata (a dict with ``release_date`` as a date or ISO string,
    ``output_price``, ``openness``, ``active_parameter_count_b``, ``parameter_count_b``); all NaN for None."""
    out = np.full(len(FEATURES), np.nan)
    if not meta:
        return out
    released = meta.get("release_date")
    try:
        released = date.fromisoformat(released) if isinstance(released, str) else released
        out[0] = (released - _EPOCH).days / 365.25 if isinstance(released, date) else np.nan
    except ValueError:
        pass
    price = _number(meta.get("output_price"))
    if price and price > 0:
        out[1] = np.log10(price)
    openness = meta.get("openness")
    if isinstance(openness, str) and openness:
        out[2] = 1.0 if openness.startswith("open") else 0.0
    active = _number(meta.get("active_parameter_count_b")) or _number(meta.get("parameter_count_b"))
    if active and active > 0:
        out[3] = np.log10(active)
    return out
