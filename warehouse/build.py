"""Assemble a snapshot's files from per-source tables: tables, embeddings, BM25.

Rows are sorted by content-derived keys so the same inputs write the same
bytes, and therefore get the same snapshot id.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa

from trustindex.encoder.embedding_cache import Embedder, EmbeddingCache, EmbedStats, embed_texts
from trustindex.encoder.factory import embedder_identity
from trustindex.query.dense import STORAGE_DTYPE, build_ann_index
from trustindex.runtime import progress
from trustindex.runtime.memory import return_freed_memory
from trustindex.schemas.components import ComponentRegistry
from trustindex.schemas.embedded_text import embedding_input
from trustindex.schemas.policy import Policy
from trustindex.schemas.snapshot import (
    BM25_DIR,
    BM25_FIELDS_DIR,
    COMPONENTS,
    DENSE_INDEX,
    EMBEDDINGS,
    INDEX_FORMAT,
    TABLE_FILES,
)
from trustindex.schemas.tables import SCHEMA_VERSION, SOURCE_TABLES, table_from_rows
from trustindex.warehouse.bm25 import build_bm25
from trustindex.warehouse.copies import COPY_DETECTION, find_copies
from trustindex.warehouse.page_links import resolve_site_urls, write_page_links
from trustindex.warehouse.tables import concat, write_table

SORT_KEYS = {
    "documents": [("source", "ascending"), ("path", "ascending")],
    "chunks": [("source", "ascending"), ("path", "ascending"), ("ordinal", "ascending")],
    "attribution": [("doc_id", "ascending")],
    "verifications": [
        ("doc_id", "ascending"),
        ("date", "descending"),
        ("method", "ascending"),
        ("verifier_email", "ascending"),
        ("commit", "ascending"),
    ],
    "version_targets": [
        ("doc_id", "ascending"),
        ("chunk_id", "ascending"),
        ("component", "ascending"),
        ("origin", "ascending"),
        ("constraint", "ascending"),
    ],
    "deprecations": [("doc_id", "ascending"), ("chunk_id", "ascending"), ("marker", "ascending")],
    "content_risk": [
        ("doc_id", "ascending"),
        ("chunk_id", "ascending"),
        ("start_char", "ascending"),
        ("rule", "ascending"),
    ],
    "links": [
        ("source", "ascending"),
        ("path", "ascending"),
        ("line", "ascending"),
        ("kind", "ascending"),
        ("target", "ascending"),
        ("text", "ascending"),
    ],
    "ingest_report": [("source", "ascending"), ("path", "ascending")],
    "compile_checks": [
        ("doc_id", "ascending"),
        ("chunk_id", "ascending"),
        ("compiler_version", "ascending"),
        ("text_sha256", "ascending"),
    ],
}


def field_input(chunks: pa.Table) -> list[str]:
    """What the field index sees of a passage: its heading path (the page title first), its symbol and its file's
    name (with the folder of an index page), the places where a page says what it is about."""
    out = []
    for hp, sp, path in zip(
        chunks.column("heading_path").to_pylist(),
        chunks.column("symbol_path").to_pylist(),
        chunks.column("path").to_pylist(),
        strict=True,
    ):
        out.append("\n".join([*(hp or []), sp or "", file_words(path)]))
    return out


def file_words(path: str) -> str:
    """``docs/compact/reference/explicit-disclosure.mdx`` -> ``explicit disclosure``; an index page adds its folder."""
    parts = path.split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    words = [parts[-2], stem] if stem.lower() in ("index", "_index", "readme") and len(parts) > 1 else [stem]
    return " ".join(w.replace("-", " ") for w in words)


def canonical_version_targets(table: pa.Table, components: ComponentRegistry) -> pa.Table:
    """Version targets under the registry's canonical component ids (the name as written stays in the detail)."""
    rows = table.to_pylist()
    for r in rows:
        component, detail = components.rename(r["component"], r["detail"] or "")
        if component != r["component"]:
            r["component"], r["detail"] = component, detail
    return table_from_rows("version_targets", rows).sort_by(SORT_KEYS["version_targets"]) if rows else table


def write_snapshot_files(
    build_dir: Path,
    per_source: dict[str, dict[str, pa.Table]],
    source_rows: list[dict],
    embedder: Embedder,
    cache: EmbeddingCache,
    ann_min_rows: int | None = None,
    components: ComponentRegistry | None = None,
) -> tuple[dict[str, int], EmbedStats]:
    """``ann_min_rows``: the policy's ``dense.exact_below``; at that many chunks an HNSW index is built too.

    ``components``: the operator's component registry; targets are stored under canonical ids and the registry
    is kept in the snapshot (``components.json``) so that queries may name a component by any alias."""
    build_dir = Path(build_dir)
    counts: dict[str, int] = {}
    tables = {}
    for name in SOURCE_TABLES:
        tables[name] = concat([t[name] for _s, t in sorted(per_source.items())], name, SORT_KEYS[name])
    # a URL of an indexed source's published site names that page (another repository's link to the docs)
    tables["links"] = resolve_site_urls(tables["links"], tables["documents"])
    if components:
        tables["version_targets"] = canonical_version_targets(tables["version_targets"], components)
        (build_dir / COMPONENTS).write_text(components.to_json() + "\n", encoding="utf-8")
    tables["sources"] = table_from_rows("sources", sorted(source_rows, key=lambda r: r["source"]))
    checked = [t["compile_checks"] for _s, t in sorted(per_source.items()) if "compile_checks" in t]
    if checked:  # only where compilers are configured: snapshots without them keep their files
        tables["compile_checks"] = concat(checked, "compile_checks", SORT_KEYS["compile_checks"])
    copies = find_copies(tables["chunks"], tables["documents"], tables["attribution"])
    if copies.num_rows:  # only where one source copies another's passages: other snapshots keep their files
        tables["copies"] = copies
    with progress.stage("tables", sum(t.num_rows for t in tables.values()), unit="rows") as bar:
        for name, t in tables.items():
            write_table(t, build_dir / TABLE_FILES[name])
            counts[name] = t.num_rows
            bar.advance(t.num_rows)
    write_page_links(build_dir, tables.pop("links"), tables["documents"])
    # What the stages below hold is the build's peak memory (issue 29: ~92k chunks): only the chunks stay, the
    # float32 vectors and the cache's copy of them go once the float16 matrix exists, the body texts once their
    # BM25 is built.
    chunks = tables.pop("chunks")
    del tables
    texts = embedding_input(chunks)
    shas = chunks.column("content_sha256").to_pylist()
    # float16 on disk (query/dense.py), made row by row: at 105k passages a float32 matrix beside the cache's
    # vectors was the build's peak (issue 29)
    matrix16, stats = embed_texts(texts, shas, embedder, cache, dtype=STORAGE_DTYPE)
    del shas
    cache.release()
    return_freed_memory()  # the cache's copies and the tables' concatenation buffers, before BM25's transient
    if ann_min_rows is None:
        ann_min_rows = Policy.default().dense.exact_below
    with progress.stage("index", len(texts), unit="chunks") as bar:  # vectors on disk, ANN if large, BM25
        with open(build_dir / EMBEDDINGS, "wb") as f:
            np.save(f, matrix16, allow_pickle=False)
        if matrix16.shape[0] and matrix16.shape[0] >= ann_min_rows:
            build_ann_index(matrix16, build_dir / DENSE_INDEX)
            bar.note(ann=True)
        build_bm25(texts, build_dir / BM25_DIR)
        del texts
        build_bm25(field_input(chunks), build_dir / BM25_FIELDS_DIR)
    for rel, src in embedder.snapshot_files().items():
        place_file(src, build_dir / rel)
    counts["embeddings"] = int(matrix16.shape[0])
    return counts, stats


def linked_sha256(build_dir: Path, embedder: Embedder) -> dict[str, str]:
    """sha256 by relative path of the build's files that are hard links to files the embedder has verified
    (the encoder export, checked when the model was loaded): publishing need not read them again.  A copy
    (another filesystem) is hashed as any other file."""
    hashes = embedder.verified_sha256()
    return {
        rel: hashes[rel]
        for rel, src in embedder.snapshot_files().items()
        if rel in hashes and (build_dir / rel).is_file() and os.path.samefile(src, build_dir / rel)
    }


def place_file(src: Path, dst: Path) -> None:
    """Hard-link an immutable file into a build (same filesystem), else copy it."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def build_inputs_key(
    keys: dict[str, str], rows: list[dict], backend: str, ann_min_rows: int, components: str = "", compiled: str = ""
) -> str:
    """Everything a snapshot's files depend on; equal keys give byte-identical snapshots.

    ``keys``: each source's tables key; ``rows``: the sources' rows; ``components``: the component registry's
    digest (it renames the stored version targets); ``compiled``: the compile checks' digest (flows.compile_step)."""
    payload = {
        "schema": SCHEMA_VERSION,
        "index_format": INDEX_FORMAT,
        "sources": sorted(keys.items()),
        "embedder": embedder_identity(backend),
        "ann_min_rows": ann_min_rows,
        "copies": COPY_DETECTION,
        **({"components": components} if components else {}),
        **({"compiled": compiled} if compiled else {}),
        "rows": sorted(
            (r["source"], r["status"], r["commit"] or "", r["config_sha256"], r["error"] or "") for r in rows
        ),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:24]
