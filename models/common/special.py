"""``expit``: scipy.special's logistic function, imported on its first call.

scipy.special costs ~0.5 s to import, which every `pace` command would pay at start-up (the command
line reads the methods' options, and the methods import their drivers); only the Goal B fits call it.
The values are scipy's own, so compat keeps the published arithmetic bit for bit.
"""
from __future__ import annotations

import numpy as np


def expit(z) -> np.ndarray:
    """Elementwise 1 / (1 + exp(-z)), as ``scipy.special.expit`` computes it."""
    from scipy.special import expit as scipy_expit

    return scipy_expit(z)
