"""A snapshot of two sources, one public and one private, built by the real build path (tables, the ONNX int8
encoder, BM25, manifest) and published: what the scoped-token tests search (tests/query/test_scope.py,
tests/serve/test_access.py).

The private source comes in two versions with other words on other topics (``PRIVATE_A``, ``PRIVATE_B``) but the
same number of passages and of lexical tokens in each passage: the one number of the whole library a scoped search
still reads (BM25's average passage length, docs/serving.md) is then the same in both builds, so a scoped caller's
answers must be byte for byte the same whichever private source sits beside the public one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from trustindex.schemas.lexical import tokenize
from trustindex.schemas.snapshot import resolve_current
from trustindex.schemas.tables import SOURCE_TABLES, chunk_id_of, doc_id_of, sha256_text, table_from_rows
from trustindex.schemas.version_parsers import parse_compact, parse_npm

PUBLIC, PRIVATE = "public-docs", "acme-private"

# path -> (passages, version targets: (component, constraint) for the whole page)
Pages = dict[str, tuple[list[str], list[tuple[str, str]]]]
INSTALL = "Install the Compact compiler with the installer script, then add the compiler to your PATH."
PUBLIC_PAGES: Pages = {
    "docs/install.md": (
        [INSTALL, "Check the installed compiler version with compact --version before you build a contract."],
        [("compact-language", ">= 0.16")],
    ),
    "docs/wallet.md": (["The wallet SDK signs transactions and keeps the user's keys on their own machine."], []),
    "docs/node.md": (
        ["Running a node needs 16 GB of memory and a recent four-core CPU; the proof server needs more."],
        [],
    ),
    "docs/escrow.md": (
        ["An escrow contract holds the buyer's payment until the buyer releases it to the seller."],
        [("compact-language", ">= 0.20")],
    ),
}


def _internal(*pages: tuple[str, list[str], tuple[str, str]]) -> Pages:
    """Pages under internal/: (name, passages, the one version target of the page)."""
    return {f"internal/{name}.md": (passages, [target]) for name, passages, target in pages}


NIGHTJAR = [
    "Project Nightjar: the acquisition of Lumen Labs closes in March; the board approved the price.",
    "Nightjar staff install the Compact compiler from the internal mirror on the build farm.",
]
RUNBOOK = ["Our escrow contract releases the buyer's payment automatically after the zorblax audit passes."]
KESTREL = [
    "Kestrel payroll review: salary bands move upward in April after the audit.",
    "Kestrel laptops enroll in device management before connecting to the office network.",
]
ONCALL = ["The oncall rotation pages the database team when replication lag exceeds thirty seconds."]
PRIVATE_A = _internal(
    ("nightjar", NIGHTJAR, ("@acme/nightjar-sdk", "^2.1.0")), ("escrow-runbook", RUNBOOK, ("compact-language", "0.31"))
)
# other words and topics, the same token counts (balanced() pads what is short)
PRIVATE_B = _internal(
    ("kestrel", KESTREL, ("@acme/kestrel-tools", "^7.0.0")), ("oncall-rota", ONCALL, ("compact-language", "0.29"))
)


def _tokens(pages: dict) -> list[int]:
    """Per passage, its lexical tokens in the text index and in the field index (warehouse/build.py field_input)."""
    from trustindex.warehouse.build import file_words

    out = []
    for path, (passages, _v) in pages.items():
        fields = len(tokenize("\n".join([_heading(path), "", file_words(path)])))
        out += [(len(tokenize(t)), fields) for t in passages]
    return out


def _heading(path: str) -> str:
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0].replace("-", " ").title()


def balanced(a: dict, b: dict) -> dict:
    """``b`` with each passage padded by a neutral word until it has as many lexical tokens as ``a``'s passage in
    the same place (same page count and passage counts required)."""
    counts = iter(n for n, _fields in _tokens(a))
    out = {}
    for path, (passages, versions) in b.items():
        padded = []
        for text in passages:
            want = next(counts)
            assert len(tokenize(text)) <= want, f"{path}: shorten this passage ({len(tokenize(text))} > {want})"
            while len(tokenize(text)) < want:
                text += " indeed"
            padded.append(text)
        out[path] = (padded, versions)
    assert _tokens(out) == _tokens(a), "the two private sources need the same page titles' token counts"
    return out


def _intervals(component: str, constraint: str) -> str:
    parse = parse_npm if component.startswith("@") else parse_compact
    return parse(constraint).to_json()


def source_tables(source: str, pages: dict, when: datetime) -> dict:
    """One source's tables: a document per path, its passages as chunks, its version targets."""
    docs, chunks, attribution, versions = [], [], [], []
    for path, (passages, targets) in pages.items():
        did = doc_id_of(source, path)
        docs.append(
            {
                "doc_id": did,
                "source": source,
                "repo": f"https://example.invalid/{source}.git",
                "commit": "1" * 40,
                "path": path,
                "kind": "markdown",
                "last_modified": when,
                "last_substantive_change": when,
                "warnings": [],
            }
        )
        attribution.append({"doc_id": did, "publisher": "acme", "tier": "foundation", "origin": "source"})
        for component, constraint in targets:
            versions.append(
                {
                    "doc_id": did,
                    "chunk_id": None,
                    "component": component,
                    "constraint": constraint,
                    "intervals": _intervals(component, constraint),
                    "origin": "front_matter",
                    "status": "parsed",
                    "detail": None,
                }
            )
        for i, text in enumerate(passages):
            sha = sha256_text(text)
            chunks.append(
                {
                    "chunk_id": chunk_id_of(source, path, i + 1, i + 1, sha, i),
                    "doc_id": did,
                    "source": source,
                    "path": path,
                    "ordinal": i,
                    "heading_path": [_heading(path)],
                    "start_line": i + 1,
                    "end_line": i + 1,
                    "text": text,
                    "content_sha256": sha,
                    "token_count": len(text.split()),
                }
            )
    rows = {"documents": docs, "chunks": chunks, "attribution": attribution, "version_targets": versions}
    return {name: table_from_rows(name, rows.get(name, [])) for name in SOURCE_TABLES}


def build_two_sources(data: Path, private: dict, embedder) -> Path:
    """``PUBLIC_PAGES`` and ``private`` built into ``data`` and published; the live snapshot's folder."""
    from trustindex.encoder.embedding_cache import EmbeddingCache
    from trustindex.schemas.policy import Policy
    from trustindex.warehouse.build import write_snapshot_files
    from trustindex.warehouse.snapshots import finish_snapshot, new_build_dir, set_current

    when = datetime(2026, 9, 1, tzinfo=UTC)
    per_source = {PUBLIC: source_tables(PUBLIC, PUBLIC_PAGES, when), PRIVATE: source_tables(PRIVATE, private, when)}
    sources = [
        {
            "source": s,
            "repo": f"https://example.invalid/{s}.git",
            "commit": "1" * 40,
            "commit_date": "2026-09-01T00:00:00Z",
            "publisher": "acme",
            "tier": "foundation",
            "status": "ok",
        }
        for s in (PUBLIC, PRIVATE)
    ]
    cache = EmbeddingCache(data / "cache" / "embeddings", embedder.cache_key, embedder.dimensions)
    build = new_build_dir(data)
    counts, _stats = write_snapshot_files(build, per_source, sources, embedder, cache)
    m = finish_snapshot(
        data,
        build,
        sources=sources,
        embedding_model=embedder.info(),
        row_counts=counts,
        build_policy_id=Policy.default().policy_id,
    )
    set_current(data, m.snapshot_id)
    return resolve_current(data)


def private_words(pages: dict) -> set[str]:
    """Words of the private pages that no public page uses (a response holding one would have leaked)."""
    public = {w.lower().strip(".,:;'") for passages, _v in PUBLIC_PAGES.values() for t in passages for w in t.split()}
    words = {w.lower().strip(".,:;'") for passages, _v in pages.values() for t in passages for w in t.split()}
    return {w for w in words - public if len(w) > 5}
