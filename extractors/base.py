"""Shapes every extractor returns: pure data, no I/O.

An extractor is a pure function ``(data: bytes, ctx: FileContext) -> Extraction``.
The pipeline (flows/) reads the bytes from git and hands them in; the warehouse
turns an ``Extraction`` into table rows.  Chunk-scoped evidence names its chunk
by ``ordinal``; document-scoped evidence uses ``chunk_ordinal=None``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


def approx_token_count(text: str) -> int:
    """Fallback token counter (WordPiece yields ~1.3 tokens a word on docs prose)."""
    return int(len(text.split()) * 1.3) + 1


@dataclass(frozen=True)
class FileContext:
    source: str
    path: str
    commit: str = ""
    # Counts model tokens; the pipeline passes the embedding model's tokenizer.
    count_tokens: Callable[[str], int] = approx_token_count
    # The model's window; chunks aim below it (the model truncates past 256).
    max_tokens: int = 256
    target_tokens: int = 200


@dataclass
class Chunk:
    ordinal: int
    text: str
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    heading_path: list[str] = field(default_factory=list)
    symbol_path: str | None = None
    token_count: int = 0
    # the id its own section's heading sets itself (`{#id}`), "" when none: the site links the section by it
    anchor: str = ""


@dataclass
class VersionTarget:
    component: str
    constraint: str  # as written
    origin: str  # extractors.version_stamps.PRECEDENCE names them all (front_matter, pragma, stamp, docs_fence, …)
    intervals: str = ""  # schemas.versions ConstraintSet JSON; "" when unparsed
    status: str = "parsed"  # parsed | unparsed
    chunk_ordinal: int | None = None
    detail: str = ""


@dataclass
class Deprecation:
    scope: str  # chunk | document
    reason: str
    marker: (
        str  # front_matter | admonition | section | jsdoc | rust_attribute | package_json | docs_version | path_rule
    )
    chunk_ordinal: int | None = None


@dataclass
class Extraction:
    kind: str  # markdown | compact | typescript | rust | text | manifest
    chunks: list[Chunk] = field(default_factory=list)
    front_matter: dict = field(default_factory=dict)
    version_targets: list[VersionTarget] = field(default_factory=list)
    deprecations: list[Deprecation] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # the Markdown files the page renders inside itself (MDX import + <Name />, extractors/mdx_includes.py)
    includes: list[str] = field(default_factory=list)


class ExtractionError(Exception):
    """A file could not be extracted at all; the message names the problem."""
