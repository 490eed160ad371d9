"""A self-contained HTML report of the live snapshot, and a short markdown summary.

``render_report(data_dir, out)`` writes one HTML file: plots are inline SVG
drawn by matplotlib (Figure objects, no pyplot, no display), styles are inline, and a
Content-Security-Policy of ``default-src 'none'`` forbids any fetch, so the file
opens offline and leaks nothing.  Every number comes from DuckDB over the
snapshot's Parquet files (``warehouse.catalog.connect_snapshot``).

Freshness is measured against the snapshot's ``created_at`` (not the wall
clock), so a report of a given snapshot never changes: days since the last
*substantive* change (DESIGN.md, "Known traps": bulk commits make every file
look new), falling back to the last modification when none was found.

``report_markdown(data_dir)`` gives the same story in a few lines, for a
Prefect markdown artifact on each flow run.
"""

from __future__ import annotations

import html
import io
import re
from pathlib import Path

from trustindex.schemas.snapshot import read_manifest, resolve_current
from trustindex.schemas.tables import EVIDENCE_CLASSES
from trustindex.warehouse.catalog import connect_snapshot, fetch_dicts, verification_classes

FRESHNESS_BUCKETS = [
    (0, 30, "< 30 d"),
    (30, 90, "30–90 d"),
    (90, 365, "90–365 d"),
    (365, 730, "1–2 y"),
    (730, None, "> 2 y"),
]
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
MAX_FAILED_ROWS = 500  # the table stays readable; the count above it is exact
PLOTS = {  # id -> title: the figures every report carries (tests look for these)
    "plot-chunks-tier": "Chunks per source and attribution tier",
    "plot-freshness": "Freshness: documents by days since last substantive change",
    "plot-versions": "Version coverage per component",
    "plot-verification": "Verifications per method (live vs stale)",
    "plot-deprecation": "Deprecations per source and scope",
    "plot-ingest": "Ingest accounting per source",
}


# -- numbers -------------------------------------------------------------------------------------
def collect(data_dir: Path) -> dict:
    """Everything the report shows, as plain data (the HTML and markdown are views of it)."""
    snap = resolve_current(data_dir)
    m = read_manifest(snap)
    con = connect_snapshot(snap)
    try:
        have = {r["table_name"] for r in fetch_dicts(con, "SELECT table_name FROM information_schema.tables")}
        q = lambda table, sql, params=(): fetch_dicts(con, sql, params) if table in have else []  # noqa: E731
        bucket_sql = (
            " ".join(f"WHEN age < {hi} THEN '{lab}'" for lo, hi, lab in FRESHNESS_BUCKETS if hi)
            + f" ELSE '{FRESHNESS_BUCKETS[-1][2]}'"
        )
        out = {
            "snapshot_id": m.snapshot_id,
            "created_at": m.created_at,
            "parent": m.parent,
            "embedding_model": m.embedding_model,
            "row_counts": m.row_counts,
            "sources": q(
                "sources",
                "SELECT source, repo, ref, commit, publisher, tier, status, error FROM sources ORDER BY source",
            )
            or [{**s, "source": s.get("source") or s.get("name")} for s in m.sources],
            "totals": {
                "documents": q("documents", "SELECT count(*) AS n FROM documents")[0]["n"]
                if "documents" in have
                else 0,
                "chunks": q("chunks", "SELECT count(*) AS n FROM chunks")[0]["n"] if "chunks" in have else 0,
            },
            "chunks_by_tier": q(
                "attribution",
                "SELECT c.source, coalesce(a.tier, 'unknown') AS tier, count(*) AS n "
                "FROM chunks c LEFT JOIN attribution a USING (doc_id) GROUP BY 1, 2 "
                "ORDER BY 1, 2",
            ),
            "freshness": q(
                "documents",
                f"SELECT source, CASE {bucket_sql} END AS bucket, count(*) AS n "
                "FROM (SELECT source, date_diff('day', "
                "coalesce(last_substantive_change, last_modified), ?::TIMESTAMPTZ) AS age "
                "FROM documents WHERE coalesce(last_substantive_change, last_modified) IS NOT "
                "NULL) GROUP BY 1, 2 ORDER BY 1, 2",
                [m.created_at],
            ),
            "freshness_median": q(
                "documents",
                "SELECT source, CAST(median(date_diff('day', coalesce("
                "last_substantive_change, last_modified), ?::TIMESTAMPTZ)) AS BIGINT) "
                "AS days, count(*) AS n FROM documents GROUP BY 1 ORDER BY 1",
                [m.created_at],
            ),
            "versions": q(
                "version_targets",
                "SELECT v.component, count(DISTINCT c.chunk_id) AS chunks, count(DISTINCT v.constraint) "
                "AS constraints, string_agg(DISTINCT v.origin, ', ' ORDER BY v.origin) AS origins FROM "
                "version_targets v JOIN chunks c ON c.doc_id = v.doc_id AND (v.chunk_id IS NULL OR "
                "v.chunk_id = c.chunk_id) GROUP BY 1 ORDER BY 2 DESC, 1",
            ),
            "verifications": q(
                "verifications",
                "SELECT method, stale, count(*) AS n, count(DISTINCT doc_id) AS "
                "docs FROM verifications GROUP BY 1, 2 ORDER BY 1, 2",
            ),
            "verification_classes": [
                {"source": src, **{k: v for k, v in c.items() if k != "share"}, "share": c["share"]}
                for src, c in verification_classes(con).items()
            ],
            "deprecations": q(
                "deprecations",
                "SELECT d.scope, c.source, count(DISTINCT c.chunk_id) AS chunks "
                "FROM deprecations d JOIN chunks c ON c.doc_id = d.doc_id AND "
                "(d.chunk_id IS NULL OR d.chunk_id = c.chunk_id) GROUP BY 1, 2 "
                "ORDER BY 2, 1",
            ),
            "content_risk": q(
                "content_risk",
                "SELECT d.source, d.path, r.start_line, r.kind, r.reason FROM content_risk r JOIN documents d "
                "USING (doc_id) ORDER BY d.source, d.path, r.start_line, r.rule",
            ),
            "ingest": q(
                "ingest_report", "SELECT source, status, count(*) AS n FROM ingest_report GROUP BY 1, 2 ORDER BY 1, 2"
            ),
            "skipped_by_rule": q(
                "ingest_report",
                "SELECT coalesce(nullif(rule, ''), '(none)') AS rule, count(*) "
                "AS n FROM ingest_report WHERE status = 'skipped' GROUP BY 1 "
                "ORDER BY 2 DESC, 1",
            ),
            "failed_by_stage": q(
                "ingest_report",
                "SELECT coalesce(nullif(stage, ''), '(none)') AS stage, count(*) "
                "AS n FROM ingest_report WHERE status = 'failed' GROUP BY 1 "
                "ORDER BY 2 DESC, 1",
            ),
            "failed_files": q(
                "ingest_report",
                "SELECT source, path, stage, reason FROM ingest_report WHERE "
                f"status = 'failed' ORDER BY source, path LIMIT {MAX_FAILED_ROWS}",
            ),
        }
        out["totals"]["failed"] = sum(r["n"] for r in out["failed_by_stage"])
        out["totals"]["skipped"] = sum(r["n"] for r in out["skipped_by_rule"])
        out["totals"]["ingested"] = sum(r["n"] for r in out["ingest"] if r["status"] == "ingested")
        out["totals"]["deprecated_chunks"] = (
            q(
                "deprecations",
                "SELECT count(DISTINCT c.chunk_id) AS n FROM "
                "deprecations d JOIN chunks c ON c.doc_id = d.doc_id "
                "AND (d.chunk_id IS NULL OR d.chunk_id = c.chunk_id)",
            )[0]["n"]
            if "deprecations" in have
            else 0
        )
        return out
    finally:
        con.close()


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
    return out


# -- HTML ----------------------------------------------------------------------------------------
CSS = """
:root { --fg:#1d2330; --muted:#5f6b7a; --line:#e3e7ee; --card:#fff; --bg:#f5f7fa; --accent:#3949ab; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg);
       font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif; }
header { background:#1d2330; color:#fff; padding:24px 32px; }
header h1 { margin:0 0 4px; font-size:22px; font-weight:600; }
header .meta { color:#c5cad3; font-size:13px; }
header code { color:#fff; }
main { max-width:1180px; margin:0 auto; padding:24px 32px 48px; }
.kpis { display:grid; grid-template-columns:repeat(6,1fr); gap:12px; margin-bottom:20px; }
.kpi { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:12px 14px; }
.kpi b { display:block; font-size:22px; } .kpi span { color:var(--muted); font-size:12px; }
.grid { display:grid; grid-template-columns:1fr 1fr; gap:16px; }
section { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:16px 18px;
          margin-bottom:16px; overflow-x:auto; }
section h2 { margin:0 0 10px; font-size:15px; font-weight:600; }
svg { width:100%; height:auto; display:block; }
h3 { font-size:13px; margin:12px 0 6px; color:var(--muted); font-weight:600; }
td code { font-size:12px; word-break:break-all; }
table { border-collapse:collapse; width:100%; font-size:13px; }
th, td { text-align:left; padding:5px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
th { color:var(--muted); font-weight:600; } tr:nth-child(even) td { background:#fafbfc; }
td.num { text-align:right; font-variant-numeric:tabular-nums; }
code { font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; }
.bad { color:#c62828; } .ok { color:#2e7d32; } .muted { color:var(--muted); }
"""


def _e(v) -> str:
    return html.escape("" if v is None else str(v))


def _table(rows: list[dict], cols: list[tuple[str, str]], empty: str = "none") -> str:
    if not rows:
        return f'<p class="muted">{_e(empty)}</p>'
    head = "".join(f"<th>{_e(label)}</th>" for _k, label in cols)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{r[k]}</td>'
            if isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool)
            else f"<td><code>{_e(r.get(k))}</code></td>"
            if k in CODE_COLUMNS
            else f"<td>{_e(r.get(k))}</td>"
            for k, _l in cols
        )
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_html(d: dict) -> str:
    svgs = plots(d)
    t = d["totals"]
    srcs = [{**s, "commit": (s.get("commit") or "")[:12]} for s in d["sources"]]
    kpis = [
        ("sources", len(d["sources"])),
        ("documents", t["documents"]),
        ("chunks", t["chunks"]),
        ("skipped files", t["skipped"]),
        ("failed files", t["failed"]),
        ("deprecated chunks", t["deprecated_chunks"]),
    ]

    def fig(pid: str, extra: str = "") -> str:
        return f"<section><h2>{_e(PLOTS[pid])}</h2>{svgs[pid]}{extra}</section>"

    def wide(pid: str, side: str) -> str:
        return (
            f'<section><h2>{_e(PLOTS[pid])}</h2><div class="grid"><div>{svgs[pid]}</div>'
            f"<div>{side}</div></div></section>"
        )

    failed_note = f" (first {MAX_FAILED_ROWS})" if t["failed"] > MAX_FAILED_ROWS else ""
    model = d["embedding_model"]
    ingest_side = (
        f"<h3>Skipped by rule</h3>{_table(d['skipped_by_rule'], [('rule', 'rule'), ('n', 'files')])}"
        f"<h3>Failed by stage</h3>{_table(d['failed_by_stage'], [('stage', 'stage'), ('n', 'files')])}"
    )
    verif = [{**r, "stale": "stale" if r["stale"] else "live"} for r in d["verifications"]]
    classes = [
        {**r, **{c: f"{r[c]} ({100 * r['share'][c]:.0f}%)" for c in EVIDENCE_CLASSES}}
        for r in d["verification_classes"]
    ]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>trustindex snapshot {_e(d["snapshot_id"])}</title><style>{CSS}</style></head>
<body><header><h1>trustindex snapshot <code>{_e(d["snapshot_id"])}</code></h1>
<div class="meta">created {_e(d["created_at"])} · parent {_e(d["parent"] or "none")} · embedding model
{_e(model.get("id"))} ({_e(model.get("backend"))}, {_e(model.get("dimensions"))} dims)</div></header>
<main>
<div class="kpis">{"".join(f'<div class="kpi"><b>{v}</b><span>{_e(k)}</span></div>' for k, v in kpis)}</div>
<section id="sources"><h2>Sources and commits</h2>{
        _table(
            srcs,
            [
                ("source", "source"),
                ("repo", "repository"),
                ("ref", "ref"),
                ("commit", "commit"),
                ("publisher", "publisher"),
                ("tier", "tier"),
                ("status", "status"),
                ("error", "error"),
            ],
        )
    }</section>
<div class="grid">{fig("plot-chunks-tier")}{
        fig(
            "plot-freshness",
            _table(d["freshness_median"], [("source", "source"), ("n", "documents"), ("days", "median days")]),
        )
    }</div>
{
        wide(
            "plot-versions",
            _table(
                d["versions"],
                [
                    ("component", "component"),
                    ("chunks", "chunks"),
                    ("constraints", "constraints"),
                    ("origins", "origins"),
                ],
                "no version constraints",
            ),
        )
    }
<div class="grid">{
        fig(
            "plot-verification",
            _table(
                verif,
                [("method", "method"), ("stale", "state"), ("n", "records"), ("docs", "documents")],
                "no verifications",
            )
            + "<h3>Evidence per source</h3>"
            + _table(
                classes,
                [("source", "source"), ("links", "links")] + [(c, c) for c in EVIDENCE_CLASSES],
                "no verifications",
            ),
        )
    }{fig("plot-deprecation")}</div>
{wide("plot-ingest", ingest_side)}
<section id="content-risk"><h2>Content risk: passages flagged for their readers</h2>{
        _table(
            d["content_risk"],
            [("source", "source"), ("path", "path"), ("start_line", "line"), ("kind", "kind"), ("reason", "reason")],
            "no passage flagged",
        )
    }</section>
<section id="failed"><h2>Failed files{failed_note}</h2>{
        _table(
            d["failed_files"],
            [("source", "source"), ("path", "path"), ("stage", "stage"), ("reason", "reason")],
            "no failed files",
        )
    }</section>
</main></body></html>
"""


def render_report(data_dir: Path, out: Path) -> Path:
    """Write the live snapshot's report to ``out`` (a file; parent folders are created) and return it."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(render_html(collect(Path(data_dir))), encoding="utf-8")
    tmp.replace(out)  # a reader never sees half a report
    return out


def report_markdown(data_dir: Path) -> str:
    """A short markdown summary of the live snapshot (for a Prefect markdown artifact)."""
    d = collect(Path(data_dir))
    t = d["totals"]
    status = {(r["source"], r["status"]): r["n"] for r in d["ingest"]}
    lines = [
        f"## trustindex snapshot `{d['snapshot_id']}`",
        "",
        f"Created {d['created_at']}: {t['documents']} documents, {t['chunks']} chunks; "
        f"{t['ingested']} files ingested, {t['skipped']} skipped, {t['failed']} failed; "
        f"{t['deprecated_chunks']} deprecated chunks.",
        "",
        "| source | commit | status | ingested | skipped | failed |",
        "|---|---|---|---:|---:|---:|",
    ]
    for s in d["sources"]:
        n = s["source"]
        lines.append(
            f"| {_md(n)} | `{(s.get('commit') or '')[:12]}` | {_md(s.get('status') or '')} | "
            f"{status.get((n, 'ingested'), 0)} | {status.get((n, 'skipped'), 0)} | "
            f"{status.get((n, 'failed'), 0)} |"
        )
    if d["verifications"]:
        lines += [
            "",
            "Verifications: "
            + ", ".join(f"{_md(r['method'])} {r['n']} {'stale' if r['stale'] else 'live'}" for r in d["verifications"]),
        ]
    for r in d["verification_classes"]:
        lines.append(
            f"- {_md(r['source'])}: "
            + ", ".join(f"{r[c]} {c} ({100 * r['share'][c]:.0f}%)" for c in EVIDENCE_CLASSES)
            + " verification links"
        )
    if d["versions"]:
        lines += [
            "",
            "Version components: " + ", ".join(f"{_md(r['component'])} ({r['chunks']} chunks)" for r in d["versions"]),
        ]
    if d["failed_files"]:
        lines += ["", "Failed files:"] + [
            f"- {_md(f['source'])}/{_md(f['path'])}: {_md(f['stage'] or '')}: {_md(f['reason'] or '')}"
            for f in d["failed_files"][:10]
        ]
        if t["failed"] > 10:
            lines.append(f"- … and {t['failed'] - 10} more (`trustindex report`)")
    return "\n".join(lines) + "\n"


def _md(text) -> str:
    """Neutralise markdown in untrusted strings (paths and reasons come from crawled repositories)."""
    return re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", " ".join(str(text).split()))[:300]
