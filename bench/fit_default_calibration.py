"""Fit the shipped answer-confidence calibration: dev half of the judged real-docs set, over a real-docs snapshot.

    PYTHONPATH=. .venv/bin/python bench/fit_default_calibration.py --data REALDOCS_DATA [--isotonic] [--no-save]
        [--features a,b,c]
    PYTHONPATH=. .venv/bin/python bench/fit_default_calibration.py --data REALDOCS_DATA --dev-cv [--features a,b,c]

One command, a minute or two: every judged query of bench/eval (in-domain, off-topic, near-domain) is searched
once on the snapshot of ``--data`` (or ``$TRUSTINDEX_REALDOCS_DATA``) under the built-in policy without any
calibration (so the fit never depends on the previous one); calibration/fit.py fits the logistic regression
(scikit-learn) on the dev split's signals and labels, picks the tier thresholds on dev, and scores the test
split.  The result is written to schemas/default_calibration.toml (the built-in policy's calibration, with
``calibration_id`` = default:<model id>@<hash of the model, the fit's queries and labels, the tier thresholds>)
and the test-half figures are saved as bench/bench_calibration.py saves them (key "calibration").  Rerun it after
the ranking or the judged set changes.

``--dev-cv`` chooses the features instead, on the dev half alone (bench/calibration_cv.py): only dev queries are
searched, every subset of the signals (or only ``--features``) is scored by repeated 5-fold cross-validation, and
nothing is written; the test half is never searched, so a choice made from its figures leaves the test untouched.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.bench_calibration import DATA_ENV, open_index, report  # noqa: E402
from bench.common import setup_env  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", help=f"a real-docs data directory (default: ${DATA_ENV}, else bench_retrieval.py's)")
    ap.add_argument("--isotonic", action="store_true", help="follow the logistic fit with an isotonic map")
    ap.add_argument("--no-save", action="store_true", help="print only; leave results.json alone")
    ap.add_argument("--dry-run", action="store_true", help="fit and report, but leave default_calibration.toml alone")
    ap.add_argument("--features", help="comma-separated signals to fit on (default: DEFAULT_FEATURES)")
    ap.add_argument(
        "--dev-cv",
        action="store_true",
        help="search the dev half only and rank feature sets by repeated 5-fold cross-validation; write nothing",
    )
    ap.add_argument("--top", type=int, default=15, help="--dev-cv: how many of the best feature sets to print")
    a = ap.parse_args(argv)
    setup_env()
    from bench.eval_set import load
    from trustindex.calibration.fit import calibrate
    from trustindex.calibration.text import calibration_lines
    from trustindex.schemas.answer_signals import DEFAULT_FEATURES, SIGNALS
    from trustindex.schemas.policy import DEFAULT_CALIBRATION, Policy

    features = tuple(f.strip() for f in a.features.split(",") if f.strip()) if a.features else DEFAULT_FEATURES
    unknown = [f for f in features if f not in SIGNALS]
    if unknown or not features:
        raise SystemExit(f"--features: {unknown[0] if unknown else '(none)'} is not a signal ({', '.join(SIGNALS)})")

    t0 = time.perf_counter()
    base = Policy.without_shipped_calibration()
    index = open_index(a.data)
    if index is None:
        raise SystemExit(f"give --data (or ${DATA_ENV}): a data directory built from the real Midnight docs")
    index.reload_policy(base)
    if a.dev_cv:
        return dev_cv(index, base, features if a.features else None, a.top, t0)
    policy, result = calibrate(index, load(), base, split="dev", isotonic=a.isotonic, features=features, name="default")
    print("\n".join(calibration_lines(result)))
    if not a.dry_run:
        DEFAULT_CALIBRATION.write_text(
            "# The shipped calibration of answer_confidence (schemas/policy.py overlays it on the built-in policy).\n"
            f"# Written by bench/fit_default_calibration.py on snapshot {index.snapshot_id}; do not edit by hand.\n"
            + policy.calibration_toml(),
            encoding="utf-8",
        )
        print(f"wrote {DEFAULT_CALIBRATION.relative_to(Path(__file__).resolve().parents[1])}")
    report(result["heldout"], result["calibration_id"], result["model"], a.no_save, time.perf_counter() - t0)
    return 0


def dev_cv(index, base, features: tuple[str, ...] | None, top: int, t0: float) -> int:
    """Rank feature sets on the dev half (every subset of the signals, or ``features`` alone); print, write nothing."""
    from bench.calibration_cv import REPEATS, every_subset, lines, select
    from bench.eval_set import load
    from trustindex.calibration.fit import FOLDS, observe
    from trustindex.schemas.answer_signals import DEFAULT_FEATURES, SIGNALS
    from trustindex.schemas.policy import Policy

    obs = observe(index, load(split="dev"))
    candidates = [features] if features else every_subset(SIGNALS)
    shipped = tuple(Policy.default().match.features)
    named = {} if features else {"DEFAULT_FEATURES": DEFAULT_FEATURES, "shipped calibration": shipped}
    results = select(obs, candidates + [f for f in named.values() if f and f not in candidates], base)
    print(
        f"dev half only: {len(obs)} queries ({sum(o.label for o in obs)} with a relevant top hit), "
        f"{len(results)} feature sets, {REPEATS}x repeated {FOLDS}-fold cross-validation, "
        f"snapshot {index.snapshot_id}; the test half was not searched"
    )
    print("\n".join(lines(results, top, named)))
    print(f"{time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
