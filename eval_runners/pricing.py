"""Prices per million tokens, configurable with a JSON or TOML file (``--prices FILE``).

File shape (JSON shown; TOML uses the same keys)::

    {"models": {"gpt-5.2": {"input": 1.75, "output": 14.0},
                "azure_ai/*": {"input": 1.0, "output": 4.0}}}

Keys are model names or fnmatch globs; the exact name wins over a glob, and among globs the
longest pattern wins. A model with no entry has an unknown cost (``None``): it is reported as
such, and ``--max-cost`` refuses to run it rather than guessing. A price is a finite number >= 0:
anything else (negative, NaN, infinite, text, a boolean) is refused with one line naming the entry
and the file, since a negative price would make costs negative and lift ``--max-cost``.
"""
from __future__ import annotations

import fnmatch
import json
import math
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Price:
    input: float          # USD per 1M prompt tokens
    output: float         # USD per 1M completion tokens (reasoning tokens are billed as output)

    def __post_init__(self):
        for side in ("input", "output"):
            value = getattr(self, side)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or value < 0:
                raise ValueError(f"{side} price {value!r} is not a price (USD per 1M tokens: a finite number >= 0)")

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return round((prompt_tokens * self.input + completion_tokens * self.output) / 1_000_000, 12)


class PriceTable:
    def __init__(self, entries: dict[str, Price] | None = None):
        self.entries = dict(entries or {})

    @classmethod
    def from_mapping(cls, data: dict, source: str = "price table") -> "PriceTable":
        """``{"models": {name: {"input": x, "output": y}}}``; ``source`` (e.g. the file) is named in errors."""
        models = data.get("models", data) if isinstance(data, dict) else data
        if not isinstance(models, dict):
            raise ValueError(f"{source}: expected {{\"models\": {{name: {{\"input\": x, \"output\": y}}}}}}")
        out = {}
        for name, p in models.items():
            if not isinstance(p, dict) or "input" not in p or "output" not in p:
                raise ValueError(f"{source}: price entry {name!r} needs numeric 'input' and 'output' (USD per 1M tokens)")
            try:
                out[name] = Price(p["input"], p["output"])
            except ValueError as exc:
                raise ValueError(f"{source}: models.{name}: {exc}") from None
        return cls(out)

    @classmethod
    def load(cls, path: str | Path | None) -> "PriceTable":
        if path is None:
            return cls()
        p = Path(path)
        text = p.read_text(encoding="utf-8")
        if p.suffix.lower() == ".toml":
            import tomllib
            data = tomllib.loads(text)
        else:
            data = json.loads(text)
        return cls.from_mapping(data, source=str(p))

    def lookup(self, model: str) -> Price | None:
        if model in self.entries:
            return self.entries[model]
        best = None
        for pat, price in self.entries.items():
            if fnmatch.fnmatchcase(model, pat) and (best is None or len(pat) > len(best[0])):
                best = (pat, price)
        return best[1] if best else None

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        price = self.lookup(model)
        return None if price is None else price.cost(prompt_tokens, completion_tokens)

    def as_dict(self) -> dict:
        return {k: {"input": v.input, "output": v.output} for k, v in self.entries.items()}
