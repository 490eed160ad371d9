"""Shared helpers of the code chunkers (Compact, TypeScript, Rust) and the text fallback.

Two halves.  Here: ``extract_code``, the decode -> parse -> fall back -> assemble pipeline every
code chunker runs (a language module supplies only its grammar and its tree-to-units walk),
decoding source bytes into lines, parsing with tree-sitter within a CPU budget, reading nodes
(text, 1-based lines, error locations) and turning a sibling list into ``Unit``s with their
leading comments.  In
:mod:`extractors.code_assembly`: the ``Unit`` type and the engine that turns
units into ``Chunk``s, with the chunking rules every language obeys (its
docstring lists them).  Every name of both halves is importable from here.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from tree_sitter import Language, Parser

from trustindex.extractors.base import Extraction, ExtractionError, FileContext

# The assembly half, re-exported: language modules and tests import these from here.
from trustindex.extractors.code_assembly import (  # noqa: F401
    CHARS_PER_TOKEN_CAP,
    MAX_CONTAINER_DEPTH,
    Unit,
    assemble,
    join_names,
    join_path,
    text_windows,
)

# CPU budget (this thread's CPU time, so a loaded machine or busy sibling threads do not trip it)
# for one tree-sitter parse: PARSE_BUDGET_S plus PARSE_BUDGET_S_PER_MB a MB of source.
# Error recovery on badly mismatched input (50,000 TypeScript functions fed to the Rust grammar:
# ~5 s for 1 MB) is slow; past the budget the file is line-windowed instead, with a warning.
# Valid code parses at several MB/s here, so only pathological input gets near it.
PARSE_BUDGET_S = 1.0
PARSE_BUDGET_S_PER_MB = 1.0


# A language's walk from the parsed source and the tree's root node to the file's top-level units.
UnitsOf = Callable[[bytes, object], list[Unit]]


def extract_code(
    data: bytes,
    ctx: FileContext,
    kind: str,
    language: Language,
    units_of: UnitsOf,
    gap_path: str | None = None,
    parse_view: Callable[[bytes], bytes] | None = None,
) -> Extraction:
    """Chunks of one code file: decode, parse within the budget, walk the tree into units and
    assemble them.  ``kind`` names both the extraction and the grammar (``tree-sitter-<kind>``)
    in warnings.  A parse over its budget leaves no units, so the whole file becomes line windows
    under ``gap_path``; a tree with errors still yields the units it recognised.  ``parse_view``: what
    the grammar reads instead of the source, byte for byte as long (syntax the grammar lacks blanked
    out); the chunks' text is always the file's own lines."""
    lines = decode_lines(data, ctx.path)
    result = Extraction(kind=kind)
    src = strip_bom(data)
    if parse_view is not None:
        view = parse_view(src)
        if len(view) != len(src):
            raise ValueError(f"{ctx.path}: a parse view must keep every byte's place")
        src = view
    tree = parse(Parser(language), src)
    units: list[Unit] = []
    if tree is None:
        result.warnings.append(
            f"{ctx.path}: tree-sitter-{kind} parse exceeded its time budget; file split into line windows"
        )
    else:
        warning = parse_warning(kind, tree.root_node)
        if warning:
            result.warnings.append(f"{ctx.path}: {warning}")
        units = units_of(src, tree.root_node)
    result.chunks, result.deprecations = assemble(lines, units, ctx, gap_path=gap_path)
    return result


def decode_lines(data: bytes, path: str) -> list[str]:
    """UTF-8 text split into lines; NUL bytes and invalid UTF-8 raise ``ExtractionError``."""
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ExtractionError(f"{path}: NUL byte at byte offset {nul}; not a text file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ExtractionError(f"{path}: invalid UTF-8 at byte offset {exc.start}: {exc.reason}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def strip_bom(data: bytes) -> bytes:
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data


def parse(parser, data: bytes):
    """Parse within a CPU budget; returns the tree, or ``None`` when the budget ran out."""
    view = memoryview(data)
    deadline = time.thread_time() + PARSE_BUDGET_S + PARSE_BUDGET_S_PER_MB * len(data) / 1e6

    def read(offset: int, _point) -> bytes:
        return bytes(view[offset : offset + 65536])

    def progress(_offset: int, _has_error: bool) -> bool:
        return time.thread_time() > deadline  # True cancels the parse

    try:
        return parser.parse(read, progress_callback=progress)
    except ValueError:  # "Parsing failed": the progress callback cancelled it
        return None


def node_text(src: bytes, node) -> str:
    """A node's source text.  Slice the bytes ourselves: a tree parsed through a read callback
    (as ``parse`` does) holds no source, and ``node.text`` then costs ~0.2 ms a call."""
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def first_line(node) -> int:
    return node.start_point[0] + 1


def last_line(node) -> int:
    """1-based last line; a node ending at column 0 (Rust ``//`` comments keep their newline) ends
    on the line before."""
    row, col = node.end_point
    if col == 0 and row > node.start_point[0]:
        return row
    return row + 1


def error_lines(root, limit: int = 10, max_visits: int = 200_000) -> list[int]:
    """Lines where parsing went wrong: MISSING nodes, and for each ERROR node the first child that
    is not a clean named node (an ERROR often wraps good items before the bad spot; the grammar
    may even make the whole file one ERROR).  Iterative, so deep trees are safe."""
    found: list[int] = []
    stack = [root]
    visits = 0
    while stack and len(found) < limit and visits < max_visits:
        node = stack.pop()
        visits += 1
        if node.is_missing:
            found.append(first_line(node))
        elif node.is_error:
            bad = next((c for c in node.children if not c.is_named or c.has_error), None)
            if bad is None:
                found.append(first_line(node))
            elif bad.has_error:
                stack.append(bad)
            else:
                found.append(first_line(bad))
        elif node.has_error:
            stack.extend(reversed(node.children))
    return sorted(set(found))


def parse_warning(lang: str, root) -> str | None:
    if not root.has_error:
        return None
    lines = error_lines(root)
    where = ", ".join(str(n) for n in lines) or "unknown"
    return (
        f"tree-sitter-{lang} could not parse cleanly (errors at line {where}); "
        "code outside recognised declarations was split into line windows"
    )


def units_from_siblings(
    nodes: list,
    classify: Callable,
    attachable: Callable[[object], bool],
    sticky: Callable[[object], bool] = lambda n: False,
) -> list[Unit]:
    """Units for a sibling list, each extended upwards over the comments/attributes before it.

    ``classify(node, leading_nodes)`` returns a Unit or None (the node is gap code).  A leading
    node attaches when it ends on the line right above (no blank line between) or is ``sticky``
    (Rust attributes), and does not start on the line where the previous non-leading node ends
    (that is a trailing comment of the previous node).
    """
    units: list[Unit] = []
    leading = [attachable(n) for n in nodes]
    prev_end = 0
    for idx, node in enumerate(nodes):
        if leading[idx]:
            continue
        lead: list = []
        top = node.start_point[0] + 1
        j = idx - 1
        while j >= 0 and leading[j]:
            cand = nodes[j]
            if first_line(cand) <= prev_end or (last_line(cand) < top - 1 and not sticky(cand)):
                break
            lead.append(cand)
            top = first_line(cand)
            j -= 1
        lead.reverse()
        unit = classify(node, lead)
        if unit is not None:
            unit.start = min(unit.start, top)
            units.append(unit)
        prev_end = last_line(node)
    return units
