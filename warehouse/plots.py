"""The plots of evaluation runs and sweeps: PNG files drawn from stored rows (matplotlib, Agg backend)."""
from __future__ import annotations

from pathlib import Path

import duckdb

from warehouse.evaluate import metrics_rows, pair_metrics_rows


def pyplot():
    """``matplotlib.pyplot`` on the file-only Agg backend. Imported on first use: plots are optional work
    (``--plots``) and matplotlib costs ~0.5 s to import."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_pair_margins(con: duckdb.DuckDBPyConnection, run_id: str, path: Path, title: str) -> Path:
    """True margin (pp) against predicted margin, one panel per target, green correct / red wrong."""
    plt = pyplot()

    data = con.execute("""
        SELECT target, list(true_margin * 100), list(pred_margin),
               list(neutral OR (pred_margin > 0) = (true_margin > 0))
        FROM loocv_pair_predictions
        WHERE run_id = ? AND abs(true_margin) >= 1e-9 AND pred_margin IS NOT NULL
        GROUP BY target ORDER BY target""", [run_id]).fetchall()
    accuracy = {t: acc for t, acc, _ in pair_metrics_rows(con, run_id)}
    cols = 2
    rows_n = max(1, (len(data) + 1) // 2)
    fig, axes = plt.subplots(rows_n, cols, figsize=(10, 4.5 * rows_n), squeeze=False)
    for ax, (target, true_m, pred_m, ok) in zip(axes.flat, data):
        colors = ["tab:green" if c else "tab:red" for c in ok]
        ax.scatter(true_m, pred_m, s=10, c=colors, alpha=0.7)
        ax.axhline(0, color="grey", lw=0.6)
        ax.axvline(0, color="grey", lw=0.6)
        ax.set_title(f"{target}  accuracy {accuracy.get(target, float('nan')):.1f}%", fontsize=9)
        ax.set_xlabel("true margin (pp)")
        ax.set_ylabel("predicted margin (logit)")
    for ax in list(axes.flat)[len(data):]:
        ax.axis("off")
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path




def plot_predictions(con: duckdb.DuckDBPyConnection, run_id: str, out_dir: Path, title: str) -> list[Path]:
    """One predicted-vs-actual PNG per target plus a grid of all targets (abs_loocv_fit.png)."""
    plt = pyplot()

    data = con.execute("""
        SELECT target, list(model ORDER BY model), list(predicted ORDER BY model), list(actual ORDER BY model)
        FROM loocv_predictions
        WHERE run_id = ? AND predicted IS NOT NULL AND actual IS NOT NULL   -- masked truths are not drawn
        GROUP BY target ORDER BY target""", [run_id]).fetchall()
    metrics = {t: (mae, sp) for t, mae, sp, _, _ in metrics_rows(con, run_id)}
    out_dir.mkdir(parents=True, exist_ok=True)

    def draw(ax, target, models, pred, actual):
        pred_pp = [100 * v for v in pred]
        act_pp = [100 * v for v in actual]
        ax.scatter(act_pp, pred_pp, s=28)
        for name, a, p in zip(models, act_pp, pred_pp):
            ax.annotate(name, (a, p), fontsize=6, alpha=0.7, xytext=(3, 2), textcoords="offset points")
        lo, hi = min(act_pp + pred_pp) - 3, max(act_pp + pred_pp) + 3
        ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, ls="--")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        mae, sp = metrics.get(target, (float("nan"), float("nan")))
        ax.set_title(f"{target}  MAE {mae:.2f} pp  Spearman {sp:.3f}", fontsize=9)
        ax.set_xlabel("actual (%)")
        ax.set_ylabel("predicted (%)")

    paths = []
    for target, models, pred, actual in data:
        fig, ax = plt.subplots(figsize=(5, 5))
        draw(ax, target, models, pred, actual)
        fig.suptitle(title, fontsize=9)
        fig.tight_layout()
        path = out_dir / f"abs_loocv_{target}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    if data:
        cols = 2
        rows_n = (len(data) + 1) // 2
        fig, axes = plt.subplots(rows_n, cols, figsize=(10, 5 * rows_n), squeeze=False)
        for ax, item in zip(axes.flat, data):
            draw(ax, *item)
        for ax in list(axes.flat)[len(data):]:
            ax.axis("off")
        fig.suptitle(title)
        fig.tight_layout()
        path = out_dir / "abs_loocv_fit.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def plot_sweep(results: list[dict], path: Path) -> Path:
    """Average MAE and Spearman of sweep ``results`` (method, count, mae_pp, spearman) against the budget."""
    plt = pyplot()

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for name in dict.fromkeys(r["method"] for r in results):
        rows = [r for r in results if r["method"] == name]
        ax1.plot([r["count"] for r in rows], [r["mae_pp"] for r in rows], marker="o", label=name)
        ax2.plot([r["count"] for r in rows], [r["spearman"] for r in rows], marker="o", label=name)
    ax1.set(xlabel="instance budget C", ylabel="average MAE (pp)", title="LOOCV error vs budget")
    ax2.set(xlabel="instance budget C", ylabel="average Spearman", title="LOOCV rank agreement vs budget")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
