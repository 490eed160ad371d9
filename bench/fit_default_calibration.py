"""Fit the shipped answer-confidence calibration: dev half of the judged real-docs set, over a real-docs snapshot.

    PYTHONPATH=. .venv/bin/python bench/fit_default_calibration.py --data REALDOCS_DATA [--isotonic] [--no-save]

One command, a minute or two: every judged query of bench/eval (in-domain, off-topic, near-domain) is searched
once on the snapshot of ``--data`` (or ``$TRUSTINDEX_REALDOCS_DATA``) under the built-in policy without any
calibration (so the fit never depends on the previous one); query/calibrate.py fits the logistic regression
(scikit-learn) on the dev split's signals and labels, picks the tier thresholds on dev, and scores the test
split.  The result is written to schemas/default_calibration.toml (the built-in policy's calibration, with
``calibration_id`` = default:<model id>@<hash of the model, the fit's queries and labels>) and the test-half
figures are saved as bench/bench_calibration.py saves them (key "calibration").  Rerun it after the ranking or
the judged set changes.
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
    a = ap.parse_args(argv)
    setup_env()
    from bench.eval_set import load
    from trustindex.query.calibrate import calibrate
    from trustindex.query.calibration_text import calibration_lines
    from trustindex.schemas.policy import DEFAULT_CALIBRATION, Policy

    t0 = time.perf_counter()
    base = Policy.without_shipped_calibration()
    index = open_index(a.data)
    if index is None:
        raise SystemExit(f"give --data (or ${DATA_ENV}): a data directory built from the real Midnight docs")
    index.reload_policy(base)
    policy, result = calibrate(index, load(), base, split="dev", isotonic=a.isotonic, name="default")
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


if __name__ == "__main__":
    raise SystemExit(main())
