"""``trustindex report``, ``inspect`` and ``stats``: what the live snapshot holds, via DuckDB."""

from __future__ import annotations

import json
from pathlib import Path

from trustindex.query.component_names import ComponentNames, snapshot_names
from trustindex.query.trust import evidence_class_of, lent_tier, page_kind_factor
from trustindex.schemas.components import ComponentRegistry
from trustindex.schemas.errors import TrustIndexError
from trustindex.schemas.page_routes import effective_route
from trustindex.schemas.policy import Policy
from trustindex.schemas.snapshot import COMPONENTS, read_manifest, resolve_current
from trustindex.schemas.tables import EVIDENCE_CLASSES
from trustindex.warehouse.catalog import connect_snapshot, fetch_dicts, verification_classes


def _has_table(con, name: str) -> bool:
    return bool(fetch_dicts(con, "SELECT 1 AS x FROM information_schema.tables WHERE table_name = ?", [name]))


def content_risks(con, doc_id: str | None = None) -> list[dict]:
    """Content-risk findings (of one document, or of the snapshot): where, what kind, why — never the text."""
    if not _has_table(con, "content_risk"):  # a snapshot built before content risk was read
        return []
    where, params = ("WHERE r.doc_id = ?", [doc_id]) if doc_id else ("", [])
    return fetch_dicts(
        con,
        "SELECT d.source, d.path, r.kind, r.rule, r.reason, r.start_line, r.end_line, r.chunk_id, r.detail "
        f"FROM content_risk r JOIN documents d USING (doc_id) {where} ORDER BY d.source, d.path, r.start_line, r.rule",
        params,
    )


def report(a) -> int:
    snap = resolve_current(a.data)
    m = read_manifest(snap)
    con = connect_snapshot(snap)
    files = fetch_dicts(
        con, "SELECT source, path, status, rule, stage, reason FROM ingest_report ORDER BY source, path"
    )
    sources = fetch_dicts(con, "SELECT source, commit, status, error FROM sources ORDER BY source")
    risks = content_risks(con)
    out = {
        "snapshot_id": m.snapshot_id,
        "sources": sources,
        "verification_evidence": verification_classes(con),
        "files": [{k: (v if v != "" else None) for k, v in f.items()} for f in files],
        "content_risk": risks,
    }
    if a.json:
        print(json.dumps(out, indent=2, default=str))
        return 0
    print(f"snapshot {m.snapshot_id}")
    for s in sources:
        counts = fetch_dicts(
            con,
            "SELECT status, count(*) AS n FROM ingest_report WHERE source = ? GROUP BY status ORDER BY status",
            [s["source"]],
        )
        print(
            f"  {s['source']} ({s['status']}{', ' + s['error'] if s['error'] else ''}): "
            + ", ".join(f"{c['n']} {c['status']}" for c in counts)
        )
    for f in files:
        if f["status"] == "failed":
            print(f"  FAILED {f['source']}/{f['path']}: {f['stage']}: {f['reason']}")
    rules = fetch_dicts(
        con,
        "SELECT rule, count(*) AS n FROM ingest_report WHERE status = 'skipped' GROUP BY rule ORDER BY n DESC, rule",
    )
    if rules:
        print("  skipped by rule: " + ", ".join(f"{r['rule']} {r['n']}" for r in rules))
    for r in risks:
        print(f"  CONTENT RISK {r['source']}/{r['path']}:{r['start_line']} [{r['kind']}] {r['reason']}")
    return 0


def inspect(a) -> int:
    snap = resolve_current(a.data)
    con = connect_snapshot(snap)
    docs = fetch_dicts(con, "SELECT * FROM documents WHERE source = ? AND path = ?", [a.source, a.path])
    if not docs:
        raise TrustIndexError(
            f"{a.source}:{a.path}: no such document in the live snapshot "
            f"(see `trustindex report` for skipped and failed files)"
        )
    d = docs[0]
    out = _evidence(con, d, Policy.load(getattr(a, "policy", None)))
    if a.json:
        print(json.dumps(out, indent=2, default=str))
    else:
        _print_evidence(out, d)
    return 0


def _evidence(con, d: dict, policy: Policy) -> dict:
    """Everything the snapshot holds about document ``d``: attribution, page kind under ``policy``, route,
    freshness, verifications, versions, deprecations, compile checks, content risk, chunks."""
    attr = fetch_dicts(con, "SELECT * EXCLUDE (doc_id) FROM attribution WHERE doc_id = ?", [d["doc_id"]])
    ver = [
        # a snapshot from before the evidence_class column: the class of the link's method, as the query reads it
        {**v, "evidence_class": evidence_class_of(v)}
        for v in fetch_dicts(
            con,
            "SELECT * EXCLUDE (doc_id, verifier_email) FROM verifications WHERE doc_id = ? ORDER BY date DESC",
            [d["doc_id"]],
        )
    ]
    vt = fetch_dicts(
        con,
        'SELECT component, "constraint", origin, status, chunk_id, detail FROM version_targets '
        "WHERE doc_id = ? ORDER BY component, origin",
        [d["doc_id"]],
    )
    dep = fetch_dicts(con, "SELECT scope, reason, marker, chunk_id FROM deprecations WHERE doc_id = ?", [d["doc_id"]])
    compiled = (
        fetch_dicts(
            con,
            "SELECT DISTINCT kind, compiler_version, language_version, outcome, reason, seconds, text_sha256 "
            "FROM compile_checks WHERE doc_id = ? ORDER BY text_sha256, compiler_version",
            [d["doc_id"]],
        )
        if _has_table(con, "compile_checks")
        else []
    )
    n = con.execute("SELECT count(*) FROM chunks WHERE doc_id = ?", [d["doc_id"]]).fetchone()[0]
    out = {
        "source": d["source"],
        "path": d["path"],
        "commit": d["commit"],
        "attribution": attr[0] if attr else {},
        # what the page is and its multiplier under the policy given (--policy; else the built-in one)
        "page_kind": page_kind_factor(d, policy).to_json(),
        # whether the docs site serves the page, and for a partial the page that renders it (issue 43)
        "route": {
            "status": effective_route(d.get("route"), d.get("part_of"), d["path"]),
            "reason": d.get("route_reason") or "",
            "part_of": d.get("part_of") or None,
            "page_url": d.get("page_url") or None,
        },
        "freshness": {
            "last_modified": d["last_modified"],
            "last_modified_commit": d["last_modified_commit"],
            "last_substantive_change": d["last_substantive_change"],
            "last_substantive_commit": d["last_substantive_commit"],
        },
        "verifications": ver,
        "version_targets": vt,
        "deprecations": dep,
        "compile_checks": compiled,
        "content_risk": [
            {k: v for k, v in r.items() if k not in ("source", "path")} for r in content_risks(con, d["doc_id"])
        ],
        "chunks": int(n),
    }
    return out


def _print_evidence(out: dict, d: dict) -> None:
    """``inspect``'s text: a line per piece of evidence."""
    print(f"{d['source']}/{d['path']} @ {d['commit'][:12]} — {out['chunks']} chunks")
    at = out["attribution"]
    print(f"  attribution: {at.get('publisher_name')} ({at.get('tier')}, via {at.get('origin')})")
    pk = out["page_kind"]
    print(f"  page kind: {pk['status']} ×{pk['multiplier']:.2f} ({pk['evidence']['reason']})")
    rt = out["route"]
    part = f"; part of {rt['part_of']}" if rt["part_of"] else ""
    print(f"  route: {rt['status']} ({rt['reason'] or 'no reason stored'}{part}) {rt['page_url'] or ''}".rstrip())
    print(f"  freshness: last modified {d['last_modified']}, last substantive change {d['last_substantive_change']}")
    home = at.get("tier")
    for v in out["verifications"]:
        lends, _why = lent_tier(v, home, Policy.default())  # the cap; require_authenticated is the query's
        cap = f"; claimed, lends at most {lends}" if lends != v["tier"] else ""
        print(
            f"  verification: {v['evidence_class']} {v['method']} by {v['verifier']} ({v['tier']}{cap}) "
            f"at {v['commit'][:12]} "
            f"{'STALE' if v['stale'] else 'current'} — {v['detail']}"
        )
    for v in out["version_targets"]:
        print(f"  version: {v['component']} {v['constraint']} ({v['origin']}, {v['status']})")
    for x in out["deprecations"]:
        print(f"  deprecated ({x['scope']}, {x['marker']}): {x['reason']}")
    for c in out["compile_checks"]:
        mark = "✓ compiles with" if c["outcome"] == "passed" else f"✗ {c['outcome']} by"
        why = f": {c['reason']}" if c["reason"] else ""
        print(f"  compile ({c['kind']} {c['text_sha256'][:8]}): {mark} compactc {c['compiler_version']}{why}")
    for r in out["content_risk"]:
        where = f"line {r['start_line']}" + (f"-{r['end_line']}" if r["end_line"] != r["start_line"] else "")
        print(f"  content risk ({r['kind']}, {where}): {r['reason']}" + (f" [{r['detail']}]" if r["detail"] else ""))


def stats(a) -> int:
    snapshot = resolve_current(a.data)
    out = stats_from(connect_snapshot(snapshot), snapshot)
    if a.json:
        print(json.dumps(out, indent=2, default=str))
    else:
        for name, s in out.items():
            print(f"{name}: {s['documents']} documents, {s['chunks']} chunks, {s['deprecated_chunks']} deprecated")
            print(f"  version components: {s['chunks_per_version_component']}")
            for name, merged in s.get("version_component_merges", {}).items():
                print(f"    {name} merges {', '.join(merged)}")
            print(f"  verification methods: {s['chunks_per_verification_method']}")
            ev = s["verification_evidence"]
            print(
                f"  verification links: {ev['links']} — "
                + ", ".join(f"{c} {ev[c]} ({100 * ev['share'][c]:.0f}%)" for c in EVIDENCE_CLASSES)
            )
            print(f"  freshness (days since substantive change): {s['freshness_days']}")
            if "documents_per_page_kind" in s:
                print("  page kinds: " + ", ".join(f"{k} {n}" for k, n in s["documents_per_page_kind"].items()))
            if "links_per_status" in s:
                print("  links: " + ", ".join(f"{k} {n}" for k, n in s["links_per_status"].items()))
            for compiler, c in s.get("compile_checks", {}).items():
                print(f"  compile checks, {compiler}: " + ", ".join(f"{v} {k}" for k, v in c.items()))
    return 0


def stats_from(con, snapshot: Path | None = None) -> dict:
    """Per source: documents, chunks, chunks per version component (under the names the search merges spellings
    into, and which stored names each merged: ``version_component_merges``) and verification method, deprecated
    chunks, freshness distribution — over any connection with the snapshot's tables as views."""
    classes = verification_classes(con)
    empty = {"links": 0, **{c: 0 for c in EVIDENCE_CLASSES}, "share": {c: 0.0 for c in EVIDENCE_CLASSES}}
    names = _component_names(con, snapshot)
    out = {
        s["source"]: {
            **_source_stats(con, s["source"], names),
            "verification_evidence": classes.get(s["source"], empty),
        }
        for s in fetch_dicts(con, "SELECT source FROM sources WHERE status = 'ok' ORDER BY source")
    }
    if _has_table(con, "compile_checks"):
        for name, s in out.items():
            s["compile_checks"] = compile_stats(con, name)
    if "page_kind" in {r["column_name"] for r in fetch_dicts(con, "SELECT column_name FROM (DESCRIBE documents)")}:
        for r in fetch_dicts(
            con, "SELECT source, page_kind, count(*) AS n FROM documents GROUP BY 1, 2 ORDER BY 1, n DESC, 2"
        ):
            if r["source"] in out:
                out[r["source"]].setdefault("documents_per_page_kind", {})[r["page_kind"]] = r["n"]
    if _has_table(con, "links"):  # the site's links (issue 43): what they name, unresolved ones counted
        for r in fetch_dicts(con, "SELECT source, status, count(*) AS n FROM links GROUP BY 1, 2 ORDER BY 1, 2"):
            if r["source"] in out:
                out[r["source"]].setdefault("links_per_status", {})[r["status"]] = r["n"]
    return out


def compile_stats(con, source: str) -> dict:
    """Per compiler: the distinct texts checked and how many of them each outcome."""
    out: dict = {}
    for r in fetch_dicts(
        con,
        "SELECT compiler_version, outcome, count(DISTINCT text_sha256) AS n FROM compile_checks WHERE source = ? "
        "GROUP BY 1, 2 ORDER BY 1, 2",
        [source],
    ):
        c = out.setdefault(f"compactc {r['compiler_version']}", {"checked": 0})
        c["checked"] += r["n"]
        c[r["outcome"]] = r["n"]
    return out


def _component_names(con, snapshot: Path | None) -> ComponentNames:
    """The search's merged component names for this snapshot (its registry, when it keeps one)."""
    t = {
        "version_targets": con.execute("SELECT component FROM version_targets").to_arrow_table(),
        "documents": con.execute("SELECT doc_id, path, front_matter FROM documents").to_arrow_table(),
        "chunks": con.execute("SELECT doc_id, ordinal, heading_path FROM chunks WHERE ordinal = 0").to_arrow_table(),
    }
    registry_file = snapshot / COMPONENTS if snapshot is not None else None
    registry = (
        ComponentRegistry.from_json(registry_file.read_text(encoding="utf-8"))
        if registry_file is not None and registry_file.is_file()
        else None
    )
    return snapshot_names(t, registry)


def _version_components(q, names: ComponentNames) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Chunks per merged component name, and the stored names each merged name stands for (where more than one)."""
    chunks: dict[str, set[str]] = {}
    stored: dict[str, set[str]] = {}
    for r in q(
        "SELECT DISTINCT v.component, c.chunk_id FROM chunks c JOIN version_targets v "
        "ON v.doc_id = c.doc_id AND (v.chunk_id IS NULL OR v.chunk_id = c.chunk_id) WHERE c.source = ?"
    ):
        name = names.of(r["component"])
        chunks.setdefault(name, set()).add(r["chunk_id"])
        stored.setdefault(name, set()).add(r["component"])
    merges = {n: sorted(s) for n, s in sorted(stored.items()) if s != {n}}
    return {n: len(c) for n, c in sorted(chunks.items())}, merges


def _source_stats(con, name: str, names: ComponentNames) -> dict:
    def q(sql: str) -> list[dict]:
        return fetch_dicts(con, sql, [name])

    per_component, merges = _version_components(q, names)
    return {
        "documents": q("SELECT count(*) AS n FROM documents WHERE source = ?")[0]["n"],
        "chunks": q("SELECT count(*) AS n FROM chunks WHERE source = ?")[0]["n"],
        "chunks_per_version_component": per_component,
        "version_component_merges": merges,
        "chunks_per_verification_method": {
            r["method"]: r["n"]
            for r in q(
                "SELECT v.method, count(DISTINCT c.chunk_id) AS n FROM chunks c JOIN verifications v "
                "ON v.doc_id = c.doc_id WHERE c.source = ? AND v.tier <> 'unknown' AND NOT v.stale "
                "GROUP BY 1 ORDER BY 1"
            )
        },
        "deprecated_chunks": q(
            "SELECT count(DISTINCT c.chunk_id) AS n FROM chunks c JOIN deprecations d ON d.doc_id = c.doc_id "
            "AND (d.chunk_id IS NULL OR d.chunk_id = c.chunk_id) WHERE c.source = ?"
        )[0]["n"],
        "freshness_days": {
            r["bucket"]: r["n"]
            for r in q(
                "SELECT CASE WHEN age < 30 THEN '<30' WHEN age < 90 THEN '30-90' WHEN age < 365 THEN '90-365' "
                "WHEN age < 730 THEN '365-730' ELSE '>=730' END AS bucket, count(*) AS n FROM (SELECT "
                "date_diff('day', last_substantive_change, now()) AS age FROM documents WHERE source = ?) "
                "GROUP BY 1 ORDER BY 1"
            )
        },
    }
