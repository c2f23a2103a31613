"""Plan input: which (benchmark, subdir, instance_id) rows a model should be run on.

A plan is a CSV with at least the columns ``benchmark,subdir,instance_id`` (other columns, such
as a published selections file's ``mode,fold,target,col_idx,weight``, are ignored), or any list
of such triples. Without ``--plan FILE``, ``pace run`` takes the warehouse's plan
(:func:`warehouse.plan.plan_rows`: the instances with a non-zero weight in a current fit that the
model has no score for).
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterable

PlanRow = tuple[str, str, str]


def normalize(rows: Iterable) -> list[PlanRow]:
    out: dict[PlanRow, None] = {}
    for r in rows:
        if isinstance(r, dict):
            t = (r["benchmark"], r.get("subdir") or "", r["instance_id"])
        else:
            b, s, i = r
            t = (b, s or "", i)
        t = tuple("" if v is None else str(v).strip() for v in t)
        if not t[0] or not t[2]:
            raise ValueError(f"plan row needs a benchmark and an instance_id: {r!r}")
        out[t] = None
    return list(out)


def load_plan_csv(path: str | Path) -> list[PlanRow]:
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = {"benchmark", "subdir", "instance_id"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{path}: plan CSV lacks column(s) {sorted(missing)}")
        return normalize(reader)


def write_plan_csv(path: str | Path, rows: Iterable[PlanRow]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["benchmark", "subdir", "instance_id"])
        w.writerows(normalize(rows))


def plan_from_warehouse(con, model: str) -> list[PlanRow]:
    """The model's plan computed by the warehouse (the lead's provider), when it exists.

    Looks for ``warehouse.plan.plan_rows(con, model)``; raises a clear error otherwise.
    """
    try:
        from warehouse import plan as wplan  # type: ignore
    except ImportError:
        wplan = None
    fn = getattr(wplan, "plan_rows", None) if wplan else None
    if fn is None:
        raise LookupError("no plan provider in the warehouse yet (warehouse.plan.plan_rows); "
                          "pass --plan FILE (CSV with benchmark,subdir,instance_id)")
    return normalize(fn(con, model))
