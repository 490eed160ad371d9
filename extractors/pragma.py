"""Compact ``pragma language_version …;`` / ``pragma compiler_version …;`` → version targets.

tree-sitter-compact 0.3.0 finds the ``pragma`` node reliably, but flattens the
version expression (``(and)``/``(or)`` between terms, no parentheses) and marks
``!>= 0.14.0`` as an ERROR although real contracts use it (DESIGN.md, "Known
traps").  So the node only locates the pragma: its source text goes to
:func:`schemas.version_parsers.parse_compact`.  Where the tree has syntax errors a
pragma can be swallowed by an ERROR node; a regex pass over the comment-free
source then finds the rest, and a warning says so.  A constraint that does not
parse is kept as written with status ``unparsed``: never guessed.
"""

from __future__ import annotations

import re

import tree_sitter_compact
from tree_sitter import Language, Parser

from trustindex.extractors.base import VersionTarget
from trustindex.schemas.version_parsers import parse_compact
from trustindex.schemas.versions import VersionSyntaxError

COMPONENTS = {"language_version": "compact-language", "compiler_version": "compact-compiler"}
_LANGUAGE = Language(tree_sitter_compact.language())
# A pragma expression is a handful of tokens; the cap keeps a missing ';' from
# swallowing the rest of a file in the regex fallback.
_PRAGMA_RE = re.compile(rb"\bpragma\s+([A-Za-z_]\w*)\s+([^;{}]{0,200}?)\s*;")


def _blank_comments(src: bytes) -> bytes:
    """``src`` with comments replaced by spaces (offsets kept), string literals respected."""
    out, i, n = bytearray(src), 0, len(src)
    while i < n:
        c = src[i : i + 1]
        if c in (b'"', b"'"):
            j = i + 1
            while j < n and src[j : j + 1] != c and src[j : j + 1] != b"\n":
                j += 2 if src[j : j + 1] == b"\\" else 1
            i = j + 1
        elif src.startswith(b"//", i):
            j = src.find(b"\n", i)
            j = n if j < 0 else j
            out[i:j] = b" " * (j - i)
            i = j
        elif src.startswith(b"/*", i):
            j = src.find(b"*/", i + 2)
            j = n if j < 0 else j + 2
            out[i:j] = bytes(b if b == 0x0A else 0x20 for b in src[i:j])
            i = j
        else:
            i += 1
    return bytes(out)


def _target(pragma_id: str, expression: str, line: int, chunk_ordinal: int | None, how: str) -> VersionTarget:
    component = COMPONENTS[pragma_id]
    detail = f"line {line}{how}"
    try:
        intervals, status = parse_compact(expression).to_json(), "parsed"
    except VersionSyntaxError as exc:
        intervals, status, detail = "", "unparsed", f"{detail}: {exc.reason}"
    return VersionTarget(
        component=component,
        constraint=expression,
        origin="pragma",
        intervals=intervals,
        status=status,
        chunk_ordinal=chunk_ordinal,
        detail=detail,
    )


def _pragma_nodes(root):
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "pragma":
            yield node
            continue
        stack.extend(reversed(node.children))


def extract_pragmas(source_text: str, chunk_ordinal: int | None = None) -> tuple[list[VersionTarget], list[str]]:
    """Every language/compiler pragma in a Compact source, in source order, with warnings.

    ``chunk_ordinal`` scopes the targets to one chunk (a ``compact`` code block
    inside a Markdown page); a ``.compact`` file leaves it None (the pragma
    governs the whole file).  Line numbers in ``detail`` are 1-based, relative
    to ``source_text``.
    """
    src = source_text.encode("utf-8", "replace")
    tree = Parser(_LANGUAGE).parse(src)
    found: list[tuple[int, VersionTarget]] = []
    warnings: list[str] = []
    seen_starts = set()
    for node in _pragma_nodes(tree.root_node):
        id_node = node.child_by_field_name("id")
        if id_node is None:
            continue
        seen_starts.add(node.start_byte)
        pragma_id = id_node.text.decode("utf-8", "replace")
        line = node.start_point[0] + 1
        if pragma_id not in COMPONENTS:
            warnings.append(f"line {line}: unknown pragma {pragma_id!r} ignored")
            continue
        text = src[id_node.end_byte : node.end_byte].decode("utf-8", "replace")
        expression = text.split(";", 1)[0].strip()  # an error-recovered node may run past its ';'
        how = "" if not node.has_error else " (pragma has syntax errors per tree-sitter; parsed from its text)"
        found.append((node.start_byte, _target(pragma_id, expression, line, chunk_ordinal, how)))
    if tree.root_node.has_error:
        fallback_lines = []
        for m in _PRAGMA_RE.finditer(_blank_comments(src)):
            if m.start() in seen_starts or m[1].decode() not in COMPONENTS:
                continue
            line = src.count(b"\n", 0, m.start()) + 1
            expression = m[2].decode("utf-8", "replace").strip()
            found.append((m.start(), _target(m[1].decode(), expression, line, chunk_ordinal, " (regex fallback)")))
            fallback_lines.append(line)
        if fallback_lines:
            warnings.append(
                "tree-sitter-compact reported syntax errors; pragma(s) at line(s) "
                f"{', '.join(map(str, fallback_lines))} found by the regex fallback"
            )
    found.sort(key=lambda pair: pair[0])
    return [t for _, t in found], warnings
