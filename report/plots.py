"""The report's figures: inline SVG drawn by matplotlib (Figure objects, no pyplot, no display)."""

from __future__ import annotations

import html
import io
import re

from trustindex.report.data import FRESHNESS_BUCKETS
from trustindex.schemas.compilers import OUTCOMES

TIER_ORDER = ["foundation", "partner", "third_party", "community", "unknown"]
TIER_COLOURS = {
    "foundation": "#1b5e20",
    "partner": "#1e88e5",
    "third_party": "#f9a825",
    "community": "#ef6c00",
    "unknown": "#9e9e9e",
}
STATUS_COLOURS = {"ingested": "#2e7d32", "skipped": "#90a4ae", "failed": "#c62828"}
CODE_COLUMNS = {"path", "commit", "rule"}
PLOTS = {  # id -> title: the figures every report carries (tests look for these)
    "plot-chunks-tier": "Chunks per source and attribution tier",
    "plot-freshness": "Freshness: documents by days since last substantive change",
    "plot-versions": "Version coverage per component",
    "plot-verification": "Verifications per method (live vs stale)",
    "plot-deprecation": "Deprecations per source and scope",
    "plot-ingest": "Ingest accounting per source",
    "plot-reliability": "Answer confidence: reliability on held-out queries",
    "plot-compile": "Compile checks per source and compiler",
}
OUTCOME_COLOURS = dict(zip(OUTCOMES, ("#2e7d32", "#c62828", "#6a1b9a", "#ef6c00", "#424242"), strict=True))


# -- plots ---------------------------------------------------------------------------------------
RC = {
    "svg.fonttype": "none",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "font.family": "sans-serif",
}  # text stays text in the SVG: crisp, searchable, small


def _figure(width=5.4, height=3.0):
    """A bare Figure, no pyplot: no backend or GUI is selected and no global figure state is touched,
    so rendering is safe in a Prefect worker thread and in CI without a display."""
    from matplotlib.figure import Figure

    # constrained layout keeps every figure at its set width (labels shrink the axes, not the font)
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots()


def _svg(fig, plot_id: str) -> str:
    """Inline SVG with the plot's id and <title> (accessible, and what the tests look for)."""
    import matplotlib

    buf = io.StringIO()
    # deterministic ids, distinct between the figures of one page (they share one DOM)
    with matplotlib.rc_context({"svg.hashsalt": plot_id}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg") :]  # drop the XML declaration and the DOCTYPE (it names a remote DTD)
    title = html.escape(PLOTS[plot_id])
    svg = re.sub(r"<svg\b", f'<svg id="{plot_id}" role="img" aria-label="{title}"', svg, count=1)
    return re.sub(r"(<svg\b[^>]*>)", rf"\1<title>{title}</title>", svg, count=1)


def _empty(ax, text="no data in this snapshot"):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#777")
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.figure.set_size_inches(5.4, 1.0)


def _stacked_barh(ax, rows, row_key, stack_key, order, colours, xlabel):
    labels = sorted({r[row_key] for r in rows})
    stacks = [s for s in order if any(r[stack_key] == s for r in rows)] + sorted(
        {r[stack_key] for r in rows} - set(order)
    )
    if not labels:
        return _empty(ax)
    left = [0] * len(labels)
    for s in stacks:
        vals = [sum(r["n"] for r in rows if r[row_key] == lab and r[stack_key] == s) for lab in labels]
        ax.barh(labels, vals, left=left, label=str(s), color=colours.get(s))
        left = [a + b for a, b in zip(left, vals, strict=True)]
    for y, total in enumerate(left):
        ax.text(total, y, f" {total}", va="center", fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    _legend(ax, len(stacks))


def _legend(ax, n):
    """Above the axes, in one row: never over the bars."""
    ax.legend(
        frameon=False,
        fontsize=8,
        loc="lower left",
        bbox_to_anchor=(0.0, 1.0),
        ncol=min(n, 5),
        handlelength=1.2,
        columnspacing=1.0,
        borderaxespad=0.2,
    )


def plots(d: dict) -> dict[str, str]:
    """Plot id -> inline SVG for every figure in PLOTS."""
    import matplotlib

    with matplotlib.rc_context(RC):
        return _plots(d)


def _plots(d: dict) -> dict[str, str]:
    out = {}
    fig, ax = _figure()
    _stacked_barh(ax, d["chunks_by_tier"], "source", "tier", TIER_ORDER, TIER_COLOURS, "chunks")
    out["plot-chunks-tier"] = _svg(fig, "plot-chunks-tier")

    fig, ax = _figure()
    sources = sorted({r["source"] for r in d["freshness"]})
    if sources:
        width = 0.8 / len(sources)
        for k, s in enumerate(sources):
            vals = [
                sum(r["n"] for r in d["freshness"] if r["source"] == s and r["bucket"] == b[2])
                for b in FRESHNESS_BUCKETS
            ]
            ax.bar([x + k * width - 0.4 + width / 2 for x in range(len(FRESHNESS_BUCKETS))], vals, width, label=s)
        ax.set_xticks(range(len(FRESHNESS_BUCKETS)), [b[2] for b in FRESHNESS_BUCKETS])
        ax.set_ylabel("documents")
        _legend(ax, len(sources))
    else:
        _empty(ax)
    out["plot-freshness"] = _svg(fig, "plot-freshness")

    fig, ax = _figure(height=max(2.2, 0.3 * len(d["versions"]) + 0.8))
    total = d["totals"]["chunks"] or 1
    if d["versions"]:
        comps = [r["component"] for r in d["versions"]]
        ax.barh(comps, [r["chunks"] for r in d["versions"]], color="#3949ab")
        for y, r in enumerate(d["versions"]):
            ax.text(r["chunks"], y, f" {r['chunks']} ({100 * r['chunks'] / total:.0f}%)", va="center", fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(f"chunks with a constraint (of {d['totals']['chunks']})")
    else:
        _empty(ax, "no version constraints in this snapshot")
    out["plot-versions"] = _svg(fig, "plot-versions")

    fig, ax = _figure(height=2.6)
    rows = [
        {"method": r["method"], "state": "stale" if r["stale"] else "live", "n": r["n"]} for r in d["verifications"]
    ]
    _stacked_barh(
        ax, rows, "method", "state", ["live", "stale"], {"live": "#2e7d32", "stale": "#bdbdbd"}, "verification records"
    )
    out["plot-verification"] = _svg(fig, "plot-verification")

    fig, ax = _figure(height=2.6)
    _stacked_barh(
        ax,
        [{**r, "n": r["chunks"]} for r in d["deprecations"]],
        "source",
        "scope",
        ["document", "chunk"],
        {"document": "#6d4c41", "chunk": "#ffa000"},
        "deprecated chunks",
    )
    out["plot-deprecation"] = _svg(fig, "plot-deprecation")

    fig, ax = _figure(height=2.6)
    _stacked_barh(ax, d["ingest"], "source", "status", ["ingested", "skipped", "failed"], STATUS_COLOURS, "files")
    out["plot-ingest"] = _svg(fig, "plot-ingest")
    out["plot-reliability"] = _reliability(d.get("calibration") or {})

    rows = d.get("compile_checks") or []
    fig, ax = _figure(height=max(2.2, 0.3 * len({r["checked_by"] for r in rows}) + 1.0))
    _stacked_barh(ax, rows, "checked_by", "outcome", list(OUTCOMES), OUTCOME_COLOURS, "distinct texts checked")
    out["plot-compile"] = _svg(fig, "plot-compile")
    return out


def reliability_svg(calibration: dict) -> str:
    """The reliability diagram alone (``trustindex calibrate --html``)."""
    import matplotlib

    with matplotlib.rc_context(RC):
        return _reliability(calibration)


def _reliability(c: dict) -> str:
    """Mean predicted probability against the observed share of relevant top hits, per bin of 0.1 (the diagonal
    is perfect calibration; a dot's area is its number of queries)."""
    fig, ax = _figure(width=4.2, height=3.6)
    bins = c.get("reliability") or []
    if not bins:
        _empty(ax, "no calibration with held-out figures in this policy")
        return _svg(fig, "plot-reliability")
    ax.plot([0, 1], [0, 1], color="#9e9e9e", lw=1, ls="--", label="perfectly calibrated")
    xs, ys, ns = (
        [b["predicted"] for b in bins],
        [b["observed"] for b in bins],
        [b["count"] for b in bins],
    )
    ax.plot(xs, ys, color="#3949ab", lw=1.2)
    ax.scatter(xs, ys, s=[20 + 12 * n for n in ns], color="#3949ab", alpha=0.8, zorder=3, label="held-out bins")
    for x, y, n in zip(xs, ys, ns, strict=True):
        ax.annotate(str(n), (x, y), textcoords="offset points", xytext=(6, -10), fontsize=7, color="#5f6b7a")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("answer confidence (mean of the bin)")
    ax.set_ylabel("top hit judged relevant (share)")
    ece = c.get("ece")
    ax.set_title(f"ECE {ece:.3f} on {c.get('n')} queries" if ece is not None else "", fontsize=9)
    _legend(ax, 2)
    return _svg(fig, "plot-reliability")
