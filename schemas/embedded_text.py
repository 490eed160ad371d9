"""The text the embedding model sees for a passage: its text with its place in the document.

A contract both sides share: ingest computes a chunk's ``content_sha256`` over this text (the embedding cache's
key), and the build, the embedding worker and its cluster shards rebuild it from the chunk columns to embed it, so
the same passage gives the same text, hash and vector wherever it is embedded.
"""

from __future__ import annotations

import pyarrow as pa


def embed_text(heading_path: list[str], symbol_path: str | None, path: str, text: str) -> str:
    """What the model sees: the passage with its place in the document."""
    if symbol_path:
        return f"{path} :: {symbol_path}\n{text}"
    if heading_path:
        return " > ".join(heading_path) + "\n" + text
    return text


def embedding_input(chunks: pa.Table) -> list[str]:
    """The text the model sees (``embed_text``) of every row of a chunks table, in row order."""
    return [
        embed_text(hp or [], sp, path, text)
        for hp, sp, path, text in zip(
            chunks.column("heading_path").to_pylist(),
            chunks.column("symbol_path").to_pylist(),
            chunks.column("path").to_pylist(),
            chunks.column("text").to_pylist(),
            strict=True,
        )
    ]
