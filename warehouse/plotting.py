"""matplotlib without a screen: every plot in the warehouse is written to a PNG file."""
from __future__ import annotations


def pyplot():
    """``matplotlib.pyplot`` on the file-only Agg backend (imported lazily: plots are optional work)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
