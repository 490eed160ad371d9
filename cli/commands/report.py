"""``trustindex report``: what the live snapshot's run ingested, skipped and failed, as text, JSON or HTML."""

from __future__ import annotations

from pathlib import Path

from trustindex.cli.extras import require

ABOUT = "what the live snapshot's run ingested, skipped, failed"
EXAMPLES = ("trustindex report --data data", "trustindex report --html report.html --data data")
OPTIONS = ("data", "json", "policy")


def arguments(rp) -> None:
    rp.add_argument("--html", metavar="OUT.html", help="write a self-contained HTML report with plots")


def run(a) -> int:
    require("build")
    if a.html:
        from trustindex.report.html import render_report
        from trustindex.schemas.policy import Policy

        out = render_report(Path(a.data), Path(a.html), Policy.load(a.policy))
        print(f"wrote {out}")
        return 0
    from trustindex.cli.inspect_cmd import report

    return report(a)
