"""One document's rows in every table, from the source's context and the file's extraction."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from trustindex.crawl.history import CommitInfo
from trustindex.crawl.signatures import signature_links
from trustindex.extractors.attribution import attribute
from trustindex.extractors.base import Chunk, Deprecation, Extraction, VersionTarget
from trustindex.extractors.content_risk import ContentRisk, neutralise, passage_risks
from trustindex.extractors.page_language import page_language
from trustindex.extractors.verification import Link, chain_for_file
from trustindex.ingest.context import SourceContext
from trustindex.ingest.links import LINKED_KINDS, page_link_rows
from trustindex.schemas.embedded_text import embed_text
from trustindex.schemas.page_kinds import CODE
from trustindex.schemas.page_url import section_anchor
from trustindex.schemas.tables import DOCUMENT_TABLES, chunk_id_of, doc_id_of, sha256_text
from trustindex.schemas.web_url import file_url

Row = dict[str, Any]


def empty_rows() -> dict[str, list[Row]]:
    return {name: [] for name in DOCUMENT_TABLES}


def document_rows(
    ctx: SourceContext, path: str, data: bytes, kind: str, extraction: Extraction | None
) -> dict[str, list[Row]]:
    """Every table's rows for one document."""
    rows = empty_rows()
    doc_id = doc_id_of(ctx.source.name, path)
    touches = ctx.touches(path)
    subst = {c.sha: ctx.is_substantive(c, path) for c in touches}
    text = data.decode("utf-8", "replace")
    targets = ctx.evidence.version_targets(path, kind, text, extraction)
    deprecations = ctx.evidence.deprecations(path, kind, text, extraction)
    read = FileRead(doc_id, path, data, text, kind, extraction)
    rows["documents"].append(_document_row(ctx, read, touches, subst))
    last = touches[0] if touches else None
    author = (last.author_name, last.author_email) if last else ("", "")
    rows["attribution"].append({"doc_id": doc_id, **attribute(ctx.source, path, ctx.ids, *author)})
    rows["verifications"] = [_verification_row(doc_id, link) for link in _links(ctx, path, touches, subst)]
    chunk_ids: dict[int, str] = {}
    chunks = extraction.chunks if extraction else []
    for ch in chunks:
        row = _chunk_row(ctx, doc_id, path, ch)
        chunk_ids[ch.ordinal] = row["chunk_id"]
        rows["chunks"].append(row)
    rows["version_targets"] = [_version_target_row(doc_id, vt, chunk_ids) for vt in targets]
    rows["deprecations"] = [_deprecation_row(doc_id, d, chunk_ids) for d in deprecations]
    rows["content_risk"] = [_content_risk_row(doc_id, r, chunk_ids) for r in passage_risks(chunks)]
    if kind in LINKED_KINDS:  # resolved once the whole source is read (ingest/links.py resolve_links)
        rows["links"] = page_link_rows(doc_id, ctx.source.name, path, text, rows["chunks"], kind)
    return rows


def _utc(dt: datetime) -> datetime:
    return dt.astimezone(UTC)


@dataclass(frozen=True)
class FileRead:
    """One file as this run read it: its document id, path, bytes and their text, kind, and extraction (None: a
    configuration file)."""

    doc_id: str
    path: str
    data: bytes
    text: str
    kind: str
    extraction: Extraction | None


def _document_row(ctx: SourceContext, f: FileRead, touches: list[CommitInfo], subst: dict[str, bool]) -> Row:
    doc_id, path, data, text, kind, extraction = f.doc_id, f.path, f.data, f.text, f.kind, f.extraction
    last = touches[0] if touches else None
    last_sub = next((c for c in touches if subst[c.sha]), touches[-1] if touches else None)
    fm = extraction.front_matter if extraction else {}
    page_kind = ctx.evidence.page_kinds.of(path, kind, fm, text)
    route, page_url = ctx.evidence.site_page(ctx.source.site_url, path, kind, fm)
    return {
        "doc_id": doc_id,
        "source": ctx.source.name,
        "repo": ctx.source.url,
        "commit": ctx.commit,
        "path": path,
        "kind": kind,
        "content_sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
        "last_modified": _utc(last.commit_date) if last else ctx.head_time,
        "last_modified_commit": last.sha if last else ctx.commit,
        "last_substantive_change": _utc(last_sub.commit_date) if last_sub else ctx.head_time,
        "last_substantive_commit": last_sub.sha if last_sub else ctx.commit,
        "front_matter": json.dumps(fm, sort_keys=True, default=str),
        "url": file_url(ctx.source.web_template, ctx.source.name, ctx.commit, path),
        "page_url": page_url,
        "page_kind": page_kind.kind,
        "page_kind_reason": page_kind.reason,
        "warnings": list(extraction.warnings) if extraction else [],
        "route": route.status,
        "route_reason": route.reason,
        "includes": list(extraction.includes) if extraction else [],
        "part_of": "",  # set for the whole source once every page is read (ingest/includes.py)
        "created": _utc(ctx.created(path)),
        "language": page_language(text) if text and page_kind.kind != CODE else "",
    }


def _links(ctx: SourceContext, path: str, touches: list[CommitInfo], subst: dict[str, bool]) -> list[Link]:
    """Trailer, merge and signed-commit links from the file's history, then the ledger's and signed tags'."""
    links = chain_for_file(touches, subst, ctx.owners, ctx.ids, ctx.attestations)
    links += signature_links(touches, subst, ctx.signatures, ctx.ids)
    vouches = ctx.vouches.get(path, [])
    for link in vouches:  # vouched at a commit: stale only if a substantive change came after it
        if link.stale:
            link.stale = any(subst.get(t.sha) and t.commit_date > link.date for t in touches)
    return links + vouches


def _verification_row(doc_id: str, link: Link) -> Row:
    return {
        "doc_id": doc_id,
        "verifier": link.verifier,
        "verifier_email": link.verifier_email,
        "publisher": link.publisher,
        "tier": link.tier,
        "method": link.method,
        "commit": link.commit,
        "date": _utc(link.date),
        "stale": link.stale,
        "detail": link.detail,
        "evidence_class": link.evidence_class,
    }


def _chunk_row(ctx: SourceContext, doc_id: str, path: str, ch: Chunk) -> Row:
    # Invisible characters (zero-width, bidi controls, tags) are neither served nor embedded; content_risk rows
    # record that they were there.
    text, headings = neutralise(ch.text), [neutralise(h) for h in ch.heading_path]
    etext = embed_text(headings, ch.symbol_path, path, text)
    return {
        "chunk_id": chunk_id_of(ctx.source.name, path, ch.start_line, ch.end_line, sha256_text(text), ch.ordinal),
        "doc_id": doc_id,
        "source": ctx.source.name,
        "path": path,
        "ordinal": ch.ordinal,
        "heading_path": headings,
        "symbol_path": ch.symbol_path,
        "start_line": ch.start_line,
        "end_line": ch.end_line,
        "text": text,
        "content_sha256": sha256_text(etext),
        "token_count": ch.token_count or ctx.count_tokens(etext),
        "anchor": section_anchor(headings, neutralise(ch.anchor), ctx.evidence.routes.generator(path)),
    }


def _version_target_row(doc_id: str, vt: VersionTarget, chunk_ids: dict[int, str]) -> Row:
    return {
        "doc_id": doc_id,
        "chunk_id": chunk_ids.get(vt.chunk_ordinal) if vt.chunk_ordinal is not None else None,
        "component": vt.component,
        "constraint": vt.constraint,
        "intervals": vt.intervals,
        "origin": vt.origin,
        "status": vt.status,
        "detail": vt.detail,
    }


def _deprecation_row(doc_id: str, d: Deprecation, chunk_ids: dict[int, str]) -> Row:
    return {
        "doc_id": doc_id,
        "chunk_id": chunk_ids.get(d.chunk_ordinal) if d.chunk_ordinal is not None else None,
        "scope": d.scope,
        "reason": d.reason,
        "marker": d.marker,
    }


def _content_risk_row(doc_id: str, r: ContentRisk, chunk_ids: dict[int, str]) -> Row:
    return {
        "doc_id": doc_id,
        "chunk_id": chunk_ids.get(r.chunk_ordinal),
        "kind": r.kind,
        "rule": r.rule,
        "reason": r.reason,
        "start_line": r.start_line,
        "end_line": r.end_line,
        "start_char": r.start_char,
        "end_char": r.end_char,
        "detail": r.detail,
    }
