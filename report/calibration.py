"""``trustindex calibrate --html``: one self-contained page with the reliability diagram and the held-out figures.

Like the snapshot report (report_html.py): inline SVG drawn by matplotlib, inline styles, and a
Content-Security-Policy that forbids any fetch.
"""

from __future__ import annotations

from pathlib import Path

from trustindex.report.html import CSS, _e, _table
from trustindex.report.plots import PLOTS, reliability_svg


def _num(x) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def render_calibration_html(result: dict) -> str:
    h, m, t = result["heldout"], result["model"], result["thresholds"]
    svg = reliability_svg({"reliability": h["reliability"], "ece": h["ece"], "n": h["n"]})
    metrics = [
        {"k": "held out", "v": f"{h['how']}: {h['n']} queries, {h['base_rate']:.0%} with a relevant top hit"},
        {"k": "ECE (10 equal-width bins)", "v": _num(h["ece"])},
        {"k": "Brier score", "v": _num(h["brier"])},
        {"k": "AUROC", "v": _num(h["auroc"])},
        {"k": "selective accuracy at 80% coverage", "v": _num(h["selective_accuracy_at_80"])},
        {"k": "label", "v": result["label"]},
        {
            "k": "tiers",
            "v": f"high ≥ {t['high_probability']}, mid ≥ {t['mid_probability']}, "
            f"abstain below {t['min_answer_confidence']}",
        },
    ]
    model = [{"f": f, "w": f"{w:+.4f}"} for f, w in zip(m["features"], m["weights"], strict=True)]
    model.append({"f": "intercept", "w": f"{m['intercept']:+.4f}"})
    rc = [
        {**r, "coverage": f"{r['coverage']:.0%}", "threshold": _num(r["threshold"]), "accuracy": _num(r["accuracy"])}
        for r in h["risk_coverage"]
    ]
    tiers = [
        {"kind": k, "n": s["n"], **{x: f"{s[x]:.0%}" for x in ("high", "mid", "low", "abstained")}}
        for k, s in h["tiers"].items()
    ]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>trustindex calibration {_e(result["calibration_id"])}</title><style>{CSS}</style></head>
<body><header><h1>Answer confidence calibration <code>{_e(result["calibration_id"])}</code></h1>
<div class="meta">snapshot {_e(result.get("snapshot_id"))} · fitted on {_e(result["fit"]["n"])} queries
({_e(result["fit"]["split"])})</div></header>
<main><div class="grid">
<section><h2>{_e(PLOTS["plot-reliability"])}</h2>{svg}</section>
<section><h2>Held-out figures</h2>{_table(metrics, [("k", ""), ("v", "")])}
<h3>Model: sigmoid(intercept + Σ weight × signal)</h3>{_table(model, [("f", "signal"), ("w", "weight")])}</section>
</div>
<div class="grid">
<section><h2>Risk–coverage</h2>{
        _table(rc, [("coverage", "coverage"), ("n", "queries"), ("threshold", "min p"), ("accuracy", "accuracy")])
    }</section>
<section><h2>Match tiers by kind of query</h2>{
        _table(
            tiers,
            [
                ("kind", "kind"),
                ("n", "queries"),
                ("high", "high"),
                ("mid", "mid"),
                ("low", "low"),
                ("abstained", "abstained"),
            ],
        )
    }</section>
</div></main></body></html>
"""


def render_calibration_report(result: dict, out: Path) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(render_calibration_html(result), encoding="utf-8")
    tmp.replace(out)
    return out
