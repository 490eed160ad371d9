"""The text of a calibration result (``trustindex calibrate``, bench/fit_default_calibration.py)."""

from __future__ import annotations

GOALS = {  # issue 16's goals for the tiers, per kind of query: (share read, goal, words)
    "in-domain": ("high_or_mid", 0.9, "high or mid"),
    "off-topic": ("low_or_abstained", 1.0, "low or abstained"),
    "near-domain": ("not_high", 0.8, "not high"),
}


def _f(x, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def calibration_lines(result: dict) -> list[str]:
    m, h, t = result["model"], result["heldout"], result["thresholds"]
    terms = " ".join(f"{w:+.3f}×{f}" for f, w in zip(m["features"], m["weights"], strict=True))
    lines = [
        f"calibration {result['calibration_id']}: fitted on {result['fit']['n']} queries "
        f"({result['fit']['split']}; {result['fit']['positives']} with a relevant top hit)",
        f"label: {result['label']}",
        f"answer_confidence = sigmoid({m['intercept']:+.3f} {terms})"
        + (f", then an isotonic map ({m['isotonic_breakpoints']} breakpoints)" if m["isotonic_breakpoints"] else ""),
        f"tiers: high >= {t['high_probability']}, mid >= {t['mid_probability']}; abstain below "
        f"{t['min_answer_confidence']}",
        "",
        f"held out ({h['how']}, {h['n']} queries, {h['base_rate']:.0%} with a relevant top hit):",
        f"  ECE (10 bins) {_f(h['ece'])}  Brier {_f(h['brier'])}  AUROC {_f(h['auroc'])}  "
        f"selective accuracy at 80% coverage {_f(h['selective_accuracy_at_80'])}",
        f"  (a perfectly calibrated model would show ECE {_f(h['ece_if_calibrated']['mean'])} on these queries by "
        f"chance; 95% of draws below {_f(h['ece_if_calibrated']['p95'])})",
        "  risk-coverage:  coverage  queries  min p  accuracy  risk",
    ]
    for r in h["risk_coverage"]:
        lines.append(
            f"                 {r['coverage']:>7.0%}  {r['n']:>7}  {r['threshold']:.3f}  {r['accuracy']:>8.3f}  "
            f"{r['risk']:.3f}"
        )
    lines.append("  reliability:  bin        mean p  observed  queries")
    for r in h["reliability"]:
        lo = r["bin"] / 10
        lines.append(
            f"                [{lo:.1f}, {lo + 0.1:.1f})  {r['predicted']:.3f}  {r['observed']:>8.3f}  {r['count']:>7}"
        )
    for kind, s in h["tiers"].items():
        key, goal, words = GOALS[kind]
        ok = "ok" if s[key] >= goal else "MISSED"
        lines.append(
            f"  {kind:<11} n={s['n']:<3} high {s['high']:.0%} mid {s['mid']:.0%} low {s['low']:.0%} "
            f"abstained {s['abstained']:.0%}: {words} {s[key]:.0%} (goal {goal:.0%}: {ok})"
        )
    return lines
