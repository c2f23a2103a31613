"""The one error type ingest raises for bad input: it always names the file and, when known, the line."""
from __future__ import annotations

from warehouse.errors import spoken


class IngestError(Exception):
    """Bad input. ``path`` is as the user would type it; ``line`` is 1-based (the header is line 1).
    Options are named in the reader's words (``--strict`` / ``strict=True``: ``warehouse.errors.spoken``)."""

    def __init__(self, path: str, message: str, line: int | None = None):
        self.path = str(path)
        self.line = line
        self.message = message = spoken(message)
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")
