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

import html
import re
from pathlib import Path

from trustindex.report.data import MAX_FAILED_ROWS, collect
from trustindex.report.plots import CODE_COLUMNS, PLOTS, plots
from trustindex.schemas.tables import EVIDENCE_CLASSES

__all__ = ["PLOTS", "collect", "render_html", "render_report", "report_markdown"]

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
    ingest_side = (
        f"<h3>Skipped by rule</h3>{_table(d['skipped_by_rule'], [('rule', 'rule'), ('n', 'files')])}"
        f"<h3>Failed by stage</h3>{_table(d['failed_by_stage'], [('stage', 'stage'), ('n', 'files')])}"
    )
    return f"""{_head(d)}
<main>
<div class="kpis">{"".join(f'<div class="kpi"><b>{v}</b><span>{_e(k)}</span></div>' for k, v in kpis)}</div>
<section id="sources"><h2>Sources and commits</h2>{_sources_table(d)}</section>
<div class="grid">{fig("plot-chunks-tier")}{
        fig(
            "plot-freshness",
            _table(d["freshness_median"], [("source", "source"), ("n", "documents"), ("days", "median days")]),
        )
    }</div>
{wide("plot-versions", _versions_table(d))}
<div class="grid">{fig("plot-compile", _compile_table(d.get("compile_checks") or []))}</div>
<div class="grid">{fig("plot-verification", _verification_tables(d))}{fig("plot-deprecation")}</div>
{wide("plot-ingest", ingest_side)}
{wide("plot-reliability", _calibration_side(d["calibration"]))}
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


def _head(d: dict) -> str:
    """The document's head (its Content-Security-Policy forbids every fetch) and the page's header."""
    model = d["embedding_model"]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>trustindex snapshot {_e(d["snapshot_id"])}</title><style>{CSS}</style></head>
<body><header><h1>trustindex snapshot <code>{_e(d["snapshot_id"])}</code></h1>
<div class="meta">created {_e(d["created_at"])} · parent {_e(d["parent"] or "none")} · embedding model
{_e(model.get("id"))} ({_e(model.get("backend"))}, {_e(model.get("dimensions"))} dims)</div></header>"""


# a section's table columns: (the row's key, the column's heading)
SOURCE_COLUMNS = [
    ("source", "source"),
    ("repo", "repository"),
    ("ref", "ref"),
    ("commit", "commit"),
    ("publisher", "publisher"),
    ("tier", "tier"),
    ("status", "status"),
    ("error", "error"),
]
VERSION_COLUMNS = [
    ("component", "component"),
    ("chunks", "chunks"),
    ("constraints", "constraints"),
    ("origins", "origins"),
]


def _sources_table(d: dict) -> str:
    return _table([{**s, "commit": (s.get("commit") or "")[:12]} for s in d["sources"]], SOURCE_COLUMNS)


def _versions_table(d: dict) -> str:
    return _table(d["versions"], VERSION_COLUMNS, "no version constraints")


def _verification_tables(d: dict) -> str:
    """The verifications by method and state, then each source's evidence classes with their shares."""
    verif = [{**r, "stale": "stale" if r["stale"] else "live"} for r in d["verifications"]]
    classes = [
        {**r, **{c: f"{r[c]} ({100 * r['share'][c]:.0f}%)" for c in EVIDENCE_CLASSES}}
        for r in d["verification_classes"]
    ]
    return (
        _table(
            verif,
            [("method", "method"), ("stale", "state"), ("n", "records"), ("docs", "documents")],
            "no verifications",
        )
        + "<h3>Evidence per source</h3>"
        + _table(
            classes, [("source", "source"), ("links", "links")] + [(c, c) for c in EVIDENCE_CLASSES], "no verifications"
        )
    )


def _compile_table(rows: list[dict]) -> str:
    """The compile-check matrix as numbers: a row per source and compiler, a column per outcome."""
    from trustindex.schemas.compilers import OUTCOMES

    matrix: dict[tuple, dict] = {}
    for r in rows:
        cell = matrix.setdefault((r["source"], r["compiler_version"]), {o: 0 for o in OUTCOMES})
        cell[r["outcome"]] = cell.get(r["outcome"], 0) + r["n"]
    table = [
        {"source": src, "compiler": f"compactc {ver}", "checked": sum(c.values()), **c}
        for (src, ver), c in sorted(matrix.items())
    ]
    cols = [("source", "source"), ("compiler", "compiler"), ("checked", "checked")] + [(o, o) for o in OUTCOMES]
    return _table(table, cols, "no compile checks (no compilers.toml)")


def _calibration_side(c: dict) -> str:
    def num(x):
        return "n/a" if x is None else f"{x:.3f}"

    rows = [
        {"k": "calibration", "v": f"{c['status']} {c['calibration_id'] or ''}".strip()},
        {"k": "held-out queries", "v": c["n"]},
        {"k": "ECE (10 bins)", "v": num(c["ece"])},
        {"k": "Brier score", "v": num(c["brier"])},
        {"k": "AUROC", "v": num(c["auroc"])},
    ]
    return (
        "<p class=muted>answer_confidence is the probability that a query's top hit is on a page judged relevant; "
        "on queries its fit never saw, each bin's mean probability should match its share of relevant top hits."
        "</p>" + _table(rows, [("k", ""), ("v", "")])
    )


def render_report(data_dir: Path, out: Path, policy=None) -> Path:
    """Write the live snapshot's report to ``out`` (a file; parent folders are created) and return it; the
    calibration section shows ``policy``'s (default: the built-in policy's)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(render_html(collect(Path(data_dir), policy)), encoding="utf-8")
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
