"""How honest answer confidence is: the shipped calibration on the TEST half of the judged real-docs set.

    PYTHONPATH=. .venv/bin/python bench/bench_calibration.py --data REALDOCS_DATA [--no-save]

``--data`` (or ``$TRUSTINDEX_REALDOCS_DATA``): a data directory built from the real Midnight docs (``trustindex
refresh`` over ``../shared/corpus/midnight-docs``); the judged paths of bench/eval are its corpus-relative paths.
Every judged query of bench/eval (bench/eval_set.py) of the test split is searched once, as a user would search
it (the built-in policy, k = 3), and its answer signals scored by the built-in calibration
(schemas/default_calibration.toml, fitted on the dev split by bench/fit_default_calibration.py).  Reported:
ECE (10 equal-width bins), Brier score, AUROC, selective accuracy at 80% coverage, and the match-tier shares per
kind of query against issue 16's goals (in-domain >= 90% high or mid; clearly off-topic 100% low or abstained;
near-domain >= 80% not high).  Saved under the key "calibration".
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import figure, print_figures, save, setup_env  # noqa: E402

DATA_ENV = "TRUSTINDEX_REALDOCS_DATA"
ECE_GOAL = 0.05
TIER_GOALS = {  # kind -> (share, goal, figure name)
    "in-domain": ("high_or_mid", 0.9, "in-domain queries high or mid"),
    "off-topic": ("low_or_abstained", 1.0, "off-topic queries low or abstained"),
    "near-domain": ("not_high", 0.8, "near-domain queries not high"),
}


def open_index(data: str | None):
    from trustindex.query.index import Index
    from trustindex.schemas.policy import Policy

    data = data or os.environ.get(DATA_ENV)
    if not data:
        # The snapshot bench_retrieval.py builds from ../shared/corpus/midnight-docs (once, then reused).
        from bench.bench_retrieval import RETRIEVAL_WORK, build_data
        from bench.common import CORPUS

        if not CORPUS.is_dir():
            return None
        data = str(build_data(RETRIEVAL_WORK))
    return Index.open(data_dir=data, policy=Policy.default(), warm=True)


def evaluate_shipped(index, split: str = "test") -> dict:
    """The built-in calibration's held-out figures on one split of the judged set."""
    from bench.eval_set import load
    from trustindex.calibration.fit import evaluate, observe
    from trustindex.query.answer_confidence import probability

    obs = observe(index, load(split=split))
    p = np.array([probability(index.policy, o.signals) for o in obs], dtype=np.float64)
    return {"how": f"the {split} split", **evaluate(obs, p, index.policy)}


def figures(h: dict) -> list[dict]:
    out = [
        figure(
            "ECE of answer_confidence (10 bins)", h["ece"], "", goal=f"<= {ECE_GOAL}", met=bool(h["ece"] <= ECE_GOAL)
        ),
        figure(
            "ECE a perfectly calibrated model shows on these queries (mean of 1000 draws)",
            h["ece_if_calibrated"]["mean"],
            "",
        ),
        figure("Brier score of answer_confidence", h["brier"], ""),
        figure("AUROC of answer_confidence", h["auroc"] if h["auroc"] is not None else float("nan"), ""),
        figure("selective accuracy at 80% coverage", h["selective_accuracy_at_80"], ""),
        figure("top hit judged relevant (all test queries)", h["base_rate"], ""),
    ]
    for kind, (key, goal, name) in TIER_GOALS.items():
        if kind in h["tiers"]:
            share = h["tiers"][kind][key]
            out.append(figure(name, share, "share", goal=f">= {goal:.0%}", met=bool(share >= goal)))
    return out


def section(h: dict, calibration_id: str, model: dict) -> list[str]:
    lines = [
        "## Answer confidence calibration",
        "",
        f"`bench/bench_calibration.py`: calibration `{calibration_id}` on {h['n']} judged queries of {h['how']} "
        f"({h['base_rate']:.0%} with a relevant top hit). Model: sigmoid({model['intercept']:+.3f} "
        + " ".join(f"{w:+.3f}×{f}" for f, w in zip(model["features"], model["weights"], strict=True))
        + f"). ECE {h['ece']:.3f}; a perfectly calibrated model would show {h['ece_if_calibrated']['mean']:.3f} "
        f"on these queries by chance alone (95% of draws below {h['ece_if_calibrated']['p95']:.3f}), so the "
        "issue's 0.05 needs a larger test half to be measured.",
        "",
        "| bin | mean answer_confidence | share relevant | queries |",
        "|---|---|---|---|",
    ]
    for r in h["reliability"]:
        lines.append(
            f"| {r['bin'] / 10:.1f}–{r['bin'] / 10 + 0.1:.1f} | {r['predicted']:.3f} | {r['observed']:.3f} "
            f"| {r['count']} |"
        )
    lines += ["", "| kind | queries | high | mid | low | abstained |", "|---|---|---|---|---|---|"]
    for kind, s in h["tiers"].items():
        lines.append(
            f"| {kind} | {s['n']} | {s['high']:.0%} | {s['mid']:.0%} | {s['low']:.0%} | {s['abstained']:.0%} |"
        )
    return lines


def report(h: dict, calibration_id: str, model: dict, no_save: bool, seconds: float) -> None:
    figs = figures(h)
    print_figures("answer confidence calibration (test half)", figs)
    if no_save:
        return
    save(
        "calibration",
        {
            "figures": figs,
            "heldout": h,
            "calibration_id": calibration_id,
            "model": model,
            "seconds": round(seconds, 1),
            "section": section(h, calibration_id, model),
            "method": "bench/bench_calibration.py: the built-in calibration (fitted on the dev half by "
            "bench/fit_default_calibration.py) scored on the test half of bench/eval over a real-docs snapshot; "
            "label = the top hit's page is judged relevant (grade >= 1), off-topic queries 0.",
        },
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", help=f"a real-docs data directory (default: ${DATA_ENV})")
    ap.add_argument("--no-save", action="store_true", help="print only; leave results.json alone")
    a = ap.parse_args(argv)
    setup_env()
    t0 = time.perf_counter()
    index = open_index(a.data)
    if index is None:
        print(f"== calibration: skipped (no --data, no ${DATA_ENV} and no real docs corpus to build one from)")
        return 0
    m = index.policy.match
    model = {"features": m.features, "weights": m.weights, "intercept": m.intercept}
    h = evaluate_shipped(index)
    report(h, m.calibration_id, model, a.no_save, time.perf_counter() - t0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
