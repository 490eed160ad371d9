"""A tiny snapshot built with a given embedder (``build_tiny``): the embedding-model and encoder-identity tests."""

from __future__ import annotations

from datetime import UTC, datetime

from trustindex.schemas.snapshot import resolve_current
from trustindex.schemas.tables import SOURCE_TABLES, chunk_id_of, doc_id_of, sha256_text, table_from_rows

PAGES = {  # path -> passages
    "docs/install.md": ["Install the Compact compiler with the installer script, then add it to your PATH."],
    "docs/wallet.md": ["The wallet SDK signs transactions and keeps the user's keys on their own machine."],
    "docs/node.md": ["Running a node needs 16 GB of memory and a recent four-core CPU."],
}


def tiny_tables(pages: dict[str, list[str]] = PAGES) -> tuple[dict, dict]:
    """Source "tiny"'s tables: one document per path, its passages as chunks (each under the path as heading)."""
    when = datetime(2026, 1, 1, tzinfo=UTC)
    docs, chunks, attribution = [], [], []
    for path, passages in pages.items():
        did = doc_id_of("tiny", path)
        docs.append({"doc_id": did, "source": "tiny", "commit": "0" * 40, "path": path, "kind": "markdown"})
        docs[-1].update({"last_modified": when, "last_substantive_change": when, "warnings": []})
        attribution.append({"doc_id": did, "publisher": "midnight", "tier": "official", "origin": "source"})
        for i, text in enumerate(passages):
            sha = sha256_text(text)
            chunks.append(
                {
                    "chunk_id": chunk_id_of("tiny", path, i + 1, i + 1, sha, i),
                    "doc_id": did,
                    "source": "tiny",
                    "path": path,
                    "ordinal": i,
                    "heading_path": [path],
                    "start_line": i + 1,
                    "end_line": i + 1,
                    "text": text,
                    "content_sha256": sha,
                    "token_count": len(text.split()),
                }
            )
    rows = {"documents": docs, "chunks": chunks, "attribution": attribution}
    source = {"source": "tiny", "repo": "https://example.invalid/tiny.git", "commit": "0" * 40, "status": "ok"}
    return {name: table_from_rows(name, rows.get(name, [])) for name in SOURCE_TABLES}, source


def build_tiny(data, embedder, pages: dict[str, list[str]] = PAGES):
    """The pages built by the real build path (tables, embeddings, BM25, manifest) and published; the snapshot's
    folder and the embedding stats."""
    from trustindex.encoder.embedding_cache import EmbeddingCache
    from trustindex.schemas.policy import Policy
    from trustindex.warehouse.build import write_snapshot_files
    from trustindex.warehouse.snapshots import finish_snapshot, new_build_dir, set_current

    cache = EmbeddingCache(data / "cache" / "embeddings", embedder.cache_key, embedder.dimensions)
    tables, source = tiny_tables(pages)
    build = new_build_dir(data)
    counts, stats = write_snapshot_files(build, {"tiny": tables}, [source], embedder, cache)
    m = finish_snapshot(
        data,
        build,
        sources=[source],
        embedding_model=embedder.info(),
        row_counts=counts,
        build_policy_id=Policy.default().policy_id,
    )
    set_current(data, m.snapshot_id)
    return resolve_current(data), stats
