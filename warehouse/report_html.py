"""The HTML of `pace report`: hand-written inline SVG, tables and a little vanilla JavaScript.

Everything is drawn here, in Python, as static SVG and tables, so the page reads without
JavaScript (and prints); the inline script only adds what helps on screen: a tooltip with a mark's
numbers on hover (each mark also carries an SVG ``<title>``, the browser's own tooltip) and a filter
that shows one target. The page fetches nothing: no fonts, no libraries, the data inline as JSON
(``<script type="application/json" id="pace-data">``) for anyone who wants the numbers.

Marks carry classes the browser test counts: ``train-dot`` / ``pred-mark`` / ``pred-interval`` in the
strips, ``plan-step`` in the plan chart, ``loocv-point`` in the scatters; every chart is an
``svg.chart`` with ``data-chart`` naming it and ``data-target`` its target.
"""
from __future__ import annotations

import json
from html import escape

#: the first lines of a page `pace report` wrote (a later report may replace only such a file)
MARKER = '<meta name="generator" content="pace report">'


# one colour per target, in target order (colour-blind safe: Okabe-Ito)
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
BASELINES = ("mean", "random-c", "bench-ridge")

CSS = """
:root { --ink: #1d2430; --muted: #5b6677; --line: #d5dae1; --soft: #f3f5f8; --accent: #0b5cad; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       margin: 0; background: #fff; }
header { background: var(--soft); border-bottom: 1px solid var(--line); padding: 18px 32px; }
header h1 { margin: 0 0 4px; font-size: 22px; }
header p { margin: 2px 0; color: var(--muted); }
main { padding: 8px 32px 40px; max-width: 1180px; }
h2 { font-size: 19px; margin: 28px 0 8px; border-bottom: 2px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 16px; margin: 18px 0 6px; }
.note { color: var(--muted); margin: 4px 0; }
.warn { background: #fff4e5; border-left: 4px solid #e69f00; padding: 6px 10px; margin: 8px 0; }
.synthetic { background: #fde8e8; border-left: 4px solid #c0392b; padding: 6px 10px; margin: 8px 0; }
table { border-collapse: collapse; margin: 6px 0 12px; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 10px; text-align: right; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td.l, th.l { text-align: left; }
tr.avg td { font-weight: 600; }
.strips, .scatters { display: flex; flex-wrap: wrap; gap: 6px 18px; }
svg.chart { background: #fff; overflow: visible; }
svg text { font: 11px system-ui, sans-serif; fill: var(--muted); }
svg text.title { fill: var(--ink); font-weight: 600; font-size: 12px; }
.axis { stroke: #9aa3af; stroke-width: 1; }
.grid { stroke: #eceff3; stroke-width: 1; }
.train-dot { fill: #8c96a3; fill-opacity: .65; stroke: #fff; stroke-width: .8; }
.pred-interval { stroke-width: 6; stroke-linecap: round; stroke-opacity: .35; }
.pred-mark { stroke: #fff; stroke-width: 1.2; }
.loocv-point { fill-opacity: .8; stroke: #fff; stroke-width: .8; }
.diag { stroke: #b9c0ca; stroke-dasharray: 4 3; }
.plan-line { fill: none; stroke-width: 2; }
.plan-step { stroke: #fff; stroke-width: 1; }
[data-tip]:hover { stroke: var(--ink); stroke-width: 1.5; }
.js-only { display: none; }
.js .js-only { display: inline-block; }
#tip { position: fixed; pointer-events: none; background: #1d2430; color: #fff; padding: 4px 8px;
       border-radius: 4px; font-size: 12px; white-space: pre; display: none; z-index: 10; }
.filter { margin: 10px 0; }
.hidden-by-filter { display: none !important; }
nav a { margin-right: 14px; }
"""

SCRIPT = """
(function () {
  document.documentElement.classList.add('js');
  var tip = document.getElementById('tip');
  document.querySelectorAll('[data-tip]').forEach(function (el) {
    var t = el.querySelector('title');
    if (t) { el.removeChild(t); }
    el.addEventListener('mousemove', function (ev) {
      tip.textContent = el.getAttribute('data-tip');
      tip.style.display = 'block';
      tip.style.left = (ev.clientX + 14) + 'px';
      tip.style.top = (ev.clientY + 12) + 'px';
    });
    el.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  });
  var select = document.getElementById('target-filter');
  if (select) {
    select.addEventListener('change', function () {
      var want = select.value;
      document.querySelectorAll('[data-target]').forEach(function (el) {
        var match = !want || el.getAttribute('data-target') === want;
        el.classList.toggle('hidden-by-filter', !match);
      });
    });
  }
})();
"""


def _e(value) -> str:
    return escape(str(value), quote=True)


def pct(value, digits: int = 1) -> str:
    return "–" if value is None else f"{100 * value:.{digits}f}"


def fmt(value, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _colour(targets: list[str], target: str) -> str:
    return PALETTE[targets.index(target) % len(PALETTE)] if target in targets else PALETTE[-1]


def _mark(tag: str, tip: str, **attrs) -> str:
    """An SVG element with a hover tip: ``data-tip`` for the script, ``<title>`` for the browser."""
    extra = " ".join(f'{k.rstrip("_").replace("_", "-")}="{_e(v)}"' for k, v in attrs.items())
    return f'<{tag} {extra} data-tip="{_e(tip)}"><title>{_e(tip)}</title></{tag}>'


def _table(header: list[str], rows: list[list], *, left: int = 1, row_class=None, attrs: str = "",
           row_target=None) -> str:
    """A table; ``row_target(k)`` names row k's target (the filter hides rows of other targets)."""
    head = "".join(f'<th class="l">{_e(h)}</th>' if i < left else f"<th>{_e(h)}</th>" for i, h in enumerate(header))
    body = []
    for k, row in enumerate(rows):
        cls = f' class="{row_class(k)}"' if row_class and row_class(k) else ""
        target = row_target(k) if row_target else None
        cls += f' data-target="{_e(target)}"' if target else ""
        cells = "".join(f'<td class="l">{c}</td>' if i < left else f"<td>{c}</td>" for i, c in enumerate(row))
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


# ----------------------------------------------------------------------------------------- charts
def strip_chart(target: str, colour: str, training: list[dict], prediction: dict, model: str) -> str:
    """One target: the training models' true scores as dots on a 0-100 % line, the model's
    prediction as a diamond with its interval as a bar."""
    w, h, left, right = 600, 74, 170, 20
    span = w - left - right

    def x(v: float) -> float:
        return left + span * min(max(v, 0.0), 1.0)

    parts = [f'<text class="title" x="0" y="30">{_e(target)}</text>',
             f'<line class="axis" x1="{left}" y1="52" x2="{left + span}" y2="52"/>']
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<line class="grid" x1="{x(tick):.1f}" y1="14" x2="{x(tick):.1f}" y2="52"/>'
                     f'<text x="{x(tick):.1f}" y="66" text-anchor="middle">{int(tick * 100)}%</text>')
    for k, t in enumerate(training):
        y = 40 - 6 * (k % 3)          # three rows, so close scores stay apart
        parts.append(_mark("circle", f"{t['model']} (training): {pct(t['score'])}%", class_="train-dot",
                           cx=f"{x(t['score']):.1f}", cy=y, r=4))
    p = prediction
    if p["predicted"] is not None:
        if p["low"] is not None and p["high"] is not None:
            parts.append(_mark("line", f"{model}: interval {pct(p['low'])}–{pct(p['high'])}%", class_="pred-interval",
                               x1=f"{x(p['low']):.1f}", y1=24, x2=f"{x(p['high']):.1f}", y2=24, stroke=colour))
        cx = x(p["predicted"])
        tip = (f"{model}: predicted {pct(p['predicted'])}% (interval {pct(p['low'])}–{pct(p['high'])}%), "
               f"coverage {pct(p['coverage'], 0)}%")
        parts.append(_mark("path", tip, class_="pred-mark", fill=colour,
                           d=f"M{cx:.1f} 16 L{cx + 7:.1f} 24 L{cx:.1f} 32 L{cx - 7:.1f} 24 Z"))
    return (f'<svg class="chart strip" data-chart="strip" data-target="{_e(target)}" width="{w}" height="{h}" '
            f'viewBox="0 0 {w} {h}" role="img" aria-label="{_e(model)} on {_e(target)}">{"".join(parts)}</svg>')


def plan_chart(plan: dict, targets: list[str]) -> str:
    """Cost against interval width: running the plan's benchmarks in the table's order (largest share
    first), the calls made so far (x) against the half-width the instances still owed leave (y), one
    line per target."""
    rows = [r for r in plan["per_benchmark"] if r["calls"]]
    if not rows:
        return ""
    w, h, left, bottom, top, legend = 640, 220, 48, 36, 16, 170
    total_calls = sum(r["calls"] for r in rows)
    remaining = {t: [] for t in plan["targets"]}
    for t in plan["targets"]:
        var = [((r["half_width"].get(t) or 0.0) ** 2) for r in rows]
        left_var = sum(var)
        remaining[t].append(left_var ** 0.5)
        for v in var:
            left_var = max(left_var - v, 0.0)
            remaining[t].append(left_var ** 0.5)
    ymax = max([max(v) for v in remaining.values()] + [1e-9])

    def x(calls: float) -> float:
        return left + (w - left - legend) * calls / max(total_calls, 1)

    def y(v: float) -> float:
        return top + (h - top - bottom) * (1 - v / ymax)

    parts = [f'<line class="axis" x1="{left}" y1="{h - bottom}" x2="{w - legend}" y2="{h - bottom}"/>',
             f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}"/>',
             f'<text x="{(w - legend + left) / 2:.0f}" y="{h - 6}" text-anchor="middle">calls made (of {total_calls}), '
             'largest share first</text>',
             f'<text x="12" y="{(h - bottom + top) / 2:.0f}" text-anchor="middle" '
             f'transform="rotate(-90 12 {(h - bottom + top) / 2:.0f})">± pp still owed</text>',
             f'<text x="{left - 4}" y="{top + 4}" text-anchor="end">{100 * ymax:.1f}</text>',
             f'<text x="{left - 4}" y="{h - bottom + 4}" text-anchor="end">0</text>']
    cum = [0]
    for r in rows:
        cum.append(cum[-1] + r["calls"])
    for k, t in enumerate(plan["targets"]):
        colour = _colour(targets, t)
        parts.append(f'<rect x="{w - legend + 16}" y="{top + 14 * k}" width="10" height="10" fill="{colour}"/>'
                     f'<text x="{w - legend + 31}" y="{top + 9 + 14 * k}">{_e(t)}</text>')
        pts = " ".join(f"{x(c):.1f},{y(v):.1f}" for c, v in zip(cum, remaining[t]))
        parts.append(f'<polyline class="plan-line" data-target="{_e(t)}" stroke="{colour}" points="{pts}"/>')
        for k, r in enumerate(rows):
            tip = (f"{t}: after {r['benchmark']} ({cum[k + 1]} calls so far) ±{100 * remaining[t][k + 1]:.1f} pp "
                   f"still owed")
            parts.append(_mark("circle", tip, class_="plan-step", data_target=t, fill=colour,
                               cx=f"{x(cum[k + 1]):.1f}", cy=f"{y(remaining[t][k + 1]):.1f}", r=3.5))
    return (f'<svg class="chart plan" data-chart="plan" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
            f'aria-label="calls against interval half-width">{"".join(parts)}</svg>')


def scatter_chart(run: dict, target: str, colour: str) -> str:
    """One (split, target) of a LOOCV run: each held-out model's prediction against its true score."""
    pts = [p for p in run["points"] if p["target"] == target]
    w = h = 230
    pad = 34
    values = [p["predicted"] for p in pts] + [p["actual"] for p in pts] or [0.0, 1.0]
    margin = max(0.02, 0.08 * (max(values) - min(values)))
    lo, hi = max(0.0, min(values) - margin), min(1.0, max(values) + margin)

    def sx(v: float) -> float:
        return pad + (w - pad - 8) * (v - lo) / (hi - lo)

    def sy(v: float) -> float:
        return h - pad - (h - pad - 16) * (v - lo) / (hi - lo)

    parts = [f'<text class="title" x="{pad}" y="11">{_e(target)} · {_e(run["split"])}</text>',
             f'<line class="axis" x1="{pad}" y1="{h - pad}" x2="{w - 8}" y2="{h - pad}"/>',
             f'<line class="axis" x1="{pad}" y1="16" x2="{pad}" y2="{h - pad}"/>',
             f'<line class="diag" x1="{sx(lo):.1f}" y1="{sy(lo):.1f}" x2="{sx(hi):.1f}" y2="{sy(hi):.1f}"/>',
             f'<text x="{(w + pad) / 2:.0f}" y="{h - 8}" text-anchor="middle">true (%)</text>',
             f'<text x="10" y="{(h - pad + 16) / 2:.0f}" text-anchor="middle" '
             f'transform="rotate(-90 10 {(h - pad + 16) / 2:.0f})">predicted (%)</text>',
             f'<text x="{pad}" y="{h - pad + 13}" text-anchor="middle">{100 * lo:.0f}</text>',
             f'<text x="{sx(hi):.1f}" y="{h - pad + 13}" text-anchor="end">{100 * hi:.0f}</text>',
             f'<text x="{pad - 4}" y="{sy(hi) + 4:.1f}" text-anchor="end">{100 * hi:.0f}</text>']
    for p in pts:
        tip = (f"{p['model']}: predicted {pct(p['predicted'])}%, true {pct(p['actual'])}% "
               f"(error {100 * (p['predicted'] - p['actual']):+.1f} pp)")
        parts.append(_mark("circle", tip, class_="loocv-point", fill=colour, cx=f"{sx(p['actual']):.1f}",
                           cy=f"{sy(p['predicted']):.1f}", r=4))
    return (f'<svg class="chart scatter" data-chart="scatter" data-target="{_e(target)}" data-split="{_e(run["split"])}" '
            f'width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
            f'aria-label="LOOCV {_e(run["method"])} {_e(run["split"])} {_e(target)}">{"".join(parts)}</svg>')


def _range_why(p: dict) -> str:
    """Why a prediction is out of range: its release date, or its ability's distance beyond the range."""
    if p.get("range_reason") in ("release date", "few sources"):
        return p["range_reason"]
    return f"ability, {fmt(p['ability_distance'])} sd"


# --------------------------------------------------------------------------------------- sections
def model_html(section: dict, data: dict) -> str:
    model, targets = section["model"], data["targets"]
    level = section.get("interval_level") or data["interval_level"]
    out = [f'<section class="model" id="model-{_e(model)}"><h2>{_e(model)}</h2>']
    preds = section["predictions"]
    proxies, anchored = {}, [p for p in preds if p["method"] == "anchors"]
    for p in preds:
        if p["method"] != "anchors":
            proxies.setdefault((p["restricted"], p["fit_id"], p["method"], tuple(p["sources"])), []).append(p["target"])
    rows = []
    for p in preds:
        rows.append([_e(p["target"]), pct(p["predicted"]), f"{pct(p['low'])}–{pct(p['high'])}",
                     f"{pct(p['coverage'], 0)}% ({p['n_scored']}/{p['n_instances']})", pct(p["loocv_mae"]),
                     f"anchors: {p['anchors']}, {_e(p['prior'])} prior" if p["method"] == "anchors" else
                     ("restricted" if p["restricted"] else "full") + f" ({len(p['sources'])} sources)",
                     (f"yes, {_e(p['range_side'] or '')} ({_range_why(p)})" if p["out_of_range"] else "no")])
    out.append(_table(["target", "predicted (%)", f"{level:.0%} interval (%)", "coverage", "LOOCV MAE (pp)",
                       "proxy", "out of range"], rows, row_target=lambda k: preds[k]["target"]))
    for (restricted, fit_id, method, sources), which in proxies.items():
        out.append(f'<p class="note">{"Restricted" if restricted else "Full"} proxy for {_e(", ".join(which))}: '
                   f"{_e(method)} fit <code>{_e(fit_id)}</code> on {len(sources)} source benchmarks "
                   f"({_e(', '.join(sources))}).</p>")
    if anchored:
        out.append(f'<p class="note">Agentic anchors for {_e(", ".join(p["target"] for p in anchored))}: the '
                   "anchors item model's estimate from the model's own results on that many target instances, "
                   "starting from its prior (" + _e(", ".join(f"{p['target']} {p['prior']}" for p in anchored))
                   + "), not a source proxy.</p>")
    for note in section["notes"]:
        out.append(f'<p class="warn">{_e(note)}</p>')
    if section["missing_sources"] and proxies:
        out.append(f'<p class="note">{_e(model)} has scores for under half of the instances of '
                   f'{_e(", ".join(section["missing_sources"]))}; '
                   + ("a proxy restricted to the benchmarks it has answered "
                      f"({_e(section['restricted_fit'])})." if section["restricted_fit"] else
                      "the missing scores count as the training mean.") + "</p>")
    out.append('<h3>Prediction against the training models</h3><p class="note">Grey dots: the true score of '
               'every model the target\'s proxy was trained on (hover for names). Diamond: the prediction; bar: '
               'its interval.</p><div class="strips">')
    for p in preds:
        out.append(strip_chart(p["target"], _colour(targets, p["target"]), data["training"].get(p["target"], []),
                               p, model))
    out.append("</div>")
    out.append(plan_html(section["plan"], model, targets))
    out.append("</section>")
    return "".join(out)


def plan_html(plan: dict, model: str, targets: list[str]) -> str:
    out = ["<h3>What the next plan buys</h3>"]
    if not plan["calls"]:
        out.append(f'<p class="note">{_e(model)} is scored on every instance with a weight in the current fits: '
                   f"the plan is empty ({plan['zero_weight_left_out']} selected instances weigh 0 and are left "
                   "out).</p>")
    else:
        now = ", ".join(f"{t} ±{pct(plan['now'].get(t))}" for t in plan["targets"])
        n_bench = len(plan["per_benchmark"])
        out.append(f'<p class="note"><code>pace plan {_e(model)}</code>: {plan["calls"]} calls ({plan["instances"]} '
                   f"instances) across {n_bench} benchmark{'s' if n_bench != 1 else ''}. ± pp: how much wider "
                   "each target's interval stays while that benchmark's instances are owed "
                   f"(all outstanding: {_e(now)}).</p>")
    rows = [[_e(r["benchmark"]), r["calls"], r["instances"], pct(r["share"], 0) + "%",
             *[pct(r["half_width"].get(t)) for t in plan["targets"]]] for r in plan["per_benchmark"]]
    if rows:
        out.append(_table(["benchmark", "calls", "instances", "share"] + [f"±pp {t}" for t in plan["targets"]], rows))
    out.append(plan_chart(plan, targets))
    if plan.get("restricted"):
        r = plan["restricted"]
        out.append(f'<p class="note">Or, without running anything: a proxy restricted to the '
                   f'{len(r["sources"])} source benchmarks it has (without {_e(", ".join(r["missing"]))}).</p>')
    out.append(anchors_html(plan, model))
    return "".join(out)


def anchors_html(plan: dict, model: str) -> str:
    """The agentic anchors `pace plan --anchors K` lists per target: what they cost against the interval
    they start from (the anchors item model's estimate now, which their results narrow)."""
    k = plan["anchors_asked"]
    out = [f'<h3>Agentic anchors</h3><p class="note">Besides the sources: a few instances of the targets '
           f"themselves, run with the OpenHands benchmarks. Per target, the {k} that "
           f"<code>pace plan {_e(model)} --anchors {k}</code> lists (chosen a batch at a time, each the one that "
           "narrows the interval most given the ones before; their ids with <code>--json</code>), against the interval of the anchors item "
           "model's estimate now. After importing their results (<code>pace import openhands-index</code>) "
           "the estimate moves from its prior to them.</p>"]
    out += [f'<p class="warn">{_e(n)}</p>' for n in plan.get("notes", [])]
    anchors = plan.get("anchors") or []
    if not anchors:
        return "".join(out)

    def usd(a):
        cost = "–" if a["expected_cost"] is None else f"{a['expected_cost']:,.2f}"
        return cost + (f" ({a['unknown_cost']} of unknown cost)" if a["unknown_cost"] and a["listed"] else "")

    rows = [[_e(a["target"]), a["anchors_now"], _e(a["prior"]), pct(a["predicted"]),
             f"{pct(a['low'])}–{pct(a['high'])}",
             "–" if a["low"] is None or a["high"] is None else f"{100 * (a['high'] - a['low']):.1f}",
             a["listed"], usd(a)] for a in anchors]
    known = [a["expected_cost"] for a in anchors if a["expected_cost"] is not None]
    rows.append(["all targets", sum(a["anchors_now"] for a in anchors), "", "", "", "",
                 sum(a["listed"] for a in anchors), f"{sum(known):,.2f}" if known else "–"])
    out.append(_table(["target", "anchors run", "prior", "estimate now (%)", "interval now (%)", "width (pp)",
                       "anchors listed", "expected USD"], rows, attrs=' class="anchors"',
                      row_class=lambda i, n=len(rows): "avg" if i == n - 1 else "",
                      row_target=lambda i: anchors[i]["target"] if i < len(anchors) else None))
    return "".join(out)


def fit_html(data: dict) -> str:
    targets = data["targets"]
    out = ['<section id="fit"><h2>The fit</h2><h3>Current proxies</h3>']
    rows = [[_e(f["target"]), _e(f["method"]), f["budget"],
             f["n_instances"], f["trained_on"], f"{(f['interval_level'] or 0):.0%}", pct(f["loocv_mae"]),
             pct(f["loo_coverage"], 0), _e(f["fit_id"])] for f in data["fits"]]
    out.append(_table(["target", "method", "C", "instances", "trained on", "interval", "LOOCV MAE (pp)",
                       "LOO coverage (%)", "fit"], rows, left=1,
                      row_target=lambda k: data["fits"][k]["target"]))
    runs = data["loocv"]
    if not runs:
        out.append('<p class="warn">No LOOCV run is stored in this warehouse, so there is no held-out error to '
                   "show beyond the fit's own leave-one-out MAE above. Run <code>pace loocv abs</code> (and "
                   "<code>--method mean</code>, <code>random-c</code>, <code>bench-ridge</code> for the baselines, "
                   "<code>--split family|low-3|high-3</code> for extrapolation) "
                   "and build the report again.</p></section>")
        return "".join(out)
    level = data["interval_level"]
    out.append(f'<h3>Methods side by side (average over targets)</h3><p class="note">Latest stored run per method '
               f"and split: MAE (pp) / Spearman / coverage (%): the share of held-out truths inside the {level:.0%} "
               "interval the method's fit would give them, its offsets taken from the other models' residuals in "
               "the method's latest loo run (– without one). On loo the interval is built from the very residuals "
               f"it is judged on, so it holds near {level:.0%} by construction; the other splits test it on models "
               f"held out with their family or at an end of the ability range. Baselines: {', '.join(BASELINES)}.</p>")
    splits = sorted({r["split"] for r in runs}, key=lambda s: (s != "loo", s))
    shown_runs = sorted(runs, key=lambda r: splits.index(r["split"]))      # loo first, as in the table
    methods = sorted({r["method"] for r in runs}, key=lambda m: (m in BASELINES, m != "default", m))
    cell = {(r["method"], r["split"]): r["metrics"].get("AVERAGE", {}) for r in runs}
    rows = []
    for m in methods:
        row = [_e(m) + (" (baseline)" if m in BASELINES else "")]
        for s in splits:
            a = cell.get((m, s))
            row.append("–" if a is None else f"{pct(a.get('mae'), 2)} / {fmt(a.get('spearman'))} / "
                                              f"{pct(a.get('coverage'), 0)}")
        rows.append(row)
    out.append(_table(["method"] + splits, rows))
    fit_method = data["fits"][0]["method"] if data["fits"] else None
    shown = fit_method if any(r["method"] == fit_method for r in runs) else runs[0]["method"]
    out.append(f"<h3>{_e(shown)}: per target</h3>")
    for run in [r for r in shown_runs if r["method"] == shown]:
        items = sorted(run["metrics"].items(), key=lambda kv: (kv[0] == "AVERAGE", kv[0]))
        rows = [[_e(t), m.get("n") or "", pct(m.get("mae"), 2), fmt(m.get("spearman")), pct(m.get("coverage"), 0)]
                for t, m in items]
        out.append(f'<p class="note">split {_e(run["split"])} · run {_e(run["run_id"])} · {_e(run["created_at"])}</p>')
        out.append(_table(["target", "models", "MAE (pp)", "Spearman", "coverage (%)"], rows,
                          row_class=lambda k, n=len(rows): "avg" if k == n - 1 else "",
                          row_target=lambda k, items=items: items[k][0] if items[k][0] != "AVERAGE" else None))
    out.append(f'<h3>Predicted against true, held out ({_e(shown)})</h3><div class="scatters">')
    for run in [r for r in shown_runs if r["method"] == shown]:
        for t in sorted({p["target"] for p in run["points"]}):
            out.append(scatter_chart(run, t, _colour(targets, t)))
    out.append("</div></section>")
    return "".join(out)


def instances_html(data: dict) -> str:
    inst = data["instances"]
    targets = data["targets"]
    out = ['<section id="instances"><h2>Instance difficulty</h2>',
           f'<p class="note">The {inst["n_selected"]} instances the current proxies selected, ranked by how much an '
           "unknown score on them moves the predictions: √(Σ over targets of weight² × the training models' "
           "variance on the instance), on the proxies' scale. Mean: the training models' mean score.</p>"]

    def rows(items):
        return [[_e(r["benchmark"]), _e(r["subdir"] or "–"), _e(r["instance_id"]), fmt(r["informativeness"], 3),
                 pct(r["mean_score"], 0), r["n_models"] or 0,
                 _e(", ".join(f"{t} {r['weights'][t]:+.3f}" for t in targets if r["weights"].get(t) is not None))]
                for r in items]

    header = ["benchmark", "subdir", "instance", "informativeness", "mean (%)", "models", "weight per target"]
    out.append("<h3>Most informative</h3>" + _table(header, rows(inst["most"]), left=3,
                                                      attrs=' class="instances" data-list="most"'))
    out.append("<h3>Least informative</h3>" + _table(header, rows(inst["least"]), left=3,
                                                       attrs=' class="instances" data-list="least"'))
    out.append("</section>")
    return "".join(out)


def render(data: dict) -> str:
    """The whole page for the dict :func:`warehouse.report.collect` returns."""
    targets = data["targets"]
    options = "".join(f'<option value="{_e(t)}">{_e(t)}</option>' for t in targets)
    nav = "".join(f'<a href="#model-{_e(s["model"])}">{_e(s["model"])}</a>' for s in data["models"])
    blob = json.dumps(data, default=str, sort_keys=True).replace("<", "\\u003c").replace(">", "\\u003e") \
        .replace("&", "\\u0026")
    synthetic = ('<p class="synthetic">SYNTHETIC data: these scores were made up by <code>pace demo-data</code>; '
                 "they are not real results.</p>" if data["synthetic"] else "")
    body = "".join(model_html(s, data) for s in data["models"])
    if not data["models"]:
        body = ('<p class="note">No model asked: pass <code>--model NAME</code> (repeatable) to add a prediction '
                "section per model.</p>")
    return f"""<!DOCTYPE html>
<html lang="en" class="no-js">
<head>
<meta charset="utf-8">
{MARKER}
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(data["title"])}</title>
<style>{CSS}</style>
</head>
<body>
<header>
<h1>{_e(data["title"])}</h1>
<p>{data["n_rows"]:,} score rows, {data["n_models"]} models · targets {_e(", ".join(targets))} · built
{_e(data["generated_at"])} by <code>pace report</code></p>
<nav>{nav}<a href="#fit">the fit</a><a href="#instances">instance difficulty</a></nav>
</header>
<main>
{synthetic}
<div class="filter js-only"><label>Show target <select id="target-filter"><option value="">all targets</option>
{options}</select></label></div>
{body}
{fit_html(data)}
{instances_html(data)}
</main>
<div id="tip"></div>
<script type="application/json" id="pace-data">{blob}</script>
<script>{SCRIPT}</script>
</body>
</html>
"""
