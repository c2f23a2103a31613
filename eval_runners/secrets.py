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


_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-~+/=]+")


def redact(text: object, *secrets: str | None) -> str:
    """``text`` with every secret (and any bearer token) replaced by ``***``."""
    s = str(text)
    for secret in secrets:
        if secret and len(secret) >= 4:
            s = s.replace(secret, "***")
    return _BEARER.sub(r"\1***", s)


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
