"""What both transports list about the served snapshot: a passage with its neighbours (``PassageMap``), the
sources and the version components.  Plain dicts of the response contract's shapes (schemas/response.py)."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from typing import Any

from trustindex.query.reader import SnapshotData
from trustindex.schemas.errors import SnapshotError
from trustindex.schemas.version_map import INFERRED
from trustindex.schemas.web_url import document_url

MAX_NEIGHBOURS = 20  # get_passage's bound on neighbours each side, over HTTP and MCP
SHOWN_ID_CHARS = 80  # an unknown id is echoed this far at most (a chunk id is 64 hex digits; a request's can be 100 KB)


class OutOfScope(SnapshotError):
    """A passage that exists, of a source the caller may not read: answered exactly as a missing one."""


class PassageMap:
    """chunk_id → row, and each document's rows in ordinal order (for neighbours)."""

    def __init__(self, data: SnapshotData):
        self.data = data
        self.row = {cid: i for i, cid in enumerate(data.chunk_ids)}
        by_doc: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, (doc, ordinal) in enumerate(zip(data.chunk_doc, data.chunks["ordinal"], strict=True)):
            by_doc[doc].append((ordinal, i))
        self.by_doc = {d: sorted(rows) for d, rows in by_doc.items()}

    def passage(self, chunk_id: str, neighbours: int, sources: frozenset[str] | None = None) -> dict:
        """``sources``: the caller's (query/scope.py); a passage of another source is answered as one that does not
        exist (``OutOfScope``, the same message), so a scoped caller cannot tell the two apart."""
        from trustindex.query.response import provenance

        d = self.data
        hidden = (
            sources is not None and chunk_id in self.row and d.chunks.value("source", self.row[chunk_id]) not in sources
        )
        if chunk_id not in self.row or hidden:
            shown = chunk_id[:SHOWN_ID_CHARS] + ("…" if len(chunk_id) > SHOWN_ID_CHARS else "")
            raise (OutOfScope if hidden else SnapshotError)(
                f"chunk {shown!r} is not in snapshot {d.manifest.snapshot_id} (chunk ids change with content; "
                f"search again)"
            )
        i = self.row[chunk_id]
        doc_id = d.chunk_doc[i]
        rows = self.by_doc[doc_id]
        pos = bisect_left(rows, (d.chunks["ordinal"][i], i))
        lo = max(0, pos - neighbours)
        doc, attr = d.pages.document(doc_id), d.pages.attribution_of(doc_id)
        passages = []
        for n, (ordinal, j) in enumerate(rows[lo : pos + neighbours + 1], lo):
            passages.append(
                {
                    "chunk_id": d.chunk_ids[j],
                    "ordinal": int(ordinal),
                    "role": "target" if n == pos else ("before" if n < pos else "after"),
                    "text": d.chunks["text"][j],
                    "provenance": provenance(d, j).to_json(),
                }
            )
        return {
            "snapshot_id": d.manifest.snapshot_id,
            "chunk_id": chunk_id,
            "document": {
                "source": doc.source,
                "repo": doc.repo,
                "commit": doc.commit,
                "path": doc.path,
                "kind": doc.kind,
                "url": document_url(doc.url) if doc.url else None,
                "chunks": len(rows),
                "last_modified": _iso(doc.last_modified),
                "last_substantive_change": _iso(doc.last_substantive_change),
            },
            "evidence": {
                "publisher": attr.publisher if attr else None,
                "publisher_name": attr.publisher_name if attr else None,
                "tier": attr.tier if attr else None,
                "verifications": [
                    {
                        "verifier": v.verifier,
                        "tier": v.tier,
                        "method": v.method,
                        "evidence_class": v.evidence_class,
                        "commit": v.commit,
                        "stale": v.stale,
                    }
                    for v in d.verifications.get(doc_id, [])
                ],
                "deprecations": [
                    {"scope": x.scope, "reason": x.reason, "marker": x.marker} for x in d.deprecation_rows(i)
                ],
                "version_targets": [
                    {"component": r.component, "constraint": r.constraint, "origin": r.origin}
                    for rs in d.version_rows(i).values()
                    for r in rs
                ],
            },
            "passages": passages,
        }


@dataclass(frozen=True, slots=True)
class SourceListed:
    """What the listing shows of a source's row (the sources table's, else the manifest's entry): absent keys are
    None, an empty error too."""

    repo: str | None
    ref: str | None
    commit: str | None
    commit_date: str | None
    publisher: str | None
    tier: str | None
    status: str | None
    error: str | None

    def __post_init__(self) -> None:
        object.__setattr__(self, "error", self.error or None)

    @classmethod
    def of(cls, row: dict[str, Any]) -> SourceListed:
        return cls(**{name: row.get(name) for name in cls.__dataclass_fields__})


_ATTRIBUTED = ("doc_id", "publisher", "publisher_name", "tier")  # what the listing reads of the attribution table


def _columns(table, *names: str) -> zip:
    """``table``'s rows as tuples of these columns (None where a snapshot predates a column)."""
    columns = [table.column(n).to_pylist() if n in table.column_names else [None] * table.num_rows for n in names]
    return zip(*columns, strict=True)


def list_sources(data: SnapshotData) -> dict:
    """Sources with their commits (sources table, else the manifest) and the publishers/tiers seen in them."""
    m = data.manifest
    chunks = Counter(data.chunks["source"])
    # Read as columns: typing every document's row (``Pages.document``) kept one object per document for the life of
    # the snapshot and sliced the table once per document, for two of its fields.
    source_of = dict(_columns(data.pages.docs.table, "doc_id", "source"))  # the last row of a repeated id wins
    docs = Counter(source_of.values())
    pubs: dict[str, Counter] = defaultdict(Counter)
    names: dict[str | None, tuple] = {}
    attributed = {d: rest for d, *rest in _columns(data.pages.attribution.table, *_ATTRIBUTED)}
    for doc_id, (publisher, name, tier) in attributed.items():
        if (source := source_of.get(doc_id)) is not None:
            pubs[source][publisher] += 1
            names[publisher] = (name, tier)
    rows = data.sources or m.source_rows()
    out = []
    for name, r in sorted(rows.items()):
        out.append(
            {
                "source": name,
                **asdict(SourceListed.of(r)),
                "documents": docs.get(name, 0),
                "chunks": chunks.get(name, 0),
                "publishers": [
                    {"publisher": p, "name": names[p][0], "tier": names[p][1], "documents": n}
                    for p, n in sorted(pubs[name].items())
                ],
            }
        )
    return {
        "snapshot_id": m.snapshot_id,
        "created_at": m.created_at,
        "built_at": m.created_at,
        "parent": m.parent,
        "embedding_model": m.embedding_model.get("id"),
        "sources": out,
    }


def list_versions(data: SnapshotData) -> dict:
    """Components and every constraint the snapshot stores for them, with origins and coverage; ``merged``: the
    stored spellings one component's name stands for (query/component_names.py); ``inferred_documents``: pages that
    only inherit a version of it from their docs version (query/version_inference.py)."""
    origins: dict[str, Counter] = defaultdict(Counter)
    docs: dict[str, set] = defaultdict(set)
    inferred: dict[str, set] = defaultdict(set)
    for scoped in (data.doc_versions, data.chunk_versions):
        for rows in scoped.values():
            for r in rows:
                origins[r.component][r.origin] += 1
                (inferred if r.origin == INFERRED else docs)[r.component].add(r.doc_id)
    merged = data.component_names.variants
    comps = [
        {
            "component": c,
            "constraints": sorted(data.components[c]),
            "origins": dict(sorted(origins[c].items())),
            "documents": len(docs[c]),
            **({"inferred_documents": len(inferred[c] - docs[c])} if inferred[c] else {}),
            **({"merged": list(merged[c])} if c in merged else {}),
        }
        for c in sorted(data.components)
    ]
    return {
        "snapshot_id": data.manifest.snapshot_id,
        "components": comps,
        "hint": "pass targets as {component: version_or_range} to search; components not listed here are rejected",
    }


def _iso(ts) -> str | None:
    return ts.isoformat() if ts is not None else None
