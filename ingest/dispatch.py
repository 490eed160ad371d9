"""Pick the extractor for a path (txtai-style factory keyed by file kind)."""

from __future__ import annotations

from collections.abc import Callable

from trustindex.extractors.base import Extraction, FileContext
from trustindex.extractors.static_sites import VITEPRESS_CONFIG_RE

CONFIG_FILES = (
    "package.json",
    "Cargo.toml",
    "versions.json",
    "docusaurus.config.js",
    "docusaurus.config.ts",
    "typedoc.json",
    "mkdocs.yml",
    "mkdocs.yaml",
)


RESTRUCTUREDTEXT = "restructuredtext"  # also a Sphinx project's page in a suffix of its own (extractors/sphinx_conf.py)


def kind_of(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    if name in CONFIG_FILES or name.endswith("_versions.json") or VITEPRESS_CONFIG_RE.match(path):
        return "config"
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return {
        "md": "markdown",
        "mdx": "markdown",
        "markdown": "markdown",
        "compact": "compact",
        "ts": "typescript",
        "tsx": "typescript",
        "mts": "typescript",
        "cts": "typescript",
        "rs": "rust",
        "rst": RESTRUCTUREDTEXT,
        "rest": RESTRUCTUREDTEXT,
    }.get(ext, "text")


def extractor_for(kind: str) -> Callable[[bytes, FileContext], Extraction]:
    if kind == "markdown":
        from trustindex.extractors.markdown import extract_markdown

        return extract_markdown
    if kind == "compact":
        from trustindex.extractors.code_compact import extract_compact

        return extract_compact
    if kind == "typescript":
        from trustindex.extractors.code_typescript import extract_typescript

        return extract_typescript
    if kind == "rust":
        from trustindex.extractors.code_rust import extract_rust

        return extract_rust
    if kind == RESTRUCTUREDTEXT:
        from trustindex.extractors.restructuredtext import extract_restructuredtext

        return extract_restructuredtext
    from trustindex.extractors.code_text import extract_text

    return extract_text
