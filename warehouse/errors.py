"""The error a user can fix: printed as one line ``error: ...`` with exit code 2, never a traceback."""
from __future__ import annotations


class UserError(Exception):
    """Bad input, a missing or busy warehouse, a folder we will not touch, ... The message names the
    bad value and, where there is a short list, the allowed ones."""

    exit_code = 2


class WarehouseBusy(UserError):
    """The warehouse file is locked by another process (``pid``); waiting may help (``--wait``)."""

    def __init__(self, message: str, pid: int | None = None):
        super().__init__(message)
        self.pid = pid
