"""The one error type ingest raises for bad input: it always names the file and, when known, the line."""
from __future__ import annotations


class IngestError(Exception):
    """Bad input. ``path`` is as the user would type it; ``line`` is 1-based (the header is line 1)."""

    def __init__(self, path: str, message: str, line: int | None = None):
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")
