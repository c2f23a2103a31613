"""Scale: synthetic trees of 100, 300 and 1,000 models with ~100k source instances each, step by step.

For each size: generate the SYNTHETIC tree (ingest.synthetic, ``--scale`` sets the instances per
model: 5.87 gives ~100k source instances), then measure as separate processes (wall, CPU, peak RSS):

    ingest        `pace ingest TREE --json` into an empty warehouse (rows/s, the report's phases)
    reingest      the same again: every file unchanged (hashing and bookkeeping only)
    pandas        the per-file pandas loop of bench/ingest.py (read_csv, first of repeated ids, scores
                  to numbers), its frames concatenated and loaded into DuckDB one benchmark at a time
                  (one concat of 10^8 rows would need far more memory than the machine has); killed at
                  the RSS cap, the time for all files is extrapolated from its rate, and labelled so
    duckdb_csv    peer: DuckDB's own `read_csv` over every file at once, model / benchmark / subdir joined
                  from the file name, scores cast, into a table (no check, provenance or lake)
    polars        peer: polars `scan_csv` over one benchmark's files at a time (memory bounded, as the
                  pandas loop), collected and loaded into a DuckDB table through Arrow (no check either)
    floor         DuckDB's append alone: as many rows of pace's `scores` layout as the tree has, shaped as
                  the tree's (a source per file of its mean length, ids repeating from file to file),
                  inserted into a new file (what storing the rows costs before anything is parsed)
    sizes         database file and Parquet lake on disk
    stats         a full scan of the stored instance_stats table (kept at write time)
    stats_live    a full scan of instance_stats_live, the rule that table is kept equal to
    status        `pace status --json` (counts per benchmark, lake row counts: from the counters)
    doctor        `pace doctor --check --json` (marks, counters and the lake records: no score row read)
    matrices      the evaluation inputs: loocv_inputs pivoted into dense arrays (warehouse.matrices)
    fit           `pace fit FIT_ARGS --json` (default: no arguments, i.e. the default method with
                  intervals); killed at the RSS cap or the timeout, and recorded as such
    lookup_fit    `pace fit LOOKUP_FIT_ARGS` (compat, no intervals, three sources), run when the fit failed or
                  was skipped, only so the lookups have stored proxies (their cost does not depend on the
                  sources: ~400 weighted instances either way)
    add_model     ingest of a second tree holding one new model (a copy of one model's files); then of a
                  third holding a model with 10 agentic results only (ANCHOR_ROWS rows of one target file:
                  the anchors' estimate predicts it)
    lookups       one model's predictions, stored (the rows `pace predict` serves, fingerprint checked:
                  warehouse.stored_predictions) and from the `predictions` view, and `pace plan`'s queries,
                  p50/p95 over 20 calls each (fewer,
                  and said so, when they take over a minute together), with the fits then current (recorded),
                  and once a scan of every model's predictions; the anchors' estimate of the model with
                  agentic results only, stored (as `pace predict` serves it) and from `anchor_estimates`
    lookups_default  `pace fit LOOKUP_DEFAULT_FIT_ARGS` (the default method, no intervals, the same three
                  sources: cheap) and then the lookups again, so they are measured with the default method's
                  source-ability part too (stored as `lookups_default_fit`; the default fit stays current)

``matrices`` (the evaluation inputs) is measured only when asked for by ``--steps``.

Results are merged into bench/results/scale.json step by step (one entry per size, each step's
figures replaced only when the step is run again, so a size or a step can be rerun alone), with the
machine's load average before and after each step. A log-log plot of time against rows goes to
bench/results/scale.png (``--plot`` redraws it from the JSON alone). Trees and warehouses stay in
``--work`` between runs (default: a temporary folder removed at the end), e.g. to rerun the fit:

    .venv/bin/python bench/scale.py --sizes 100,300,1000 --work /tmp/scale-work --keep
    .venv/bin/python bench/scale.py --sizes 1000 --steps fit --work /tmp/scale-work --keep
    .venv/bin/python bench/scale.py --plot
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from workdir import claim

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results" / "scale.json"
PLOT = REPO / "bench" / "results" / "scale.png"
PY = sys.executable
PACE = str(Path(sys.executable).parent / "pace")
STEPS = ("ingest", "reingest", "pandas", "duckdb_csv", "polars", "floor", "sizes", "stats", "stats_live", "status",
         "doctor", "matrices", "fit", "lookup_fit", "add_model", "lookups", "lookups_default")
DEFAULT_STEPS = tuple(s for s in STEPS if s not in ("matrices", "lookups_default"))
LOOKUP_BUDGET_S = 60.0      # per kind of lookup: slow lookups are timed over fewer calls
ANCHOR_ROWS = 10            # agentic results of the model the anchors' estimate predicts (add_model)
GIB = 1 << 30


# ------------------------------------------------------------------------------ running one step
def _rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its descendants (0 once gone)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as fh:
                total += next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmRSS:"))
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(c) for c in fh.read().split()]
        except (OSError, StopIteration, ValueError):
            continue
    return total


def run(cmd: list[str], *, timeout: float, cap: int, env: dict | None = None) -> dict:
    """Run ``cmd``; kill it above ``cap`` resident bytes or after ``timeout`` seconds. Returns wall,
    CPU (user + system, all threads), peak RSS (kernel's ru_maxrss), exit code, why it was killed."""
    load_before = os.getloadavg()
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    out: dict[str, str] = {}
    readers = [threading.Thread(target=lambda k, s: out.__setitem__(k, s.read()), args=(k, s), daemon=True)
               for k, s in (("stdout", proc.stdout), ("stderr", proc.stderr))]
    for t in readers:
        t.start()
    killed, peak_seen = None, 0
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        peak_seen = max(peak_seen, _rss(proc.pid))
        if killed is None and peak_seen > cap:
            killed = f"resident memory above {cap / GIB:.1f} GiB"
            proc.kill()
        elif killed is None and time.perf_counter() - started > timeout:
            killed = f"no result after {timeout:.0f} s"
            proc.kill()
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    for t in readers:
        t.join()
    return {"wall_s": round(time.perf_counter() - started, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mib": round(max(usage.ru_maxrss * 1024, peak_seen) / 2**20), "rc": proc.returncode,
            "killed": killed, "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in os.getloadavg()],
            "stdout": out.get("stdout", ""), "stderr": out.get("stderr", "")}


def _public(result: dict) -> dict:
    """A step's figures without its raw output (stderr tail kept when it failed)."""
    shown = {k: v for k, v in result.items() if k not in ("stdout", "stderr")}
    if result["rc"] != 0 and result.get("stderr"):
        shown["error"] = result["stderr"].strip().splitlines()[-1][:300]
    return shown


def _json(result: dict) -> dict | None:
    try:
        return json.loads(result["stdout"])
    except (json.JSONDecodeError, KeyError):
        return None


def _du(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


# ------------------------------------------------------------------------------ probes (run as children)
def probe_pandas(tree: str) -> None:
    """The per-file pandas loop of bench/ingest.py, loaded into DuckDB one benchmark at a time (files
    come in tree order, i.e. benchmark by benchmark), with progress on stderr (so a killed run still
    tells its rate)."""
    import duckdb
    import pandas as pd

    sys.path.insert(0, str(REPO))
    from ingest.tree import discover

    started = time.perf_counter()
    files = discover(tree)
    rows = 0
    with tempfile.TemporaryDirectory(dir=Path(tree).parent) as tmp:
        con = duckdb.connect(str(Path(tmp) / "naive.duckdb"))
        con.execute("CREATE TABLE scores (model VARCHAR, benchmark VARCHAR, subdir VARCHAR, instance_id VARCHAR, "
                    "score DOUBLE, metric_name VARCHAR)")

        def load(frames: list) -> None:
            part = pd.concat(frames, ignore_index=True)  # noqa: F841 (DuckDB reads it by name)
            con.execute("INSERT INTO scores SELECT model, benchmark, subdir, id, score, metric_name FROM part")

        frames: list = []
        for k, sf in enumerate(files, 1):
            if frames and sf.benchmark != frames[-1]["benchmark"].iat[0]:
                load(frames)
                frames = []
            df = pd.read_csv(sf.path, dtype=str, keep_default_na=False)
            df = df.drop_duplicates(subset="id", keep="first")
            df["score"] = pd.to_numeric(df["score"], errors="coerce")
            df["model"], df["benchmark"], df["subdir"] = sf.file_model, sf.benchmark, sf.subdir
            frames.append(df)
            rows += len(df)
            if k % 200 == 0:
                print(json.dumps({"files": k, "of": len(files), "rows": rows, "s": time.perf_counter() - started}),
                      file=sys.stderr, flush=True)
        if frames:
            load(frames)
        stored = con.execute("SELECT count(*) FROM scores").fetchone()[0]
        con.close()
    print(json.dumps({"rows": stored, "files": len(files), "s": time.perf_counter() - started}))


#: the table every peer loader fills: the keys and values pace stores, without its checks and bookkeeping
PEER_TABLE = ("CREATE TABLE scores (model VARCHAR, benchmark VARCHAR, subdir VARCHAR, instance_id VARCHAR, "
              "score DOUBLE, metric_name VARCHAR)")


def _peer_files(tree: str):
    """The tree's files as the peers see them: (path, model, benchmark, subdir) per file."""
    sys.path.insert(0, str(REPO))
    from ingest.tree import discover

    return [(str(sf.path), sf.file_model, sf.benchmark, sf.subdir) for sf in discover(tree)]


def probe_duckdb_csv(tree: str) -> None:
    """DuckDB's own reader: one `read_csv` over every file of the tree (its parallel reader, explicit
    VARCHAR columns), each row's model / benchmark / subdir joined from its file name, scores cast, into
    a table. No check, no provenance, no lake."""
    import duckdb
    import pyarrow as pa

    started = time.perf_counter()
    files = _peer_files(tree)
    with tempfile.TemporaryDirectory(dir=Path(tree).parent) as tmp:
        con = duckdb.connect(str(Path(tmp) / "peer.duckdb"))
        con.execute(PEER_TABLE)
        meta = pa.table(list(zip(*files)), names=["filename", "model", "benchmark", "subdir"])
        con.register("files", meta)
        con.execute("""
            INSERT INTO scores
            SELECT f.model, f.benchmark, f.subdir, r.id, TRY_CAST(r.score AS DOUBLE), r.metric_name
            FROM read_csv($paths, columns = {'id': 'VARCHAR', 'score': 'VARCHAR', 'metric_name': 'VARCHAR'},
                          header = true, auto_detect = false, filename = true) AS r
            JOIN files AS f USING (filename)""", {"paths": [f[0] for f in files]})
        stored = con.execute("SELECT count(*) FROM scores").fetchone()[0]
        con.close()
    print(json.dumps({"rows": stored, "files": len(files), "s": time.perf_counter() - started}))


def probe_polars(tree: str) -> None:
    """polars' lazy reader: `scan_csv` over the files of one benchmark at a time (as the pandas loop,
    so that memory stays bounded), file names joined to model / subdir, collected and loaded into a
    DuckDB table through Arrow. No check, no provenance, no lake."""
    import duckdb
    import polars as pl

    started = time.perf_counter()
    files = _peer_files(tree)
    rows = 0
    with tempfile.TemporaryDirectory(dir=Path(tree).parent) as tmp:
        con = duckdb.connect(str(Path(tmp) / "peer.duckdb"))
        con.execute(PEER_TABLE)
        meta = pl.DataFrame(files, schema=["path", "model", "benchmark", "subdir"], orient="row")
        for benchmark in dict.fromkeys(f[2] for f in files):
            mine = meta.filter(pl.col("benchmark") == benchmark)
            part = (pl.scan_csv(mine["path"].to_list(), schema={"id": pl.Utf8, "score": pl.Utf8, "metric_name": pl.Utf8},
                                include_file_paths="path")
                    .join(mine.lazy(), on="path")
                    .select("model", "benchmark", "subdir", pl.col("id").alias("instance_id"),
                            pl.col("score").cast(pl.Float64, strict=False), "metric_name")
                    .collect().to_arrow())
            con.register("part", part)
            con.execute("INSERT INTO scores SELECT * FROM part")
            con.unregister("part")
            rows += part.num_rows
        stored = con.execute("SELECT count(*) FROM scores").fetchone()[0]
        con.close()
    print(json.dumps({"rows": stored, "files": len(files), "s": time.perf_counter() - started}))


def probe_floor(rows: str, files: str) -> None:
    """The cost of DuckDB's own append alone: ``rows`` rows of the layout pace stores (score_rows: source id,
    instance id, score, metric; the file's constants once in score_sources) inserted into a new
    warehouse-like file, nothing parsed. The floor under pace's ingest. Shaped as the tree: ``files`` sources
    of equal length whose ids repeat from one to the next (a leaf's files hold the same ids). Distinct ids
    throughout (the first version) cost DuckDB's string compression more than a tree does: 24.1 s for
    92 M rows where this shape takes 15.8 s, on one quiet machine."""
    import duckdb

    with tempfile.TemporaryDirectory() as tmp:
        con = duckdb.connect(str(Path(tmp) / "floor.duckdb"))
        for path in sorted((REPO / "sql").glob("004_*.sql")):
            con.execute(path.read_text())
        started = time.perf_counter()
        per_file = max(1, int(rows) // max(1, int(files)))
        con.execute("INSERT INTO score_sources SELECT range + 1, 'Model-' || range, 'bench', '', 'ingest', "
                    "'bench/Model-' || range || '.csv', TIMESTAMP '2025-01-01' FROM range(?)",
                    [-(-int(rows) // per_file)])
        con.execute(f"INSERT INTO score_rows SELECT (range // {per_file} + 1)::INTEGER, (range % {per_file})::VARCHAR, "
                    f"0.5, 'acc' FROM range({int(rows)})")
        con.close()
    print(json.dumps({"rows": int(rows), "s": time.perf_counter() - started}))


def probe_matrices(db: str) -> None:
    """The evaluation inputs as `pace loocv` / `pace fit` build them (fold_cells)."""
    sys.path.insert(0, str(REPO))
    from warehouse.connect import connect
    from warehouse.matrices import build_matrices

    con = connect(db, read_only=True)
    started = time.perf_counter()
    m = build_matrices(con)
    print(json.dumps({"s": time.perf_counter() - started, "models": len(m.models), "source_columns": len(m.columns),
                      "x_mib": m.X.nbytes / 2**20, "targets": m.targets}))


def probe_lookups(db: str, model: str, new_model: str, anchor_model: str, calls: int) -> None:
    """p50/p95 of `predictions` for one model and of the queries behind `pace plan`, on one connection; of
    the anchors' estimate of ``anchor_model`` (a model with a few agentic results only; '-': none)."""
    sys.path.insert(0, str(REPO))
    from warehouse.connect import connect
    from warehouse import stored_predictions
    from warehouse.plan import has_fits, plan_calls, plan_rows, plan_value, zero_weight_left_out
    from warehouse.predict import read_predictions

    con = connect(db, read_only=True)
    out: dict = {"model": model, "calls": calls,
                 "current_fits": con.execute("SELECT list(DISTINCT method ORDER BY method) FROM current_fits "
                                             "WHERE task = 'abs'").fetchone()[0],
                 "collapsed_cells": con.execute("SELECT count(*) FROM collapsed_cells").fetchone()[0]}
    if not has_fits(con):
        print(json.dumps({**out, "error": "no fitted proxy"}))
        return

    def timed(fn) -> dict:
        """p50/p95 over ``calls`` calls, or over the calls made in LOOKUP_BUDGET_S (at least 3) when
        one call is slow: then ``calls`` says how many."""
        times = []
        while len(times) < calls and (len(times) < 3 or sum(times) < LOOKUP_BUDGET_S):
            started = time.perf_counter()
            fn()
            times.append(time.perf_counter() - started)
        times.sort()
        return {"p50_ms": round(1000 * statistics.median(times), 2),
                "p95_ms": round(1000 * times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))], 2),
                "first_ms": None, "calls": len(times)}

    def stored(name):          # what `pace predict` / Warehouse.predict read: the stored rows, checked
        return con.execute(f"SELECT target, predicted, low, high, coverage FROM {stored_predictions.lookup_relation()} "
                           "ORDER BY target", [name, name, stored_predictions.rule_stamp()]).fetchall()

    def predictions(name):
        return con.execute("SELECT target, predicted, low, high, coverage FROM predictions WHERE model = ? "
                           "ORDER BY target", [name]).fetchall()

    def plan(name):
        rows = plan_rows(con, name)
        plan_calls(rows)
        plan_value(con, name)
        zero_weight_left_out(con, name)
        return rows

    first = time.perf_counter()
    n_pred = len(predictions(model))
    first_ms = round(1000 * (time.perf_counter() - first), 1)
    out["predictions"] = {**timed(lambda: predictions(model)), "rows": n_pred, "first_ms": first_ms}
    n_stored = len(stored(model))
    gap = max((abs(a - b) for ra, rb in zip(stored(model), predictions(model)) for a, b in zip(ra[1:], rb[1:])
               if a is not None and b is not None), default=None)
    out["predictions_stored"] = {**timed(lambda: stored(model)), "rows": n_stored, "max_gap_to_view": gap}
    out["predictions_lookup"] = {**timed(lambda: read_predictions(con, model)), "rows": len(read_predictions(con, model))}
    if anchor_model != "-":
        def estimate(name):
            return con.execute("SELECT target, predicted, low, high FROM anchor_estimates WHERE model = ? "
                               "ORDER BY target", [name]).fetchall()

        served = [r[:4] for r in stored(anchor_model)]
        gap = max((abs(a - b) for ra, rb in zip(served, estimate(anchor_model)) for a, b in zip(ra[1:], rb[1:])
                   if a is not None and b is not None), default=None)
        out["anchor_estimate_view"] = {**timed(lambda: estimate(anchor_model)), "rows": len(estimate(anchor_model))}
        out["anchor_estimate_stored"] = {**timed(lambda: stored(anchor_model)), "rows": len(served),
                                         "methods": sorted({p.method for p in read_predictions(con, anchor_model)}),
                                         "max_gap_to_view": gap}
    out["plan_known_model"] = {**timed(lambda: plan(model)), "instances": len(plan(model))}
    out["plan_new_model"] = {**timed(lambda: plan(new_model)), "instances": len(plan(new_model))}
    # a scan of every model's predictions (`pace report`, an export, `pace fit`'s own check of its rows)
    started = time.perf_counter()
    n_all = len(con.execute("SELECT model, target, predicted FROM predictions").fetchall())
    out["predictions_every_model"] = {"s": round(time.perf_counter() - started, 2), "rows": n_all}
    started = time.perf_counter()      # as `pace export` reads them: stored when every model's may be served
    n_all = len(con.execute(stored_predictions.every_model_query(con)).fetchall())
    out["predictions_every_model_export"] = {"s": round(time.perf_counter() - started, 2), "rows": n_all}
    print(json.dumps(out))


# ------------------------------------------------------------------------------ one size
def measure_size(n_models: int, args, work: Path, save=lambda entry: None) -> dict:
    """Run the chosen steps on one size; ``save(entry)`` after each step (a kill keeps what was measured)."""
    cap, timeout = int(args.rss_cap_gib * GIB), args.timeout
    tree, wh = work / f"tree-{n_models}", work / f"wh-{n_models}"
    db = wh / "pace.duckdb"
    res: dict = {"models": n_models, "scale": args.scale, "seed": args.seed, "steps": {}}
    steps = res["steps"]
    if not (tree / "README.md").is_file():
        gen = run([PY, "-m", "ingest.synthetic", str(tree), "--n-models", str(n_models), "--seed", str(args.seed),
                   "--scale", str(args.scale), "--overwrite"], timeout=timeout, cap=cap)
        steps["generate"] = _public(gen)
    files = sorted(tree.rglob("*.csv"))
    res["tree"] = {"files": len(files), "csv_mib": round(sum(f.stat().st_size for f in files) / 2**20)}
    print(f"[{n_models}] tree: {res['tree']}", flush=True)
    want = set(args.steps)

    if "ingest" in want:
        shutil.rmtree(wh, ignore_errors=True)
        wh.mkdir(parents=True)
        r = run([PACE, "ingest", str(tree), "--db", str(db), "--no-progress", "--json"], timeout=timeout, cap=cap)
        rep = _json(r) or {}
        steps["ingest"] = {**_public(r), "rows": rep.get("rows_written"), "in_ingest_s": rep.get("seconds"),
                           "phases": {k: round(v, 2) for k, v in (rep.get("phases") or {}).items()},
                           "files_per_file": rep.get("files_per_file"), "anomalies": len(rep.get("anomalies", []))}
        if rep.get("rows_written"):
            steps["ingest"]["rows_per_s"] = round(rep["rows_written"] / r["wall_s"])
            res["rows"] = rep["rows_written"]
        print(f"[{n_models}] ingest: {_brief(steps['ingest'])}", flush=True)
        save(res)
    if "reingest" in want and db.exists():
        r = run([PACE, "ingest", str(tree), "--db", str(db), "--no-progress", "--json"], timeout=timeout, cap=cap)
        rep = _json(r) or {}
        steps["reingest"] = {**_public(r), "files_unchanged": rep.get("files_unchanged"),
                             "phases": {k: round(v, 2) for k, v in (rep.get("phases") or {}).items()}}
        print(f"[{n_models}] reingest: {_brief(steps['reingest'])}", flush=True)
        save(res)
    if "pandas" in want:
        r = run([PY, __file__, "--probe-pandas", str(tree)], timeout=timeout, cap=cap)
        step = _public(r)
        done = _json(r)
        if done:
            step.update(rows=done["rows"], rows_per_s=round(done["rows"] / r["wall_s"]))
        else:                                   # killed: extrapolate from its progress, labelled
            last = [json.loads(line) for line in r["stderr"].splitlines() if line.startswith("{")]
            if last:
                p = last[-1]
                step["progress_at_kill"] = p
                step["extrapolated_wall_s"] = round(p["s"] * p["of"] / p["files"], 1)
                step["extrapolated_note"] = ("EXTRAPOLATED: the loop was stopped; its rate over the files it read, "
                                             "times all files (concat and the DuckDB load not included)")
        steps["pandas"] = step
        print(f"[{n_models}] pandas: {_brief(step)}", flush=True)
        save(res)
    for name, flag in (("duckdb_csv", "--probe-duckdb-csv"), ("polars", "--probe-polars")):
        if name in want:
            r = run([PY, __file__, flag, str(tree)], timeout=timeout, cap=cap)
            done = _json(r)
            steps[name] = {**_public(r), **({"rows": done["rows"], "rows_per_s": round(done["rows"] / r["wall_s"])}
                                            if done else {})}
            print(f"[{n_models}] {name}: {_brief(steps[name])}", flush=True)
            save(res)
    rows = res.get("rows") or (_tree_rows(db, tree) if "floor" in want and db.exists() else None)
    if "floor" in want and rows:
        r = run([PY, __file__, "--probe-floor", str(rows), str(len(files))], timeout=timeout, cap=cap)
        done = _json(r) or {}
        steps["floor"] = {**_public(r), **done}
        print(f"[{n_models}] floor: {_brief(steps['floor'])}", flush=True)
        save(res)
    if "sizes" in want and db.exists():
        res["sizes"] = {"db_mib": round(_du(db) / 2**20), "lake_mib": round(_du(wh / "lake") / 2**20)}
        print(f"[{n_models}] sizes: {res['sizes']}", flush=True)
        save(res)
    for name, relation in (("stats", "instance_stats"), ("stats_live", "instance_stats_live")):
        if name in want and db.exists():       # the stored table, then the rule it is kept equal to
            r = run([PACE, "sql", "SELECT count(*), sum(n_models), sum(mean_score), sum(variance), "
                     "sum(discrimination), sum(cardinality(target_correlation)) FROM " + relation,   # no column pruned
                     "--db", str(db), "--json"], timeout=timeout, cap=cap)
            steps[name] = _public(r)
            print(f"[{n_models}] {name}: {_brief(steps[name])}", flush=True)
            save(res)
    for name, cmd in (("status", ["status"]), ("doctor", ["doctor", "--check"])):
        if name in want and db.exists():
            r = run([PACE, *cmd, "--db", str(db), "--json"], timeout=timeout, cap=cap)
            steps[name] = _public(r)
            print(f"[{n_models}] {name}: {_brief(steps[name])}", flush=True)
            save(res)
    if "matrices" in want and db.exists():
        r = run([PY, __file__, "--probe-matrices", str(db)], timeout=timeout, cap=cap)
        steps["matrices"] = {**_public(r), **(_json(r) or {})}
        print(f"[{n_models}] matrices: {_brief(steps['matrices'])}", flush=True)
        save(res)
    if "fit" in want and db.exists():
        r = run([PACE, "fit", *args.fit_args.split(), "--db", str(db), "--json"], timeout=args.fit_timeout, cap=cap)
        rep = _json(r) or {}
        steps["fit"] = {**_public(r), "args": args.fit_args or "(none: the default method, with intervals)",
                        "rss_cap_gib": args.rss_cap_gib, "timeout_s": args.fit_timeout, "in_fit_s": rep.get("seconds"),
                        "targets": rep.get("targets"), "models": len(rep.get("models") or [])}
        print(f"[{n_models}] fit: {_brief(steps['fit'])}", flush=True)
        save(res)
    fitted = "fit" in steps and steps["fit"]["rc"] == 0
    if ("lookup_fit" in want or "fit" in want) and not fitted and args.lookup_fit_args and db.exists():
        # the lookups need stored proxies: a lighter fit when the fit above failed (or was not run)
        r = run([PACE, "fit", *args.lookup_fit_args.split(), "--db", str(db), "--json"],
                timeout=args.fit_timeout, cap=cap)
        steps["fit_for_lookups"] = {**_public(r), "args": args.lookup_fit_args,
                                    "note": "only so that predictions and plan can be measured"}
        print(f"[{n_models}] fit_for_lookups: {_brief(steps['fit_for_lookups'])}", flush=True)
        save(res)
    names = sorted({f.stem for f in files})
    if "add_model" in want and db.exists():
        extra = work / f"extra-{n_models}"
        shutil.rmtree(extra, ignore_errors=True)
        source = names[-1]
        newcomer = _unused_name(db, "NewModel")     # a rerun adds another model (the same one again is a no-op)
        for f in files:
            if f.stem == source:
                target = extra / f.relative_to(tree).parent / f"{newcomer}.csv"
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, target)
        (extra / "README.md").write_text("# SYNTHETIC one-model tree (a copy of one model's files)\n\n"
                                         "SYNTHETIC: made up by bench/scale.py from ingest.synthetic output.\n")
        r = run([PACE, "ingest", str(extra), "--db", str(db), "--no-progress", "--json"], timeout=timeout, cap=cap)
        rep = _json(r) or {}
        steps["add_model"] = {**_public(r), "model": newcomer, "rows": rep.get("rows_written"),
                              "phases": {k: round(v, 2) for k, v in (rep.get("phases") or {}).items()}}
        print(f"[{n_models}] add_model: {_brief(steps['add_model'])}", flush=True)
        save(res)
        anchored = _unused_name(db, "AnchorModel")
        agentic = work / f"anchors-{n_models}"
        shutil.rmtree(agentic, ignore_errors=True)
        targets = _targets(db)
        first = next(f for f in files if f.stem == source and f.relative_to(tree).parts[0] in targets)
        target = agentic / first.relative_to(tree).parent / f"{anchored}.csv"
        target.parent.mkdir(parents=True)
        target.write_text("".join(first.read_text().splitlines(keepends=True)[:1 + ANCHOR_ROWS]))
        (agentic / "README.md").write_text((extra / "README.md").read_text())
        r = run([PACE, "ingest", str(agentic), "--db", str(db), "--no-progress", "--json"], timeout=timeout, cap=cap)
        steps["add_anchor_model"] = {**_public(r), "model": anchored, "rows": (_json(r) or {}).get("rows_written")}
        print(f"[{n_models}] add_anchor_model: {_brief(steps['add_anchor_model'])}", flush=True)
        save(res)
    if "lookups" in want and db.exists():
        anchored = steps.get("add_anchor_model", {}).get("model") or "-"
        r = run([PY, __file__, "--probe-lookups", str(db), names[len(names) // 2], "NeverSeenModel", anchored,
                 str(args.calls)], timeout=timeout, cap=cap)
        steps["lookups"] = {**_public(r), **(_json(r) or {})}
        print(f"[{n_models}] lookups: {_brief(steps['lookups'])}", flush=True)
        save(res)
    if "lookups_default" in want and args.lookup_default_fit_args and db.exists():
        f = run([PACE, "fit", *args.lookup_default_fit_args.split(), "--db", str(db), "--json"],
                timeout=args.fit_timeout, cap=cap)
        step = {"fit": {**_public(f), "args": args.lookup_default_fit_args}}
        if f["rc"] == 0:
            r = run([PY, __file__, "--probe-lookups", str(db), names[len(names) // 2], "NeverSeenModel",
                     steps.get("add_anchor_model", {}).get("model") or "-", str(args.calls)], timeout=timeout, cap=cap)
            step.update({**_public(r), **(_json(r) or {})})
        steps["lookups_default_fit"] = step
        print(f"[{n_models}] lookups_default_fit: {_brief(step)}", flush=True)
        save(res)
    return res


def _tree_rows(db: Path, tree: Path) -> int | None:
    """The rows an earlier run ingested from ``tree`` (the floor step run alone appends as many)."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT sum(n_rows) FROM score_files WHERE tree = ?", [str(tree.resolve())]).fetchall()[0][0]
    finally:
        con.close()


def _targets(db: Path) -> set[str]:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return {b for (b,) in con.execute("SELECT benchmark FROM benchmarks WHERE role = 'target'").fetchall()}
    finally:
        con.close()


def _unused_name(db: Path, stem: str) -> str:
    """``stem``, else ``stem-2``, ``stem-3``, ...: the first name with no score rows in ``db``."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        taken = {m for (m,) in con.execute("SELECT DISTINCT model FROM score_sources WHERE model LIKE ?",
                                           [f"{stem}%"]).fetchall()}
    finally:
        con.close()
    return next(name for name in [stem] + [f"{stem}-{k}" for k in range(2, 10_000)] if name not in taken)


def _brief(step: dict) -> str:
    keys = ("wall_s", "cpu_s", "peak_rss_mib", "rows_per_s", "killed", "error", "extrapolated_wall_s")
    shown = {k: step[k] for k in keys if step.get(k) is not None}
    for k in ("predictions", "predictions_stored", "plan_new_model"):
        if k in step:
            shown[k] = {q: step[k][q] for q in ("p50_ms", "p95_ms")}
    return json.dumps(shown)


# ------------------------------------------------------------------------------ plot and table
def plot(results: dict, path: Path = PLOT) -> Path | None:
    sys.path.insert(0, str(REPO))
    from warehouse.plots import pyplot

    plt = pyplot()
    sizes = sorted(results.get("sizes", {}).values(), key=lambda s: s.get("rows") or 0)
    def wall(step):
        return lambda s: s["steps"].get(step, {}).get("wall_s") if s["steps"].get(step, {}).get("rc") == 0 else None

    def p50(step, what):
        return lambda s: ((s["steps"].get(step, {}).get(what) or {}).get("p50_ms") or 0) / 1000 or None

    series = {
        "ingest (ours)": wall("ingest"),
        "DuckDB read_csv (peer)": wall("duckdb_csv"),
        "polars scan_csv (peer)": wall("polars"),
        "pandas loop (peer)": lambda s: wall("pandas")(s) if not s["steps"].get("pandas", {}).get("killed") else None,
        "DuckDB append alone (floor)": wall("floor"),
        "re-ingest (no-op)": wall("reingest"),
        "add one model": wall("add_model"),
        "instance_stats (stored table)": wall("stats"),
        "instance_stats_live (the rule)": wall("stats_live"),
        "pace status": wall("status"),
        "pace fit": wall("fit"),
        "predictions view, one model (p50)": p50("lookups", "predictions"),
        "stored predictions, one model (p50)": p50("lookups", "predictions_stored"),
        "predictions, every model": lambda s: (s["steps"].get("lookups", {}).get("predictions_every_model")
                                               or {}).get("s"),
        "predictions, every model as `pace export` reads them": lambda s: (
            s["steps"].get("lookups", {}).get("predictions_every_model_export") or {}).get("s"),
        "anchors' estimate stored, one model (p50)": p50("lookups", "anchor_estimate_stored"),
    }
    fig, ax = plt.subplots(figsize=(10.5, 5))
    for k, (label, get) in enumerate(series.items()):
        pts = [(s["rows"], get(s)) for s in sizes if s.get("rows") and get(s)]
        if pts:      # past the 10 colours of the cycle, dashed lines with square marks tell the series apart
            ax.plot(*zip(*pts), marker="o" if k < 10 else "s", linestyle="-" if k < 10 else "--", label=label)
    extra = [(s["rows"], s["steps"]["pandas"]["extrapolated_wall_s"]) for s in sizes
             if s.get("rows") and s["steps"].get("pandas", {}).get("extrapolated_wall_s")]
    if extra:
        ax.plot(*zip(*extra), marker="o", linestyle="none", markerfacecolor="none", color="grey",
                label="pandas loop, extrapolated (killed at the RSS cap)")
    ax.set(xscale="log", yscale="log", xlabel="score rows in the warehouse", ylabel="seconds (wall)",
           title="Pace Warehouse at scale (SYNTHETIC trees, 2 cores)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))     # beside the lines, not over them
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def _rate(step: dict) -> float | None:
    return step.get("rows_per_s") if step.get("rc") == 0 else None


def _load(step: dict) -> str:
    return f"{step['load_before'][0]:.0f}" if step.get("load_before") else "-"


def table(results: dict) -> str:
    """The README table (markdown): every figure of a size from one run, the load average beside it."""
    head = ("| models | rows | ingest s (CPU s) | ours M rows/s | DuckDB read_csv | polars scan_csv | pandas loop "
            "| ours / pandas | ours / fastest peer, wall (CPU) | DuckDB append floor s (CPU) | ingest peak RSS "
            "| instance_stats s: stored / live | status / doctor --check s | predictions p50 ms: stored / view | anchors' estimate p50 ms: stored / view | pace fit "
            "| load (ingest, peers) |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for s in sorted(results.get("sizes", {}).values(), key=lambda s: s["models"]):
        st = s["steps"]
        ing, fit = st.get("ingest", {}), st.get("fit", {})
        ours = _rate(ing)
        peers = {name: _rate(st.get(name, {})) for name in ("duckdb_csv", "polars", "pandas")}
        shown = {k: f"{v / 1e6:.2f}" if v else "-" for k, v in peers.items()}
        pandas = peers["pandas"]
        fastest = max((k for k in ("duckdb_csv", "polars") if peers[k]), key=lambda k: peers[k], default=None)
        vs_fast = "-"
        if ours and fastest:
            peer = st[fastest]
            vs_fast = f"{peer['wall_s'] / ing['wall_s']:.2f}x ({peer['cpu_s'] / ing['cpu_s']:.2f}x) of {fastest}"
        floor = st.get("floor", {})
        fit_s = f"{fit['wall_s']:.0f} s, {fit['peak_rss_mib'] / 1024:.1f} GiB" if fit.get("rc") == 0 else "-"
        pred = " / ".join(str((st.get("lookups", {}).get(k) or {}).get("p50_ms", "-"))
                          for k in ("predictions_stored", "predictions"))
        anchors = " / ".join(str((st.get("lookups", {}).get(k) or {}).get("p50_ms", "-"))
                             for k in ("anchor_estimate_stored", "anchor_estimate_view"))
        sd = " / ".join(f"{st[k]['wall_s']:.2f}" if k in st else "-" for k in ("status", "doctor"))
        stats = " / ".join(f"{st[k]['wall_s']:.2f}" if k in st else "-" for k in ("stats", "stats_live"))
        loads = "/".join(_load(st.get(k, {})) for k in ("ingest", "duckdb_csv", "polars", "pandas"))
        lines.append(
            f"| {s['models']} | {s.get('rows', 0):,} | {ing.get('wall_s', 0):.1f} ({ing.get('cpu_s', 0):.0f}) | "
            f"{(ours or 0) / 1e6:.2f} | {shown['duckdb_csv']} | {shown['polars']} | {shown['pandas']} | "
            f"{f'{ours / pandas:.1f}x' if ours and pandas else '-'} | {vs_fast} | "
            f"{floor.get('wall_s', '-')} ({floor.get('cpu_s', '-')}) | {ing.get('peak_rss_mib', 0) / 1024:.1f} GiB | "
            f"{stats} | {sd} | {pred} | {anchors} | {fit_s} | {loads} |")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", "--models", dest="models", default="100,300,1000",
                        help="tree sizes (models), comma-separated")
    parser.add_argument("--scale", type=float, default=5.87, help="generator scale: 5.87 ~ 100k source instances")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", default=",".join(DEFAULT_STEPS),
                        help=f"comma-separated subset of {','.join(STEPS)} (default: all but matrices)")
    parser.add_argument("--work", type=Path, default=None, help="folder for trees and warehouses (default: a temp "
                        "folder, removed at the end unless --keep)")
    parser.add_argument("--keep", action="store_true", help="keep trees and warehouses")
    parser.add_argument("--fresh", action="store_true", help="drop the sizes' earlier figures first, so that every "
                        "figure of a size comes from this run")
    parser.add_argument("--rss-cap-gib", type=float, default=10.0, help="kill a step above this resident memory")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per step")
    parser.add_argument("--fit-timeout", type=float, default=1200.0, help="seconds for `pace fit` (goal: 600 at "
                        "1,000 models)")
    parser.add_argument("--fit-args", default="", help="arguments for `pace fit` (default: none)")
    parser.add_argument("--lookup-fit-args",
                        default="--method compat --no-intervals --task abs --sources planbench,mmmu,visualpuzzles",
                        help="if the fit fails, fit with these arguments so the lookups have proxies ('' = no)")
    parser.add_argument("--lookup-default-fit-args",
                        default="--method default --no-intervals --task abs --sources planbench,mmmu,visualpuzzles",
                        help="the default-method fit of the lookups_default step")
    parser.add_argument("--calls", type=int, default=20, help="calls per lookup for p50/p95")
    parser.add_argument("--plot", action="store_true", help="only redraw the plot (and print the table) from the JSON")
    parser.add_argument("--probe-pandas", metavar="TREE", help=argparse.SUPPRESS)
    parser.add_argument("--probe-matrices", metavar="DB", help=argparse.SUPPRESS)
    parser.add_argument("--probe-duckdb-csv", metavar="TREE", help=argparse.SUPPRESS)
    parser.add_argument("--probe-polars", metavar="TREE", help=argparse.SUPPRESS)
    parser.add_argument("--probe-floor", nargs=2, metavar=("ROWS", "FILES"), help=argparse.SUPPRESS)
    parser.add_argument("--probe-lookups", nargs=5, metavar=("DB", "MODEL", "NEW_MODEL", "ANCHOR_MODEL", "CALLS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe_pandas:
        return probe_pandas(args.probe_pandas)
    if args.probe_matrices:
        return probe_matrices(args.probe_matrices)
    for probe, value in ((probe_duckdb_csv, args.probe_duckdb_csv), (probe_polars, args.probe_polars),
                         (probe_floor, args.probe_floor)):
        if value:
            return probe(*value) if isinstance(value, list) else probe(value)
    if args.probe_lookups:
        db, model, new_model, anchor_model, calls = args.probe_lookups
        return probe_lookups(db, model, new_model, anchor_model, int(calls))
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    if not args.plot:
        args.steps = [s for s in args.steps.split(",") if s]
        unknown = sorted(set(args.steps) - set(STEPS))
        if unknown:
            parser.error(f"unknown steps {unknown}; known: {', '.join(STEPS)}")
        # the bench replaces its tree-N / wh-N / extra-N folders in here
        work = claim(args.work or Path(tempfile.mkdtemp(prefix="pace-scale-")), "pace-scale-work")
        results.update({"machine": f"{platform.machine()}, {os.cpu_count()} cores, "
                                   f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / GIB:.0f} GiB",
                        "note": "SYNTHETIC trees (ingest.synthetic); wall seconds of separate processes, on a "
                                "machine shared with other work: see each step's load_before/load_after"})
        results.setdefault("sizes", {})
        try:
            for n in [int(x) for x in args.models.split(",")]:
                old = {} if args.fresh else results["sizes"].get(str(n), {})

                def save(entry: dict, n=n, old=old) -> None:
                    results["sizes"][str(n)] = {**old, **entry, "steps": {**old.get("steps", {}), **entry["steps"]}}
                    RESULTS.write_text(json.dumps(results, indent=2) + "\n")

                save(measure_size(n, args, work, save))
        finally:
            if not args.keep and args.work is None:
                shutil.rmtree(work, ignore_errors=True)
        print(f"wrote {RESULTS.relative_to(REPO)}")
    out = plot(results)
    print(f"plot -> {out.relative_to(REPO)} ({out.stat().st_size // 1024} KiB)")
    print(table(results))


if __name__ == "__main__":
    main()
