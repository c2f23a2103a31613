"""The error a user can fix: printed as one line ``error: ...`` with exit code 2, never a traceback.

One message serves both interfaces: it is written once, naming options as the command line spells them
(``--write``, ``--no-restrict``, ``--exclude``), and a Python caller reads it in the API's own words
(``write=True``, ``restrict=False``, ``exclude``): :func:`spoken` renders it for whoever is reading
(:data:`audience`: ``api`` unless the ``pace`` command line set ``cli``). The spellings come from the
API's signatures (:func:`register_api`), so they cannot drift from them.
"""
from __future__ import annotations

import inspect
import re
import shlex
from contextvars import ContextVar

#: who reads error messages: "api" (a Python caller) or "cli" (set by ``warehouse.cli.main``)
audience: ContextVar[str] = ContextVar("pace_audience", default="api")

#: command-line flag -> the API's spelling of the same option (see :func:`register_api`)
_API_SPELLING: dict[str, str] = {}
_FLAG = re.compile(r"(?<![\w-])(--[A-Za-z][A-Za-z0-9-]*)(?: ([A-Z][A-Z_]*)\b)?")    # a flag, its placeholder


def pace_command(*words: object) -> str:
    """A ``pace`` command line as a message suggests it: ready to paste into a shell, each word quoted
    where the shell needs it (a model named ``Qwen3 Coder (480B)`` or ``x;rm -rf ~``)."""
    return "pace " + shlex.join(str(w) for w in words)


def register_api(cls: type) -> type:
    """Learn the API's spelling of every option from ``cls``'s public methods: a keyword ``name``
    (flag ``--name``), a switch ``name=False`` by default (flag ``--name``: ``name=True``), and one
    ``name=True`` by default (flag ``--no-name``: ``name=False``)."""
    for attr, member in vars(cls).items():
        if attr.startswith("_") or not callable(member):
            continue
        for param in list(inspect.signature(member).parameters.values())[1:]:
            flag = "--" + param.name.replace("_", "-")
            if param.default is False:
                _API_SPELLING[flag] = f"{param.name}=True"
            elif param.default is True:
                _API_SPELLING["--no-" + flag[2:]] = f"{param.name}=False"
            else:
                _API_SPELLING.setdefault(flag, param.name)
    return cls


def register_options(options) -> None:
    """Learn the API's spelling of options passed as ``**options`` (the methods' declared options:
    ``--q`` -> ``q``, a switch ``--auto-tune`` -> ``auto_tune=True``), which no signature names."""
    for opt in options:
        word = f"{opt.name}=True" if opt.kind is bool else opt.name
        _API_SPELLING.setdefault(opt.flag, word)


def spoken(message: str) -> str:
    """``message`` in the words of its reader: unchanged for the command line; for a Python caller
    every flag the API knows becomes its keyword (``add --write`` -> ``add write=True``, ``--exclude:``
    -> ``exclude:``, ``pass --model NAME`` -> ``pass model=NAME``)."""
    if audience.get() == "cli":
        return message
    if not _API_SPELLING:
        # A caller of the layers below the API (ingest_tree, ...) may not have imported it yet: its
        # signatures hold the spellings. Not a top-level import: warehouse.api imports this module.
        import warehouse.api  # noqa: F401

    def say(m: re.Match) -> str:
        flag, placeholder = m.group(1), m.group(2)
        word = _API_SPELLING.get(flag)
        if word is None:
            return m.group(0)
        if placeholder is None:
            return word
        return f"{word}={placeholder}" if "=" not in word else f"{word} {placeholder}"
    return _FLAG.sub(say, message)


class UserError(Exception):
    """Bad input, a missing or busy warehouse, a folder we will not touch, ... The message names the
    bad value and, where there is a short list, the allowed ones (see :func:`spoken`)."""

    exit_code = 2

    def __init__(self, message: str = "", *args):
        super().__init__(spoken(str(message)), *args)


class WarehouseBusy(UserError):
    """The warehouse file is locked by another process (``pid``); waiting may help (``--wait``)."""

    def __init__(self, message: str, pid: int | None = None):
        super().__init__(message)
        self.pid = pid
