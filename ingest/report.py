"""What an ingest did and what it found odd, as data (for --json) and as text (for people).

Both are bounded whatever the input: per anomaly kind the count and the first :data:`EXAMPLES` anomalies,
each anomaly's ``items`` cut to the first :data:`EXAMPLES` (``n_items`` says how many there are). (A file
of 10^6 ids repeated with other scores made an 8 MB report; everything behind a count stays queryable,
e.g. ``score_files.conflicting_ids``.)"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

#: anomalies shown per kind, items shown per anomaly, skipped paths shown (text and --json)
EXAMPLES = 20


@dataclass
class Anomaly:
    kind: str        # unknown_model | missing_from_leaf | differing_ids | target_rows_differ | out_of_range
                     # | duplicate_ids | repeated_runs | conflicting_duplicates | null_scores
                     # | disappeared_file | replaced_rows | reloaded_rows | other_tree
                     # | aggregate_only | second_spelling (ingest.noise: held out of fits)
                     # | skipped_path (an entry of the tree left out: a symlink leaving the tree or looping,
                     #   a folder named like a score file, a file that is not a CSV inside a benchmark)
                     # | incomplete_log (pace import inspect: the log did not finish)
    where: str       # a leaf 'benchmark[/subdir]' or a file path
    message: str
    items: list[str] | None = None     # the full list behind the message, when it is one (--json)

    def __str__(self) -> str:
        return f"[{self.kind}] {self.where}: {self.message}"

    def to_dict(self) -> dict:
        out = asdict(self)
        if self.items is not None:
            out["items"], out["n_items"] = self.items[:EXAMPLES], len(self.items)
        return out


def _shown(anomalies: list[Anomaly]) -> tuple[list[Anomaly], dict[str, int]]:
    """The first EXAMPLES anomalies of each kind (in report order), and how many of each kind are left out."""
    seen: dict[str, int] = {}
    shown = []
    for a in anomalies:
        seen[a.kind] = seen.get(a.kind, 0) + 1
        if seen[a.kind] <= EXAMPLES:
            shown.append(a)
    return shown, {k: n - EXAMPLES for k, n in seen.items() if n > EXAMPLES}


def anomaly_lines(anomalies: list[Anomaly], indent: str = "") -> list[str]:
    """Bounded text lines of ``anomalies``: the first EXAMPLES of each kind, then a count of the rest."""
    shown, omitted = _shown(anomalies)
    return [f"{indent}{a}" for a in shown] + [f"{indent}... and {n:,} more [{k}]" for k, n in sorted(omitted.items())]


@dataclass
class IngestReport:
    root: str
    source: str = "tree"               # what was read: a results tree, 'lm-eval samples', 'inspect log'
    tree: str = ""                     # the root as provenance records it (absolute)
    synthetic: bool = False            # the tree carries the SYNTHETIC marker
    files: int = 0
    files_new: int = 0
    files_changed: int = 0
    files_unchanged: int = 0
    files_reloaded: int = 0            # unchanged bytes, but rows were missing from scores
    files_disappeared: int = 0
    files_pruned: int = 0
    files_per_file: int = 0            # read by the per-file parser (legacy layout, mixed line endings, a
                                       # file DuckDB's strict reader refused although it is valid)
    rows_written: int = 0
    rows_removed: int = 0
    rows: int = 0                      # rows of this tree now in the warehouse
    models: list[str] = field(default_factory=list)
    benchmarks: list[str] = field(default_factory=list)
    leaves: int = 0
    anomalies: list[Anomaly] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)     # what an import did that is worth knowing
    seconds: float = 0.0
    # wall seconds per step, where the time went: hash (read and hash every file), delete (rows of
    # replaced files), read (DuckDB parsing and checks; runs beside insert), wait_read, insert,
    # wait_lake (lake writer behind), anomalies, lake_copy (partitions copied from scores), lake_close,
    # commit, swap
    phases: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def timed(self, phase: str):
        started = time.perf_counter()
        try:
            yield
        finally:
            self.phases[phase] = self.phases.get(phase, 0.0) + time.perf_counter() - started

    @property
    def changed(self) -> bool:
        return bool(self.files_new or self.files_changed or self.files_pruned or self.files_reloaded)

    def to_dict(self) -> dict:
        out = asdict(self)
        shown, omitted = _shown(self.anomalies)
        out["anomalies"] = [a.to_dict() for a in shown]
        out["anomaly_counts"] = self.anomaly_counts()
        out["anomalies_omitted"] = omitted
        return out

    def anomaly_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for a in self.anomalies:
            counts[a.kind] = counts.get(a.kind, 0) + 1
        return counts

    def to_text(self) -> str:
        rate = f", {self.rows_written / self.seconds:,.0f} rows/s" if self.seconds and self.rows_written else ""
        lines = [
            (f"Ingested {self.root}" if self.source == "tree" else f"Imported {self.root} ({self.source})")
            + ("  (SYNTHETIC data)" if self.synthetic else ""),
            f"  files      {self.files:,} ({self.files_new} new, {self.files_changed} changed, "
            f"{self.files_unchanged} unchanged, {self.files_reloaded} reloaded, {self.files_disappeared} disappeared, "
            f"{self.files_pruned} pruned)",
            f"  rows       {self.rows:,} {'in the tree' if self.source == 'tree' else 'from this path'} "
            f"({self.rows_written:,} written, {self.rows_removed:,} removed"
            f"{rate}, {self.seconds:.2f} s)",
            f"  models     {len(self.models)}",
            f"  benchmarks {len(self.benchmarks)} ({', '.join(self.benchmarks)})",
            f"  leaves     {self.leaves}",
        ]
        lines += [f"  note       {n}" for n in self.notes]
        if not self.anomalies:
            lines.append("  anomalies  none")
        else:
            counts = ", ".join(f"{k} {v}" for k, v in sorted(self.anomaly_counts().items()))
            lines.append(f"  anomalies  {len(self.anomalies)} ({counts})")
            lines += anomaly_lines(self.anomalies, "    ")
        return "\n".join(lines)
