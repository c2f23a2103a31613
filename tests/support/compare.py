"""Comparison of a ``models.compat.goal_a`` result with a published reference run (test-only)."""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict

import numpy as np

from .reference import read_log_table, read_predictions, read_selections


def compare_predictions(res, run: Path) -> Dict[str, object]:
    """Per-target metric deltas vs the log table, and prediction agreement vs the CSV.

    ``off_1pp`` lists the predictions more than 1 pp from the reference: [model, target, ours − ref].
    """
    csv_name = "abs_fit_all_predictions.csv" if res.mode == "fit" else "abs_predictions.csv"
    ref = read_predictions(run / csv_name)
    table = read_log_table(run / "log.txt")
    diffs, act, off = [], [], []
    for i, mdl in enumerate(res.models):
        for t_i, t in enumerate(res.targets):
            p, a = ref[(mdl, t)]
            diffs.append(res.pred[i, t_i] - p)
            act.append(res.actual[i, t_i] - a)
            if abs(diffs[-1]) > 0.01:
                off.append([mdl, t, float(diffs[-1])])
    diffs = np.abs(np.array(diffs))
    per_t = {}
    for t in res.targets:
        per_t[t] = {"d_mae": res.metrics[t]["mae"] - table[t]["mae"],
                    "d_spearman": res.metrics[t]["spearman"] - table[t]["spearman"],
                    "mae": res.metrics[t]["mae"], "ref_mae": table[t]["mae"],
                    "spearman": res.metrics[t]["spearman"], "ref_spearman": table[t]["spearman"]}
    return {"per_target": per_t, "frac_within_1pp": float(np.mean(diffs <= 0.01)),
            "n_predictions": int(diffs.size), "off_1pp": off,
            "max_abs_diff": float(diffs.max()), "max_actual_diff": float(np.max(np.abs(act)))}


def selection_overlap(res, run: Path, X: np.ndarray, col_meta) -> Dict[str, float]:
    """Multiset overlap of selected columns' score vectors over each fold's training rows.

    For every (fold, target): the multiset of X[train, col] vectors of our
    selected columns (H and D rows, overlap columns twice, as in the dump) vs
    the dump's rows (matched by (benchmark, subdir, instance_id)).
    Returns mean / min overlap fraction and raw id overlap.
    """
    key_to_col = {m: j for j, m in enumerate(col_meta)}
    n = X.shape[0]
    by_ft = defaultdict(list)
    for fs in res.selections:
        by_ft[(fs.fold, fs.target)] = list(fs.H.cols) + list(fs.D.cols)
    fracs, id_fracs, wrel = [], [], []
    for fold in sorted({k[0] for k in by_ft}):
        if fold >= 0:
            mdl = res.models[fold]
            path = run / "selections" / "abs_loocv" / mdl / "selections_C100.csv"
            train = [j for j in range(n) if j != fold]
        else:
            path = run / "selections" / "abs_fit" / "selections_C100.csv"
            train = list(range(n))
        rows = read_selections(path)
        ref_cols = defaultdict(list)
        # dump order: all H rows (targets in order), then all D-pt rows
        side, prev = 0, None
        ref_w = defaultdict(dict)
        for r in rows:
            ti = res.targets.index(r["target"])
            if prev is not None and ti < prev:
                side = 1
            prev = ti
            c = key_to_col[(r["benchmark"], r["subdir"], r["instance_id"])]
            ref_cols[r["target"]].append(c)
            if r.get("weight") not in (None, ""):
                ref_w[(r["target"], side)][c] = float(r["weight"])
        for fs in res.selections:
            if fs.fold != fold:
                continue
            for sd, ss in ((0, fs.H), (1, fs.D)):
                rw = ref_w.get((fs.target, sd), {})
                for c, w in zip(ss.cols.tolist(), ss.weight.tolist()):
                    if c in rw:
                        wrel.append(abs(w - rw[c]) / max(abs(rw[c]), 1e-12))
        for t in res.targets:
            ours = by_ft[(fold, t)]
            theirs = ref_cols[t]
            vo = Counter(X[train, c].tobytes() for c in ours)
            vt = Counter(X[train, c].tobytes() for c in theirs)
            inter = sum((vo & vt).values())
            fracs.append(inter / max(len(theirs), 1))
            io, it = Counter(ours), Counter(theirs)
            id_fracs.append(sum((io & it).values()) / max(len(theirs), 1))
    return {"mean": float(np.mean(fracs)), "min": float(np.min(fracs)),
            "frac_ge_95": float(np.mean(np.array(fracs) >= 0.95)),
            "id_mean": float(np.mean(id_fracs)),
            "weights_rel_1e-6": float(np.mean(np.array(wrel) <= 1e-6)) if wrel else float("nan"),
            "weights_rel_1e-2": float(np.mean(np.array(wrel) <= 1e-2)) if wrel else float("nan")}
