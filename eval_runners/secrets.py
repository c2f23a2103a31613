"""Credentials: ``--api-key/--base-url`` > environment (``API_KEY``, ``BASE_URL``) > ``.env``.

The key is passed explicitly to the client and never written to ``os.environ``, the database,
logs or progress output; :func:`redact` scrubs it from every error text we store or print.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Credentials:
    base_url: str | None
    api_key: str | None = field(default=None, repr=False)
    source: str = "none"               # where the key came from: flag | env | dotenv | none

    def __repr__(self) -> str:          # never show the key
        return f"Credentials(base_url={self.base_url!r}, api_key={'***' if self.api_key else None}, source={self.source!r})"


def read_dotenv(path: str | os.PathLike) -> dict[str, str]:
    """Parse a ``.env`` file (KEY=VALUE, optional quotes, ``export`` prefix, # comments)."""
    out: dict[str, str] = {}
    p = Path(path)
    if not p.is_file():
        return out
    for raw in p.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        if line.startswith("export "):
            line = line[len("export "):]
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        else:
            value = value.split(" #", 1)[0].strip()
        out[key.strip()] = value
    return out


def resolve_credentials(api_key: str | None = None, base_url: str | None = None, *,
                        env: dict[str, str] | None = None,
                        dotenv: str | os.PathLike | None = ".env") -> Credentials:
    env = dict(os.environ) if env is None else env
    dot = read_dotenv(dotenv) if dotenv else {}
    if api_key:
        key, source = api_key, "flag"
    elif env.get("API_KEY"):
        key, source = env["API_KEY"], "env"
    elif dot.get("API_KEY"):
        key, source = dot["API_KEY"], "dotenv"
    else:
        key, source = None, "none"
    url = base_url or env.get("BASE_URL") or dot.get("BASE_URL") or None
    return Credentials(base_url=url, api_key=key, source=source)


#: Text shaped like a credential, as (pattern, replacement) pairs. The one list: :func:`redact` applies
#: it in Python before anything the runner stores, logs or raises, and the export applies it in SQL
#: (``warehouse.export.scrubbed``) on the way out, so every pattern is written in the syntax both
#: Python's ``re`` and DuckDB's RE2 read (no look-around, ``\\1`` in the replacement).
CREDENTIAL_PATTERNS: list[tuple[str, str]] = [
    # a whole header, whatever its scheme: Authorization: Bearer x / Basic x / Token x / x
    (r"(?i)(\bauthorization\s*[:=]\s*(?:(?:bearer|basic|token|digest)\s+)?)[^\s\"',;]+", r"\1***"),
    (r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}", r"\1***"),          # (not "bearer of news")
    # Basic credentials: base64 of user:password; a token without a digit, +, /, = or an inner capital
    # (a plain word: "Basic arithmetic") is left alone
    (r"(\bBasic\s+)[A-Za-z0-9+/]{6,}[0-9+/=A-Z][A-Za-z0-9+/=]*", r"\1***"),
    # api-key: x, x-api-key: x, api_key=x, and JSON fields "api_key": "x", "password": "x", ...
    (r"(?i)(\b(?:x-)?api[-_]?key\s*[:=]\s*)[^\s\"',;]+", r"\1***"),
    (r"(?i)(\"(?:api[_-]?key|x-api-key|authorization|access[_-]?token|token|secret|password)\"\s*:\s*)\"[^\"]*\"",
     r'\1"***"'),
    (r"\bsk-[A-Za-z0-9_-]{16,}", "sk-***"),                  # OpenAI / Anthropic style keys
    (r"(?i)([?&](?:api[_-]?key|key|token|access_token|sig|signature)=)[^&\s\"']+", r"\1***"),   # key= in URLs
    (r"(://)[^/@\s\"']+@", r"\1"),                               # user:password@ in URLs
]
_COMPILED = [(re.compile(p), r) for p, r in CREDENTIAL_PATTERNS]


def redact(text: object, *secrets: str | None) -> str:
    """``text`` with everything shaped like a credential (:data:`CREDENTIAL_PATTERNS`) and every
    given secret replaced by ``***``."""
    s = str(text)
    for pattern, replacement in _COMPILED:
        s = pattern.sub(replacement, s)
    for secret in secrets:
        if secret and len(secret) >= 4:
            s = s.replace(secret, "***")
    return s


def public_url(url: str | None) -> str | None:
    """A base URL safe to store: no user-info, no query string."""
    if not url:
        return url
    from urllib.parse import urlsplit, urlunsplit
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
