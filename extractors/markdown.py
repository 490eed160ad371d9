"""Markdown/MDX extraction: front matter, heading-scoped chunks, deprecation markers.

Structure comes from tree-sitter-markdown's block grammar (``section``,
``atx_heading``, ``setext_heading`` and the block nodes under them; setext
headings do not open a ``section`` node there, so segments are rebuilt from the
headings themselves).  The chunking rules, in order:

1. A *segment* is a heading and the blocks under it up to the next heading of
   any level (content before the first heading is a segment of its own).
2. Heading path: the document title (front matter ``title``, else the first H1),
   then the open headings above and including the segment's own heading; a
   heading equal to the title is not repeated.  Content above the first heading
   is named by the title, else by the first heading.
3-4. Tiny segments merge with their next sibling or child; a segment over
   ``ctx.target_tokens`` is packed from its blocks and split further where it
   must; every chunk fits ``ctx.max_tokens`` (the sizing rules, in
   :mod:`extractors.markdown_sizing`).
5. MDX ESM (``import ... from '...'``, ``export const ...``) is dropped from chunk
   text; a statement runs to the next blank line at bracket depth 0, as
   micromark-extension-mdxjs-esm reads it.  Line numbers stay those of the file,
   so a chunk's text is its lines as written, less any ESM lines among them.

Pathological input: lines are cut to ``PARSE_LINE_CHARS`` in the copy handed to
tree-sitter (block structure depends on line starts; parse time on bytes); input
whose parse copy exceeds ``MAX_PARSE_BYTES`` is chunked as plain line windows; and
token counting stops at ``MAX_COUNTED_CHARS``/``MAX_COUNT_CALLS`` (in
:mod:`extractors.markdown_sizing`) — each with a warning.  Nothing here recurses
on input depth.
"""

from __future__ import annotations

import codecs
import re

import tree_sitter_markdown
from tree_sitter import Language, Parser

from trustindex.extractors.base import Extraction, ExtractionError, FileContext
from trustindex.extractors.deprecation import markdown_deprecations
from trustindex.extractors.frontmatter import split_front_matter
from trustindex.extractors.markdown_lines import ATX_CLOSING, ATX_OPENING, HEADING_ID, HTML_TAG

# The sizing limits are re-exported so callers keep reading them from here.
from trustindex.extractors.markdown_sizing import (  # noqa: F401
    MAX_CHUNK_CHARS_PER_TOKEN,
    MAX_COUNT_CALLS,
    MAX_COUNTED_CHARS,
    ChunkSizer,
    Unit,
)
from trustindex.extractors.mdx_includes import rendered_includes
from trustindex.schemas.links import link_words

PARSE_LINE_CHARS = 1000
MAX_PARSE_BYTES = 1024 * 1024  # ~0.5 s of tree-sitter-markdown here
_ESM_MAX_ROWS = 400

_LANGUAGE = Language(tree_sitter_markdown.language())
# The id inside a heading's explicit id (markdown_lines.HEADING_ID): the attribute list's `#id`, or the MDX
# comment's words (react.dev's `{/*usage*/}`)
_ANCHOR_ID_RE = re.compile(r"(?:^|\s|\{:?)#([^\s}#]+)|^\{/\*\s*([^*\s]+)\s*\*/\}")
_IMPORT_RE = re.compile(r"^import(?:\s+(?:type\s+)?[\w$*{]|\s*['\"])")
_IMPORT_OK_RE = re.compile(r"\bfrom\s*['\"][^'\"\n]+['\"]|^import\s*['\"][^'\"\n]+['\"]")
_EXPORT_RE = re.compile(r"^export\s+(?:default\b|const\b|let\b|var\b|function\b|async\s+function\b|class\b|\{|\*)")
_ADMON_OPEN_RE = re.compile(r"^\s{0,3}:{3,}\s*[\w\[]")
_ADMON_CLOSE_RE = re.compile(r"^\s{0,3}:{3,}\s*$")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")  # CommonMark: any ASCII punctuation may be backslash-escaped
_HELD = "\uf8ff"  # a private-use character standing for an escaped one while markup is removed
_CODE_TYPES = {"fenced_code_block", "indented_code_block"}


def decode_markdown(data: bytes) -> str:
    """Strict UTF-8 (a leading BOM is dropped); NUL bytes mean "not text"."""
    base = 0
    if data.startswith(codecs.BOM_UTF8):
        data, base = data[3:], 3
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ExtractionError(f"NUL byte at byte offset {nul + base}: not a text file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ExtractionError(f"invalid UTF-8 at byte offset {exc.start + base}: {exc.reason}") from None


def extract_markdown(data: bytes, ctx: FileContext) -> Extraction:
    """Chunk a Markdown/MDX file and read its deprecation markers (``extractors.deprecation``;
    path rules are the caller's, via ``path_deprecations``).  Raises ExtractionError
    only for bytes that are not UTF-8 text."""
    text = decode_markdown(data)
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
    fm, body_start, warnings = split_front_matter(text)
    ex = Extraction(kind="markdown", front_matter=fm, warnings=list(warnings))
    HeadingChunker(lines, body_start - 1, fm, ctx, ex).run()
    try:  # chunk-scoped markers need the chunks; document-scoped ones the front matter
        ex.deprecations = markdown_deprecations(fm, text, ex.chunks)
    except Exception as exc:  # evidence must never cost the file its chunks
        ex.warnings.append(f"deprecation markers not read: {type(exc).__name__}: {exc}")
    ex.includes = rendered_includes(text, ctx.path)
    return ex


class HeadingChunker(ChunkSizer):
    """The structural pass: tree-sitter blocks, MDX ESM, admonitions, heading segments."""

    def __init__(self, lines, body_row, fm, ctx: FileContext, ex: Extraction):
        super().__init__(lines, body_row, ctx, ex)
        self.fm = fm

    # -- structure ----------------------------------------------------------
    def _parse(self) -> list[Unit] | None:
        """Top-level blocks (children of sections) as units, or None to fall back."""
        copy = [
            "" if r in self.excluded else ln[:PARSE_LINE_CHARS].replace("\r", " ") for r, ln in enumerate(self.lines)
        ]
        src = "\n".join(copy).encode("utf-8", "surrogatepass")
        if len(src) > MAX_PARSE_BYTES:
            self.ex.warnings.append(
                f"markdown structure not parsed: {len(src)} bytes after cutting lines to "
                f"{PARSE_LINE_CHARS} characters exceeds {MAX_PARSE_BYTES}; chunked as line windows"
            )
            return None
        try:
            tree = Parser(_LANGUAGE).parse(src)
        except Exception as exc:  # a parser failure must not lose the file
            self.ex.warnings.append(f"tree-sitter-markdown failed ({exc}); chunked as line windows")
            return None
        if tree is None:
            self.ex.warnings.append("tree-sitter-markdown returned no tree; chunked as line windows")
            return None
        units: list[Unit] = []
        stack = [tree.root_node]  # sections nest at most ~7 deep; no recursion on input
        while stack:
            node = stack.pop()
            for child in node.children:
                if child.type == "section":
                    stack.append(child)
                elif child.type != "minus_metadata":
                    units.append(self._unit(child))
        units.sort(key=lambda u: u.start)
        return units

    def _unit(self, node) -> Unit:
        s = node.start_point.row
        e = node.end_point.row - (1 if node.end_point.column == 0 else 0)
        e = max(s, e)
        if node.type == "atx_heading":
            level = next((int(c.type[5]) for c in node.children if c.type.startswith("atx_h")), 1)
            title = ATX_CLOSING.sub("", ATX_OPENING.sub("", self.lines[s], count=1))
            return Unit(s, s, "heading", level=level, title=_clean_title(title[:2000]), anchor=heading_id(title))
        if node.type == "setext_heading":
            level = 1 if any(c.type == "setext_h1_underline" for c in node.children) else 2
            title = " ".join(self.lines[r].strip()[:2000] for r in range(s, e))
            return Unit(s, e, "heading", level=level, title=_clean_title(title), anchor=heading_id(title))
        if node.type in _CODE_TYPES:
            return Unit(s, e, "fence")
        unit = Unit(s, e)
        if node.type == "list":  # list items are the next split boundary
            unit.children = [Unit(c.start_point.row, c.start_point.row) for c in node.children if c.type == "list_item"]
        return unit

    def _mark_esm(self, code_rows: set[int]) -> bool:
        """Exclude MDX import/export statements; True when any were found."""
        found, r, n = False, self.body_row, len(self.lines)
        prev_blank = True
        while r < n:
            ln = self.lines[r]
            if prev_blank and r not in code_rows and (_IMPORT_RE.match(ln) or _EXPORT_RE.match(ln)):
                end, depth = r, 0
                while end < n and end - r < _ESM_MAX_ROWS:
                    if not self.lines[end].strip() and depth <= 0:
                        break
                    depth += _bracket_delta(self.lines[end])
                    end += 1
                if depth > 0 or end - r >= _ESM_MAX_ROWS:  # unbalanced: stop at the blank line
                    end = r
                    while end < n and self.lines[end].strip():
                        end += 1
                stmt = "\n".join(self.lines[r:end])
                if ln.startswith("export") or _IMPORT_OK_RE.search(stmt):
                    self.excluded.update(range(r, end))
                    found, r, prev_blank = True, end, True
                    continue
            prev_blank = not ln.strip()
            r += 1
        return found

    def _blocks(self) -> list[Unit] | None:
        units = self._parse()
        if units is None:
            return None
        code = {r for u in units if u.kind == "fence" for r in range(u.start, u.end + 1)}
        if self._mark_esm(code):
            units = self._parse()  # ESM rows are blank now, so they cannot merge into blocks
            if units is None:
                return None
        # Partition the body at block starts so every non-blank row lands in a unit.
        starts = sorted({u.start for u in units if u.start >= self.body_row})
        by_start = {}
        for u in units:
            by_start.setdefault(u.start, u)
        if starts and starts[0] > self.body_row:
            starts.insert(0, self.body_row)
        out = []
        for i, s in enumerate(starts):
            e = (starts[i + 1] - 1) if i + 1 < len(starts) else len(self.lines) - 1
            u = by_start.get(s) or Unit(s, e)
            if u.kind == "heading" and u.end < e:
                # Rows after a heading that no block claimed still need a home.
                if any(not self._blank(r) for r in range(u.end + 1, e + 1)):
                    out.append(u)
                    s, u = u.end + 1, Unit(u.end + 1, e)
                else:
                    e = u.end
            while s <= e and self._blank(s):
                s += 1
            while e >= s and self._blank(e):
                e -= 1
            if s > e:
                continue
            u.start, u.end = s, e
            u.children = [c for c in u.children if s <= c.start <= e]
            out.append(u)
        return self._group_admonitions(out, code)

    def _group_admonitions(self, units: list[Unit], code: set[int]) -> list[Unit]:
        """Fold the blocks of a top-level ``:::`` admonition into one group unit."""
        spans, depth, open_row = [], 0, 0
        for r in range(self.body_row, len(self.lines)):
            if r in code or r in self.excluded:
                continue
            ln = self.lines[r]
            if _ADMON_CLOSE_RE.match(ln) and depth > 0:
                depth -= 1
                if depth == 0:
                    spans.append((open_row, r))
            elif _ADMON_OPEN_RE.match(ln):
                open_row = r if depth == 0 else open_row
                depth += 1
        out: list[Unit] = []
        si = 0
        for u in units:
            while si < len(spans) and spans[si][1] < u.start:
                si += 1
            if u.kind != "heading" and si < len(spans) and spans[si][0] <= u.start:
                if out and out[-1].kind == "group" and out[-1].level == si:
                    out[-1].children.append(u)
                    out[-1].end = u.end
                else:  # level holds the span index for groups
                    out.append(Unit(u.start, u.end, "group", children=[u], level=si))
            else:
                out.append(u)
        return [u.children[0] if u.kind == "group" and len(u.children) == 1 else u for u in out]

    # -- segments (rules 1-2), then sizing -----------------------------------
    def run(self) -> None:
        self._run()
        if self.exhausted:
            last = self.ex.chunks[-1].end_line if self.ex.chunks else self.body_row
            self.ex.warnings.append(
                f"chunking stopped after {len(self.ex.chunks)} chunks (token counting limit: "
                f"{MAX_COUNTED_CHARS} characters, {MAX_COUNT_CALLS} calls); text after line {last} "
                "is not indexed"
            )

    def _run(self) -> None:
        units = self._blocks()
        title = self.fm.get("title")
        title = str(title).strip() if isinstance(title, (str, int, float)) and str(title).strip() else ""
        if units is None:  # line windows over the whole body
            pieces = self._pack_lines(self.body_row, len(self.lines) - 1, self.ctx.target_tokens)
            self._emit(pieces, [title] if title else [])
            return
        heads = [u for u in units if u.kind == "heading"]
        if not title:
            title = next((h.title for h in heads if h.level == 1), "")
        # Content above the first heading is named by the title, else by that heading.
        lead = [title or heads[0].title] if (title or heads) else []
        # Segments: (level, path, units); level 0 = before the first heading.
        segs: list[tuple[int, list[str], list[Unit]]] = []
        stack: list[Unit] = []
        for u in units:
            if u.kind == "heading":
                while stack and stack[-1].level >= u.level:
                    stack.pop()
                stack.append(u)
                path = ([title] if title else []) + [h.title for h in stack]
                if len(path) > 1 and path[1] == path[0]:
                    del path[1]
                if u.anchor:
                    self.heading_ids.setdefault(tuple(path), u.anchor)
                segs.append((u.level, path, [u]))
            elif segs:
                segs[-1][2].append(u)
            else:
                segs.append((0, lead, [u]))
        self._chunk_segments(segs)


def heading_id(title: str) -> str:
    """The id a heading sets itself (its trailing ``{#id}``, ``{ #id .class }`` or ``{/*id*/}``), "" when none: the
    site links the section by it, not by the slug of its text (schemas/page_url.py)."""
    m = HEADING_ID.search(title[:2000])
    if not m:
        return ""
    inner = _ANCHOR_ID_RE.search(m.group(0).strip())
    return (inner.group(1) or inner.group(2) or "") if inner else ""


def _clean_title(title: str) -> str:
    """Heading text for a path: anchors, link targets, tags and code marks removed; a backslash-escaped character
    is the character itself, never markup (``Map\\<key_type, value_type>`` is a type, not a tag: it read "Map\\")."""
    title = HEADING_ID.sub("", title)
    escaped: list[str] = []
    title = _ESCAPED.sub(lambda m: escaped.append(m[1]) or _HELD, title)  # held out of the markup rules below
    title = link_words(title)
    title = HTML_TAG.sub("", title).replace("**", "").replace("`", "")
    kept = iter(escaped)
    title = re.sub(_HELD, lambda _m: next(kept), title)
    return " ".join(title.split())[:200]


def _bracket_delta(line: str) -> int:
    return sum(line.count(c) for c in "({[") - sum(line.count(c) for c in ")}]")
