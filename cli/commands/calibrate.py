"""``trustindex calibrate``: answer confidence (and the match tiers) fitted from judged queries, its calibration
reported on held-out ones, the calibrated policy written."""

from __future__ import annotations

import os
from pathlib import Path

from trustindex.cli.extras import require
from trustindex.cli.options import policy_option
from trustindex.schemas.errors import TrustIndexError

ABOUT = "fit answer confidence (and the match tiers) from judged queries; report its calibration on held-out ones"
EXAMPLES = (
    "trustindex calibrate --judged judged.jsonl --data data --out policy.toml",
    "trustindex calibrate --judged in_domain.jsonl --judged off_topic.jsonl --split dev --html cal.html",
)
OPTIONS = ("data", "snapshot", "json")


def arguments(c) -> None:
    c.add_argument(
        "--judged",
        required=True,
        action="append",
        metavar="FILE.jsonl",
        help='judged queries, one JSON object a line: {"id", "query", "relevant": {path: grade}} (no relevant '
        'path: off-topic; optional "kind": off-topic | near-domain); repeat for several files',
    )
    c.add_argument(
        "--split",
        choices=("dev", "test"),
        help="fit on this half of the fixed id-hashed dev/test split and report the other (default: fit on all, "
        "report 5-fold cross-validation)",
    )
    c.add_argument(
        "--min-grade",
        type=int,
        choices=(1, 2),
        default=1,
        help="the grade a top hit's page needs to count as relevant (default 1: partly answers counts)",
    )
    c.add_argument("--isotonic", action="store_true", help="follow the logistic fit with an isotonic map")
    c.add_argument(
        "--features",
        metavar="A,B,...",
        help="the answer signals to fit on (default: best_cosine,page_margin,term_coverage,top_page_lexical_rr; "
        "all: also channels_agree,lexical_strength)",
    )
    c.add_argument("--html", metavar="OUT.html", help="also write an HTML page with the reliability diagram")
    policy_option(c, "built-in", role=", the policy to start from")
    c.add_argument("--out", help="where to write the calibrated policy (default: --policy, else ./policy.toml)")


def features_of(a) -> tuple[str, ...]:
    """``--features`` as signal names, each one the fit knows."""
    from trustindex.schemas.answer_signals import DEFAULT_FEATURES, SIGNALS

    features = tuple(f.strip() for f in a.features.split(",") if f.strip()) if a.features else DEFAULT_FEATURES
    unknown = [f for f in features if f not in SIGNALS]
    if unknown or not features:
        raise TrustIndexError(
            f"--features: {unknown[0] if unknown else '(none)'} is not a signal ({', '.join(SIGNALS)})"
        )
    return features


def run(a) -> int:
    require("build")
    from trustindex.calibration.fit import calibrate
    from trustindex.calibration.judged import read_jsonl
    from trustindex.calibration.text import calibration_lines
    from trustindex.cli.commands.query import open_index
    from trustindex.cli.common import print_json
    from trustindex.schemas.policy import Policy

    base = Policy.load(a.policy)
    queries = [q for f in a.judged for q in read_jsonl(Path(f))]
    index = open_index(a, base)
    features = features_of(a)
    policy, result = calibrate(
        index, queries, base, split=a.split, isotonic=a.isotonic, min_grade=a.min_grade, features=features
    )
    out = Path(a.out or a.policy or "policy.toml")
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(
        "# Calibrated by `trustindex calibrate` for "
        + index.data.manifest.embedding_model.get("id", "")
        + f" on snapshot {index.snapshot_id}\n"
        + policy.to_toml()
    )
    os.replace(tmp, out)
    result.update(policy_file=str(out), policy_id=policy.policy_id)
    if a.html:
        from trustindex.report.calibration import render_calibration_report

        result["html"] = str(render_calibration_report(result, Path(a.html)))
    if a.json:
        print_json(result)
    else:
        print("\n".join(calibration_lines(result)))
        print(f"wrote {out} ({policy.policy_id})" + (f" and {result['html']}" if a.html else ""))
    return 0
