"""Small helpers shared by tests."""
from __future__ import annotations

from pathlib import Path


def synthetic_warehouse(folder: Path, **generator_args) -> tuple[Path, dict]:
    """(warehouse path, generator summary): a SYNTHETIC tree (``ingest.synthetic.generate_tree`` with
    ``generator_args``) written to ``folder/tree`` and ingested into ``folder/pace.duckdb``."""
    from ingest.load import ingest_tree
    from ingest.synthetic import generate_tree
    from warehouse.connect import connect

    summary = generate_tree(folder / "tree", **generator_args)
    db = folder / "pace.duckdb"
    con = connect(db, create=True)
    try:
        ingest_tree(con, folder / "tree", folder / "lake")
    finally:
        con.close()
    return db, summary


def write_index(root: Path, runs: dict[str, dict[str, dict[str, bool | None]]], metadata_only=(),
                synthetic: bool = False) -> Path:
    """An OpenHands-Index-shaped folder (``pace import openhands-index``): ``runs[model][bench]`` is
    ``{instance_id: resolved}`` for results/<model>/instance_results/<bench>.json (bench as the index names
    it: gaia, swe-bench, ...; each instance costs 0.1 USD), every model with a metadata.json; the models of
    ``metadata_only`` have nothing else. ``synthetic``: carry the SYNTHETIC marker (to go beside a
    ``pace demo-data`` tree)."""
    import json

    root.mkdir(parents=True, exist_ok=True)
    if synthetic:
        (root / "README.md").write_text("SYNTHETIC: made up by a test\n")
    for model in [*runs, *metadata_only]:
        folder = root / "results" / model
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "metadata.json").write_text(json.dumps({"agent_name": "OpenHands", "model": model,
                                                          "release_date": "2026-01-01", "input_price": 1.0}))
        for bench, results in runs.get(model, {}).items():
            (folder / "instance_results").mkdir(exist_ok=True)
            (folder / "instance_results" / f"{bench}.json").write_text(json.dumps(
                {i: {"resolved": r, "cost": 0.1} for i, r in results.items()}))
    return root


def write_csv(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    return path


class PaceResult:
    def __init__(self, exit_code: int, stdout: str, stderr: str):
        self.exit_code, self.stdout, self.stderr = exit_code, stdout, stderr
        self.output = stdout + stderr

    def __repr__(self) -> str:
        return f"PaceResult(exit={self.exit_code}, stdout={self.stdout[-400:]!r}, stderr={self.stderr[-400:]!r})"


def run_pace(*args, env: dict | None = None) -> PaceResult:
    """Run the `pace` command line in this process exactly as a user gets it (``warehouse.cli.main``:
    one-line errors and exit codes), capturing stdout and stderr."""
    import contextlib
    import io
    import os

    from warehouse.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update({k: str(v) for k, v in (env or {}).items()})
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main([str(a) for a in args])
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return PaceResult(code, out.getvalue(), err.getvalue())


class Killed(BaseException):
    """Stands for a kill -9 at a chosen call: nothing after it runs, no ``except Exception`` catches it."""


def kill_at(monkeypatch, module, name: str) -> None:
    """Make ``module.name`` die as a killed process would, the moment it is called."""
    def killed(*args, **kwargs):
        raise Killed()

    monkeypatch.setattr(module, name, killed)


def run_pace_killed(target: str, *args, nth: int = 1) -> int:
    """Run the `pace` command line with ``args`` in a new process that is killed (SIGKILL, as by
    ``kill -9``) the moment ``target`` (``"module:function"``, e.g. ``"ingest.lake:swap_lake"``) is
    called for the ``nth`` time; returns the process's exit status (-9 when it was killed there)."""
    import subprocess
    import sys

    code = """if True:
        import importlib, os, signal, sys
        target, nth, *args = sys.argv[1:]
        module, name = target.split(":")
        module = importlib.import_module(module)
        real, calls = getattr(module, name), []

        def dies(*a, **k):
            calls.append(1)
            if len(calls) >= int(nth):
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*a, **k)

        setattr(module, name, dies)
        from warehouse.cli import main
        main(args)
    """
    proc = subprocess.run([sys.executable, "-c", code, target, str(nth), *map(str, args)], capture_output=True,
                          text=True, timeout=300)
    return proc.returncode


def lm_eval_output(root: Path, *, benchmark: str, subdir: str, score: float, n: int = 40) -> tuple[Path, Path]:
    """(output folder, map file): an lm-evaluation-harness output of model Qwen on task ``quiz`` (``n``
    samples with ids 0..n-1, each scoring ``score``) and a map sending it to ``benchmark``/``subdir``."""
    import json

    out = root / "lm" / "Qwen"
    out.mkdir(parents=True)
    (out / "results_2025-01-01T00-00-00.json").write_text(json.dumps({"results": {"quiz": {}}, "model_name": "Qwen"}))
    (out / "samples_quiz_2025-01-01T00-00-00.jsonl").write_text("".join(
        json.dumps({"doc_id": i, "doc": {"qid": str(i)}, "filter": "none", "metrics": ["acc"], "acc": score}) + "\n"
        for i in range(n)))
    write_csv(root / "map.toml", f'[tasks.quiz]\nbenchmark = "{benchmark}"\nsubdir = "{subdir}"\nmetric = "acc"\n'
                                 'id = "doc.qid"\n')
    return root / "lm", root / "map.toml"
