"""The HTML snapshot report: self-contained, right numbers, escaped input, rendered by headless Chromium."""

from __future__ import annotations

import html
import re
import struct
import subprocess
from pathlib import Path

import pytest

from tests.kits.browserkit import CHROMIUM, CHROMIUM_FLAGS
from trustindex.report.html import PLOTS, collect, render_html, render_report, report_markdown
from trustindex.schemas.snapshot import read_manifest, resolve_current
from trustindex.warehouse.catalog import connect_snapshot

HOSTILE = [  # strings a crawled repository controls (paths, error reasons), and what must not survive raw
    ('<img src="http://evil.example/x.png">', "<img"),
    ("<script>alert(1)</script>", "<script"),
    ('a" onmouseover="alert(1)', '" onmouseover'),
]
HOSTILE_MD = [s for s, _ in HOSTILE] + ["docs/[link](http://evil.example)|col", "`code` **bold** # heading"]


@pytest.fixture(scope="module")
def data(refreshed) -> Path:
    return Path(refreshed["data"])


@pytest.fixture(scope="module")
def report(data, tmp_path_factory) -> tuple[Path, str]:
    out = render_report(data, tmp_path_factory.mktemp("report") / "sub" / "report.html")
    return out, out.read_text(encoding="utf-8")


def test_self_contained(report):
    _, text = report
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", text, re.I)
    assert not re.search(r"url\(\s*['\"]?(?:https?:)?//", text, re.I)
    for tag in ("<script", "<link", "<iframe", "<img", "<!DOCTYPE svg"):
        assert tag.lower() not in text.lower(), tag
    assert "default-src 'none'" in text  # the CSP forbids fetching anything, should something slip in


@pytest.mark.parametrize("plot_id", list(PLOTS))
def test_every_plot_is_inline_svg_with_its_title(report, plot_id):
    _, text = report
    m = re.search(rf'<svg id="{plot_id}"[^>]*>\s*<title>([^<]*)</title>', text)
    assert m and m.group(1) == PLOTS[plot_id]


def test_header_names_snapshot_and_commits(report, data):
    _, text = report
    m = read_manifest(resolve_current(data))
    assert m.snapshot_id in text and m.created_at in text
    for s in m.sources:
        assert (s.get("source") or s.get("name")) in text and s["commit"][:12] in text


def test_numbers_agree_with_duckdb(data):
    d = collect(data)
    con = connect_snapshot(resolve_current(data))
    n = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
    assert d["totals"]["chunks"] == n("SELECT count(*) FROM chunks") > 0
    assert sum(r["n"] for r in d["chunks_by_tier"]) == d["totals"]["chunks"]
    assert sum(r["n"] for r in d["freshness"]) == n("SELECT count(*) FROM documents")
    assert sum(r["n"] for r in d["ingest"]) == n("SELECT count(*) FROM ingest_report")
    assert d["totals"]["skipped"] == n("SELECT count(*) FROM ingest_report WHERE status = 'skipped'")
    assert sum(r["n"] for r in d["verifications"]) == n("SELECT count(*) FROM verifications")
    assert {r["component"] for r in d["versions"]} == {
        r[0] for r in con.execute("SELECT DISTINCT component FROM version_targets").fetchall()
    }
    assert all(0 < r["chunks"] <= d["totals"]["chunks"] for r in d["versions"])


def test_evidence_classes_per_source(report, data):
    """The share of authenticated, claimed and operator links per source: the demo has all three (its
    platform-signed merge, trailers, its ledger)."""
    d = collect(data)
    con = connect_snapshot(resolve_current(data))
    by_source = {r["source"]: r for r in d["verification_classes"]}
    assert (
        sum(r["links"] for r in by_source.values()) == con.execute("SELECT count(*) FROM verifications").fetchone()[0]
    )
    community = by_source["community-contracts"]
    assert community["authenticated"] >= 1 and community["claimed"] >= 1
    assert by_source["midnight-docs"]["operator"] >= 1
    for r in by_source.values():
        assert r["authenticated"] + r["claimed"] + r["operator"] == r["links"]
        assert abs(sum(r["share"].values()) - 1.0) < 1e-3
    _, text = report
    assert "Evidence per source" in text and "authenticated" in text


@pytest.fixture(scope="module")
def hostile_html(data) -> str:
    """The report with a failed file per hostile string (rendered once: plotting is the slow part)."""
    d = collect(data)
    d["failed_files"] = [
        {"source": d["sources"][0]["source"], "path": h, "stage": "extract", "reason": h} for h, _ in HOSTILE
    ]
    d["failed_by_stage"] = [{"stage": h, "n": 1} for h, _ in HOSTILE]
    return render_html(d)


@pytest.mark.parametrize("hostile,raw", HOSTILE)
def test_untrusted_strings_are_escaped(hostile_html, hostile, raw):
    assert raw not in hostile_html
    assert hostile_html.count(html.escape(hostile)) >= 2  # shown, escaped, as path and as reason
    assert "no failed files" not in hostile_html


@pytest.mark.parametrize("hostile", HOSTILE_MD)
def test_markdown_neutralises_untrusted_strings(hostile):
    from trustindex.report.html import _md

    out = _md(hostile + "\nnext line")
    assert "\n" not in out and "|" not in out.replace("\\|", "")
    assert not re.search(r"(?<!\\)[<\[\]`*#]", out)


def test_markdown_summary(data):
    md = report_markdown(data)
    m = read_manifest(resolve_current(data))
    assert md.startswith(f"## trustindex snapshot `{m.snapshot_id}`")
    con = connect_snapshot(resolve_current(data))
    for source, ingested in con.execute(
        "SELECT source, count(*) FILTER (status = 'ingested') FROM ingest_report GROUP BY 1"
    ).fetchall():
        assert re.search(rf"^\| {re.escape(source)} \| `[0-9a-f]{{12}}` \| ok \| {ingested} \|", md, re.M), source


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", head[16:24])


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
def test_renders_in_headless_chromium(report, tmp_path):
    path, _ = report
    url = path.resolve().as_uri()
    png = tmp_path / "report.png"
    shot = subprocess.run(
        [
            CHROMIUM,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'u1'}",
            f"--screenshot={png}",
            "--window-size=1280,2400",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert png.is_file(), shot.stderr[-2000:]
    assert _png_size(png) == (1280, 2400) and png.stat().st_size > 50_000  # a blank page compresses to a few KB
    import matplotlib.image as mpimg

    pixels = mpimg.imread(png)
    assert pixels[:, :, :3].std() > 0.05  # not one flat colour
    dom = subprocess.run(
        [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'u2'}", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    for plot_id, title in PLOTS.items():
        assert re.search(rf'<svg id="{plot_id}"[^>]*>\s*<title>{re.escape(title)}</title>', dom), plot_id
    assert dom.count("<rect") + dom.count("<path") > 50  # the bars and axes were drawn, not just empty frames


def test_inspect_stats_and_report_show_the_evidence_class(data, capsys):
    """The CLI over the demo snapshot: inspect names each link's class (and a claimed link's cap), stats and
    report --json give the class counts per source."""
    import json

    from trustindex.cli.main import main

    page = ["--source", "community-contracts", "--path", "docs/review-process.md", "--data", str(data)]
    assert main(["inspect", *page]) == 0
    text = capsys.readouterr().out
    assert "verification: authenticated merge by Ada Lovelace (foundation)" in text
    assert "verification: claimed trailer by Ada Lovelace (foundation; claimed, lends at most community)" in text
    assert main(["inspect", *page, "--json"]) == 0
    links = json.loads(capsys.readouterr().out)["verifications"]
    assert sorted(v["evidence_class"] for v in links) == ["authenticated", "claimed"]
    assert main(["stats", "--data", str(data), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)["community-contracts"]["verification_evidence"]
    assert (
        stats["authenticated"] >= 1
        and stats["claimed"] >= 1
        and stats["links"] == sum(stats[c] for c in ("authenticated", "claimed", "operator"))
    )
    assert main(["report", "--data", str(data), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["verification_evidence"]
    assert report["community-contracts"] == stats
