"""Compatibility tables (a support matrix) → chunk-scoped targets per row, and per tab the network.

The Midnight docs' ``relnotes/support-matrix.mdx`` holds one Markdown table per network, each in a Docusaurus
tab (``<TabItem value="preview" label="Preview" default>``), with rows like::

    | Functional area | Component                             | Version | Notes |
    |                 | Compact toolchain (`compact compile`) | 0.31.1  | Contract compiler for Midnight |

A table is a compatibility table when its header names a component column (``Component``, ``Package``,
``Library``, ``Tool``, ``Name``) and a ``Version`` column.  Each row whose version parses targets the chunk that
holds the row: the component as the row names it (markup and a trailing parenthesis dropped: ``Compact
toolchain``; the cell as written stays in the detail; a family glob such as ``@midnight-ntwrk/midnight-js-*`` names
the component it extends), at that version.  Every chunk of a tab that holds such
a row also targets the tab's network (component ``network``, the tab's ``value``, lower-cased).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from trustindex.extractors.base import Chunk, VersionTarget
from trustindex.extractors.docs_fences import fences
from trustindex.schemas.components import NETWORK, family_stem
from trustindex.schemas.docs_versions import label_json
from trustindex.schemas.links import link_words
from trustindex.schemas.version_map import COMPAT_MATRIX
from trustindex.schemas.version_parsers import parse_npm
from trustindex.schemas.versions import VersionSyntaxError

ORIGIN = COMPAT_MATRIX
_NAME_HEADER = re.compile(r"^(component|package|library|tool|name|software)s?$", re.IGNORECASE)
_VERSION_HEADER = re.compile(r"^(latest\s+)?(tested\s+)?versions?$", re.IGNORECASE)
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_TAB_OPEN = re.compile(r"<TabItem\b(?P<attrs>[^>]*)>")
_TAB_CLOSE = re.compile(r"</TabItem\s*>")
_ATTR = re.compile(r"""(\w+)=(?:"([^"]*)"|'([^']*)')""")
_TRAILING_PAREN = re.compile(r"\s*\([^()]*\)\s*$")
_GLOB = re.compile(r"@?[\w.-]+(?:/[\w.-]+)?-\*")  # @scope/name-*, name-*


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") else body
    return [c.strip() for c in body.split("|")]


def component_name(cell: str) -> str:
    """``Compact toolchain (`compact compile`)`` → ``Compact toolchain``; ``[Midnight.js](…)`` → ``Midnight.js``;
    a family glob (```@midnight-ntwrk/midnight-js-*```) → the name it extends (``@midnight-ntwrk/midnight-js``):
    a family is never a component's name, and its ``*`` is no emphasis."""
    glob = _GLOB.search(cell)
    if glob:
        return family_stem(glob[0])
    text = link_words(cell)
    text = re.sub(r"[*_]{1,2}", "", text)
    text = _TRAILING_PAREN.sub("", text).replace("`", "").strip()
    return text


def _chunk_of(line: int, chunks: Sequence[Chunk]) -> int | None:
    for c in chunks:
        if c.start_line <= line <= c.end_line:
            return c.ordinal
    return None


def matrix_targets(text: str, chunks: Sequence[Chunk] | None = None) -> list[VersionTarget]:
    """Targets of every compatibility-table row in a Markdown/MDX text (the whole file; lines are 1-based)."""
    chunks = chunks or []
    code = {n for f in fences(text) for n in range(f.first_line, f.last_line + 1)}
    lines = text.splitlines()
    out: list[VersionTarget] = []
    tab: dict | None = None
    header: tuple[int, int] | None = None  # (name column, version column) of the table being read
    for n, line in enumerate(lines, start=1):
        if n in code:
            continue
        opened = _TAB_OPEN.search(line)
        if opened:
            attrs = {m[1]: m[2] if m[2] is not None else m[3] for m in _ATTR.finditer(opened["attrs"])}
            value = attrs.get("value") or attrs.get("label")
            tab = {"value": value, "label": attrs.get("label", value), "first": n, "rows": 0} if value else None
        if _TAB_CLOSE.search(line):
            if tab is not None and tab["rows"]:
                out.extend(_network_targets(tab, n, chunks))
            tab = None
        if not line.lstrip().startswith("|"):
            header = None
            continue
        if n < len(lines) and _SEPARATOR.match(lines[n]) and not _SEPARATOR.match(line):
            names = _cells(line)
            name_col = next((i for i, c in enumerate(names) if _NAME_HEADER.match(component_name(c))), None)
            ver_col = next((i for i, c in enumerate(names) if _VERSION_HEADER.match(component_name(c))), None)
            header = (name_col, ver_col) if name_col is not None and ver_col is not None else None
            continue
        if header is None or _SEPARATOR.match(line):
            continue
        cells = _cells(line)
        if max(header) >= len(cells):
            continue
        written, version = cells[header[0]], cells[header[1]].strip("` ").removeprefix("v")
        name = component_name(written)
        if not name or not version:
            continue
        try:
            intervals = parse_npm(version).to_json()
        except VersionSyntaxError:
            continue  # "TBD", "n/a", a link: not a version
        where = f" (tab {tab['value']!r})" if tab else ""
        out.append(
            VersionTarget(
                component=name,
                constraint=version,
                origin=ORIGIN,
                intervals=intervals,
                chunk_ordinal=_chunk_of(n, chunks),
                detail=f"compatibility table row at line {n}{where}: {written!r} {version}",
            )
        )
        if tab is not None:
            tab["rows"] += 1
    return out


def _network_targets(tab: dict, last: int, chunks: Sequence[Chunk]) -> list[VersionTarget]:
    value = tab["value"].casefold()
    hit = [c.ordinal for c in chunks if c.start_line <= last and c.end_line >= tab["first"]] or [None]
    detail = f"compatibility tab {tab['label']!r} (value {tab['value']!r}), lines {tab['first']}-{last}"
    return [
        VersionTarget(NETWORK, value, ORIGIN, label_json(value, [tab["label"]]), "parsed", ordinal, detail)
        for ordinal in hit
    ]
