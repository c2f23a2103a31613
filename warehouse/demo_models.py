"""Evaluation stage of `pace demo`: the LOOCV table of both methods on the demo warehouse."""
from __future__ import annotations

from pathlib import Path

from warehouse.evaluate import EvalRequest, metrics_rows, plot_predictions, run_abs, write_predictions_csv
from warehouse.output import console, print_rows


def _evaluate(con, db: Path) -> None:
    out = Path("out") / "demo"
    for method in ("compat", "default"):
        console.rule(f"[bold]4. leave-one-model-out evaluation, Goal A, method {method}")
        with console.status(f"evaluating {method} (C=100, B=100) ..."):
            run_id = run_abs(con, EvalRequest(method=method, count=100, B=100, seed=42))
        write_predictions_csv(con, run_id, out / method / "abs_predictions.csv")
        plot_predictions(con, run_id, out / method, f"Goal A {method} C=100 B=100 (demo)")
        print_rows(["target", "MAE (pp)", "Spearman", "Pearson", "R²"], metrics_rows(con, run_id),
                   title=f"{method} [{run_id}]", digits=3)
    console.print(f"predictions and plots -> {out}/", highlight=False)


def demo_stages():
    return [_evaluate]
