"""Pure, versioned graders: ``fn(reference, response, config) -> {metric: score | None}``.

A score is a float in [0, 1]; ``None`` means *unscorable* (for example planbench task_3 when
either side cannot be parsed): no score row is written and the call is reported, never a silent
0. Bump a grader's version whenever its output for some input changes; the version is stored with
every graded call.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Grader:
    name: str
    version: str
    fn: Callable[[dict, str, dict], dict]

    def __call__(self, reference: dict, response: str, config: dict | None = None) -> dict:
        return self.fn(reference or {}, response or "", config or {})


GRADERS: dict[str, Grader] = {}


def grader(name: str, version: str):
    def deco(fn):
        GRADERS[name] = Grader(name, version, fn)
        return fn
    return deco


def get_grader(name: str) -> Grader:
    _load()
    if name not in GRADERS:
        raise KeyError(f"unknown grader {name!r}; known: {sorted(GRADERS)}")
    return GRADERS[name]


def _load():
    from eval_runners.graders import (acp, bfcl, choice, code, ifeval, lifbench, planbench,  # noqa: F401
                                      repobench, visualwebbench)
