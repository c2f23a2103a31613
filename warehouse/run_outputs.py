"""The files of a stored evaluation run, written into an output folder (``--out``): the predictions CSV
in the published columns and, on request, the plots (:mod:`warehouse.plots`). The folder's files are
replaced only as :mod:`warehouse.outputs` allows (never a file this command did not write)."""
from __future__ import annotations

import csv
from pathlib import Path

import duckdb

from warehouse import settings
from warehouse.outputs import check_names, output_run
from warehouse.plots import plot_pair_margins, plot_predictions

CSV_NAME = {"abs": "abs_predictions.csv", "pair": "pair_predictions.csv"}
PAIR_PLOT = "pair_loocv_scatter.png"


class RunOutputs:
    """The outputs of a ``task`` run into ``folder``; refuses at once (before the run) a folder whose
    names are taken by files this command did not write."""

    def __init__(self, task: str, folder, plots: bool = False):
        self.task, self.folder, self.plots = task, settings.user_path(folder), plots
        self.group = f"loocv-{task}"
        check_names(self.folder, self.group, [CSV_NAME[task]] + ([PAIR_PLOT] if plots and task == "pair" else []))

    def write(self, con: duckdb.DuckDBPyConnection, run_id: str, title: str) -> list[Path]:
        """Write the run's files; returns their paths in the folder (the CSV first)."""
        with output_run(self.folder, self.group, note=run_id) as staging:
            if self.task == "abs":
                written = [write_predictions_csv(con, run_id, staging / CSV_NAME["abs"])]
                written += plot_predictions(con, run_id, staging, title) if self.plots else []
            else:
                written = [write_pair_predictions_csv(con, run_id, staging / CSV_NAME["pair"])]
                written += [plot_pair_margins(con, run_id, staging / PAIR_PLOT, title)] if self.plots else []
        return [self.folder / p.name for p in written]


def write_pair_predictions_csv(con, run_id: str, path: Path) -> Path:
    """pair_predictions.csv with the published columns: every ordered pair, held-out-major, then target."""
    rows = con.execute("""
        SELECT p.model, p.opponent, p.target, p.true_margin,
               CASE WHEN p.true_margin IS NULL THEN NULL WHEN abs(p.true_margin) < 1e-9 THEN 'tie'
                    WHEN p.true_margin > 0 THEN p.model ELSE p.opponent END,
               p.pred_margin, p.p_win,
               CASE WHEN p.neutral THEN 'neutral' WHEN p.pred_margin > 0 THEN p.model ELSE p.opponent END
        FROM loocv_pair_predictions p JOIN loocv_runs r USING (run_id)
        WHERE run_id = ?
        ORDER BY list_position(r.models, p.model), list_position(r.models, p.opponent), p.target""",
                       [run_id]).fetchall()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["held_out", "other", "target", "true_margin", "true_winner", "pred_margin",
                         "pred_prob_heldout_wins", "pred_winner"])
        writer.writerows(rows)
    return path


def write_predictions_csv(con, run_id: str, path: Path) -> Path:
    """abs_predictions.csv with the published columns, model-major then target."""
    rows = con.execute("""
        SELECT p.model, p.target, p.predicted, p.actual, p.abs_error
        FROM loocv_predictions p JOIN loocv_runs r USING (run_id)
        WHERE run_id = ? ORDER BY list_position(r.models, p.model), p.target""", [run_id]).fetchall()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["model", "target", "predicted", "actual", "abs_error"])
        writer.writerows(rows)
    return path


