"""Evaluation stage of `pace demo`: the LOOCV table of both methods on the demo warehouse."""
from __future__ import annotations

from pathlib import Path

from warehouse.evaluate import EvalRequest, metrics_rows, run_abs
from warehouse.fit import FitRequest, fit_and_store
from warehouse.output import console, print_rows
from warehouse.outputs import output_run
from warehouse.plots import plot_predictions
from warehouse.run_outputs import write_predictions_csv


def _evaluate(con, db: Path) -> None:
    out = Path("out") / "demo"
    for method in ("compat", "default"):
        console.rule(f"[bold]4. leave-one-model-out evaluation, Goal A, method {method}")
        with console.status(f"evaluating {method} (C=100, B=100) ..."):
            run_id = run_abs(con, EvalRequest(method=method, count=100, B=100, seed=42))
        with output_run(out / method, "demo", note=run_id) as staging:
            write_predictions_csv(con, run_id, staging / "abs_predictions.csv")
            plot_predictions(con, run_id, staging, f"Goal A {method} C=100 B=100 (demo)")
        print_rows(["target", "MAE (pp)", "Spearman", "Pearson", "R²"], metrics_rows(con, run_id),
                   title=f"{method} [{run_id}]", digits=3)
    console.print(f"predictions and plots -> {out}/", highlight=False)


def _predict_held_out(con, db: Path) -> None:
    """Fit without one model, then predict it from its score rows alone (a plain query)."""
    held_out = con.execute("SELECT model FROM model_rows() ORDER BY row DESC LIMIT 1").fetchall()[0][0]
    console.rule(f"[bold]5. fit on every model but {held_out}, then predict {held_out}")
    with console.status("fitting (default, C=100, B=100) ..."):
        report = fit_and_store(con, FitRequest(method="default", count=100, B=100, seed=42, exclude=[held_out]))
    console.print(f"{report.fit_id}: trained on {len(report.models)} models; stored rows reproduce the fitted "
                  f"predictor to {max(report.view_gap.values()):.1e}", highlight=False)
    rows = con.execute("""
        SELECT p.target, p.predicted * 100, p.low * 100, p.high * 100, t.mean_observed * 100, p.coverage
        FROM predictions p LEFT JOIN target_means t ON t.model = p.model AND t.target = p.target
        WHERE p.model = ? ORDER BY p.target""", [held_out]).fetchall()
    print_rows(["target", "predicted (%)", "low (%)", "high (%)", "actual (%)", "coverage"], rows,
               title=f"{held_out}: SELECT * FROM predictions WHERE model = '{held_out}'", digits=1)


def demo_stages():
    return [_evaluate, _predict_held_out]
