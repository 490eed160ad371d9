"""Markdown/MDX extraction: front matter plus heading-scoped chunks.

Structure comes from tree-sitter-markdown's block grammar (``section``,
``atx_heading``, ``setext_heading`` and the block nodes under them).  The
chunking rules, in order:

1. A *segment* is a heading and the blocks under it up to the next heading of
   any level (content before the first heading is a segment of its own).
2. Heading path: the document title (front matter ``title``, else the first H1),
   then the open headings above and including the segment's own heading; a
   heading equal to the title is not repeated.  Content above the first heading
   is named by the title, else by the first heading.
3. Tiny segments (at most one content line and under a quarter of
   ``ctx.target_tokens``) merge with the following segment when it is a sibling
   or a child and the merged text stays within the target.  A merged chunk
   keeps the path of its last member when that member is a descendant of the
   first, else the path of the first.
4. A segment over ``ctx.target_tokens`` is packed from its blocks (paragraph,
   list, fence, table, Docusaurus ``:::`` admonition kept together where it
   fits); a block still over the target splits by list items, then by lines,
   then a line by words; a code fence stays whole while it fits
   ``ctx.max_tokens``.  Every chunk is at most ``ctx.max_tokens`` tokens and
   ``MAX_CHUNK_CHARS`` characters (WordPiece maps a >100-character word to one
   ``[UNK]``, so a token bound alone would allow megabyte chunks).
5. MDX ESM (``import ... from '...'``, ``export const ...``) is dropped from chunk
   text; a statement runs to the next blank line at bracket depth 0, as
   micromark-extension-mdxjs-esm reads it.  Line numbers stay those of the file.

Pathological input: lines are cut to ``PARSE_LINE_CHARS`` in the copy handed to
tree-sitter (block structure depends on line starts; parse time on bytes), and
input whose parse copy exceeds ``MAX_PARSE_BYTES`` is chunked as plain line
windows with a warning.  Nothing here recurses on input depth.
"""
from __future__ import annotations

import bisect
import codecs
import re
from dataclasses import dataclass, field
from typing import Optional

import tree_sitter_markdown
from tree_sitter import Language, Parser

from extractors.base import Chunk, Extraction, ExtractionError, FileContext
from extractors.frontmatter import split_front_matter

PARSE_LINE_CHARS = 1000
MAX_PARSE_BYTES = 1024 * 1024  # ~0.5 s of tree-sitter-markdown here
MAX_CHUNK_CHARS_PER_TOKEN = 16  # MAX_CHUNK_CHARS = 16 * max_tokens (4096 for MiniLM)
_ESM_MAX_ROWS = 400
# Token counting dominates the cost (the MiniLM tokenizer: ~20 us a call plus
# ~0.5-1 us a character here); the largest real page (178 KB) counts 416 K characters
# in 815 calls.  Past these limits the rest of the file is dropped with a warning:
# a poisoned file must neither stall a run nor flood the index with junk chunks.
MAX_COUNTED_CHARS = 1_200_000
MAX_COUNT_CALLS = 50_000

_LANGUAGE = Language(tree_sitter_markdown.language())
_ATX_RE = re.compile(r"^\s{0,3}#{1,6}(?:[ \t]+|$)")
_ATX_CLOSE_RE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_ANCHOR_RE = re.compile(r"\s*\{#[^}]*\}\s*$")
_IMPORT_RE = re.compile(r"^import(?:\s+(?:type\s+)?[\w$*{]|\s*['\"])")
_IMPORT_OK_RE = re.compile(r"\bfrom\s*['\"][^'\"\n]+['\"]|^import\s*['\"][^'\"\n]+['\"]")
_EXPORT_RE = re.compile(
    r"^export\s+(?:default\b|const\b|let\b|var\b|function\b|async\s+function\b|class\b|\{|\*)"
)
_ADMON_OPEN_RE = re.compile(r"^\s{0,3}:{3,}\s*[\w\[]")
_ADMON_CLOSE_RE = re.compile(r"^\s{0,3}:{3,}\s*$")
_LINK_RE = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_TAG_RE = re.compile(r"</?[A-Za-z][^<>]*>")
_CODE_TYPES = {"fenced_code_block", "indented_code_block"}


@dataclass
class _Unit:
    """A contiguous row range that chunking treats as one piece where it fits."""

    start: int  # 0-based rows, inclusive
    end: int
    kind: str = "block"  # block | fence | heading | group
    children: list["_Unit"] = field(default_factory=list)
    level: int = 0  # heading level (headings only)
    title: str = ""


@dataclass
class _Piece:
    start: int
    end: int
    text: Optional[str] = None  # set when the piece is part of one line
    tokens: int = 0  # estimate, for joining neighbours
    chars: int = 0
    exact: bool = False  # tokens is the count of exactly this piece's text


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
        raise ExtractionError(
            f"invalid UTF-8 at byte offset {exc.start + base}: {exc.reason}"
        ) from None


def extract_markdown(data: bytes, ctx: FileContext) -> Extraction:
    """Chunk a Markdown/MDX file; raises ExtractionError only for non-text bytes."""
    text = decode_markdown(data)
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
    fm, body_start, warnings = split_front_matter(text)
    ex = Extraction(kind="markdown", front_matter=fm, warnings=list(warnings))
    _Chunker(lines, body_start - 1, fm, ctx, ex).run()
    return ex


class _Chunker:
    def __init__(self, lines, body_row, fm, ctx: FileContext, ex: Extraction):
        self.lines, self.body_row, self.fm, self.ctx, self.ex = lines, body_row, fm, ctx, ex
        self.excluded: set[int] = set(range(body_row))
        self.max_chars = MAX_CHUNK_CHARS_PER_TOKEN * ctx.max_tokens
        self.overhead = max(0, ctx.count_tokens(""))  # e.g. [CLS]/[SEP]
        self.calls = self.counted = 0
        self.exhausted = False

    # -- text helpers -------------------------------------------------------
    def _blank(self, r: int) -> bool:
        return r in self.excluded or not self.lines[r].strip()

    def _text(self, s: int, e: int) -> str:
        return "\n".join(self.lines[r] for r in range(s, e + 1) if r not in self.excluded).strip("\n")

    def _count(self, text: str) -> int:
        """Token count, or a value over any budget when the text is too long to be a chunk."""
        if len(text) > self.max_chars:
            return 1 << 30
        self.calls += 1
        self.counted += len(text)
        if self.calls > MAX_COUNT_CALLS or self.counted > MAX_COUNTED_CHARS:
            self.exhausted = True  # loops stop at their next step; this count completes
        return self.ctx.count_tokens(text)

    # -- structure ----------------------------------------------------------
    def _parse(self) -> Optional[list[_Unit]]:
        """Top-level blocks (children of sections) as units, or None to fall back."""
        copy = [
            "" if r in self.excluded else ln[:PARSE_LINE_CHARS].replace("\r", " ")
            for r, ln in enumerate(self.lines)
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
        units: list[_Unit] = []
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

    def _unit(self, node) -> _Unit:
        s = node.start_point.row
        e = node.end_point.row - (1 if node.end_point.column == 0 else 0)
        e = max(s, e)
        if node.type == "atx_heading":
            level = next(
                (int(c.type[5]) for c in node.children if c.type.startswith("atx_h")), 1
            )
            title = _ATX_CLOSE_RE.sub("", _ATX_RE.sub("", self.lines[s], count=1))
            return _Unit(s, s, "heading", level=level, title=_clean_title(title[:2000]))
        if node.type == "setext_heading":
            level = 1 if any(c.type == "setext_h1_underline" for c in node.children) else 2
            title = " ".join(self.lines[r].strip()[:2000] for r in range(s, e))
            return _Unit(s, e, "heading", level=level, title=_clean_title(title))
        if node.type in _CODE_TYPES:
            return _Unit(s, e, "fence")
        unit = _Unit(s, e)
        if node.type == "list":  # list items are the next split boundary
            unit.children = [
                _Unit(c.start_point.row, c.start_point.row)
                for c in node.children
                if c.type == "list_item"
            ]
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

    def _blocks(self) -> Optional[list[_Unit]]:
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
            u = by_start.get(s) or _Unit(s, e)
            if u.kind == "heading" and u.end < e:
                # Rows after a heading that no block claimed still need a home.
                if any(not self._blank(r) for r in range(u.end + 1, e + 1)):
                    out.append(u)
                    s, u = u.end + 1, _Unit(u.end + 1, e)
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

    def _group_admonitions(self, units: list[_Unit], code: set[int]) -> list[_Unit]:
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
        out: list[_Unit] = []
        si = 0
        for u in units:
            while si < len(spans) and spans[si][1] < u.start:
                si += 1
            if u.kind != "heading" and si < len(spans) and spans[si][0] <= u.start:
                if out and out[-1].kind == "group" and out[-1].level == si:
                    out[-1].children.append(u)
                    out[-1].end = u.end
                else:  # level holds the span index for groups
                    out.append(_Unit(u.start, u.end, "group", children=[u], level=si))
            else:
                out.append(u)
        return [u.children[0] if u.kind == "group" and len(u.children) == 1 else u for u in out]

    # -- chunking -----------------------------------------------------------
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
        segs: list[tuple[int, list[str], list[_Unit]]] = []
        stack: list[_Unit] = []
        for u in units:
            if u.kind == "heading":
                while stack and stack[-1].level >= u.level:
                    stack.pop()
                stack.append(u)
                path = ([title] if title else []) + [h.title for h in stack]
                if len(path) > 1 and path[1] == path[0]:
                    del path[1]
                segs.append((u.level, path, [u]))
            elif segs:
                segs[-1][2].append(u)
            else:
                segs.append((0, lead, [u]))
        self._chunk_segments(segs)

    def _seg_tokens(self, units: list[_Unit]) -> int:
        return self._count(self._text(units[0].start, units[-1].end))

    def _content_rows(self, units: list[_Unit]) -> int:
        return sum(
            1 for u in units if u.kind != "heading"
            for r in range(u.start, u.end + 1) if not self._blank(r)
        )

    def _chunk_segments(self, segs) -> None:
        target = self.ctx.target_tokens
        seg_tokens: list[int] = []
        for _, _, units in segs:
            if self.exhausted:
                return
            seg_tokens.append(self._seg_tokens(units))
        i = 0
        while i < len(segs) and not self.exhausted:
            level, path, units = segs[i]
            members, tokens, exact = [segs[i]], seg_tokens[i], True
            # Rule 3: fold tiny segments into the next sibling/child while it fits;
            # a bare heading always goes down with its first child.
            while i + 1 < len(segs):
                nxt, content = segs[i + 1], self._content_rows(members[-1][2])
                merged = tokens + seg_tokens[i + 1] - self.overhead  # exact for WordPiece
                tiny = content <= 1 and seg_tokens[i] <= target // 4 and merged <= target
                if nxt[0] < members[-1][0] or not (tiny or (content == 0 and nxt[0] > members[-1][0])):
                    break
                members.append(nxt)
                units, tokens, exact = units + nxt[2], merged, False
                i += 1
            if tokens <= target:
                pieces = [_Piece(units[0].start, units[-1].end, tokens=tokens, exact=exact)]
            else:
                pieces = self._pack(units, target)
            for p in pieces:
                self._emit([p], _path_for(p, members))
            i += 1

    def _pack(self, units: list[_Unit], budget: int) -> list[_Piece]:
        """Greedy packing; a sum of part counts estimates the joined count (WordPiece
        pre-tokenizes on whitespace, so it is exact up to the special tokens).
        The pieces of a unit that had to be split join their neighbours where they fit,
        so a heading never ends up alone in front of a long table."""
        pieces: list[_Piece] = []
        cur: Optional[_Piece] = None
        heads_only = False  # cur holds nothing but headings
        for u in units:
            if self.exhausted:
                break
            if u.kind == "heading" and cur and not heads_only:
                pieces.append(cur)  # a heading starts a chunk, never ends one
                cur = None
            text = self._text(u.start, u.end)
            c = self._count(text)
            if c > budget and not (u.kind == "fence" and c <= self.ctx.max_tokens):
                parts = self._split(u, budget)
            else:
                parts = [_Piece(u.start, u.end, tokens=c, chars=len(text), exact=True)]
            for part in parts:
                if cur and self._joinable(cur, part, budget):
                    cur.end, cur.exact = part.end, False
                    cur.tokens += part.tokens - self.overhead
                    cur.chars += part.chars + 2
                else:
                    if cur:
                        pieces.append(cur)
                    cur = part
            heads_only = u.kind == "heading" and cur is not None and (heads_only or cur.start == u.start)
        if cur:
            pieces.append(cur)
        return pieces

    def _joinable(self, a: _Piece, b: _Piece, budget: int) -> bool:
        return (
            a.text is None and b.text is None
            and a.tokens + b.tokens - self.overhead <= budget
            and a.chars + b.chars + 2 <= self.max_chars
        )

    def _split(self, u: _Unit, budget: int) -> list[_Piece]:
        """Split a unit over budget: its children (admonition blocks, list items), else lines."""
        subs: list[_Unit] = []
        if u.kind == "group":
            subs = u.children
        elif len(u.children) > 1:  # list items: partition the list at item starts
            starts = sorted({u.start} | {c.start for c in u.children})
            subs = [
                _Unit(s, (starts[j + 1] - 1) if j + 1 < len(starts) else u.end)
                for j, s in enumerate(starts)
            ]
        if len(subs) > 1:
            return self._pack(subs, budget)
        return self._pack_lines(u.start, u.end, budget)

    def _pack_lines(self, start: int, end: int, budget: int) -> list[_Piece]:
        """Line windows over rows start..end, each counted as joined (exact for any
        counter).  The window size follows the characters-per-token ratio seen so far,
        so a 200,000-line file costs about one count call per chunk, not per line."""
        rows = [r for r in range(start, end + 1) if not self._blank(r)]
        cum = [0]
        for r in rows:
            cum.append(cum[-1] + len(self.lines[r]) + 1)
        pieces: list[_Piece] = []
        i, ratio = 0, 4.0  # ~4 characters a token for English prose
        while i < len(rows) and not self.exhausted:
            limit = max(1, min(self.max_chars, int(budget * ratio)))
            j = max(i + 1, bisect.bisect_right(cum, cum[i] + limit + 1) - 1)
            text = self._text(rows[i], rows[j - 1])
            c = self._count(text)
            if c <= budget:
                pieces.append(_Piece(rows[i], rows[j - 1], tokens=c, chars=len(text), exact=True))
                ratio = max(0.5, 0.95 * len(text) / max(c, 1))
                i = j
            elif j == i + 1:
                pieces.extend(self._split_text(rows[i], self.lines[rows[i]], budget))
                i = j
            else:  # shrink below this window (strictly, so the loop ends)
                ratio = min(0.9 * len(text) / c, (cum[j - 1] - cum[i]) / budget)
        return pieces

    def _split_text(self, row: int, line: str, budget: int) -> list[_Piece]:
        """Cut one long line (or part of one) into pieces, at whitespace where one
        lies in the second half of the window; windows sized as in _pack_lines."""
        pieces, pos, n, ratio = [], 0, len(line), 4.0
        while pos < n and not self.exhausted:
            while pos < n and line[pos].isspace():
                pos += 1
            if pos >= n:
                break
            limit = max(1, min(self.max_chars, int(budget * ratio)))
            end = min(n, pos + limit)
            if end < n:
                ws = max(line.rfind(" ", pos + limit // 2, end), line.rfind("\t", pos + limit // 2, end))
                end = ws if ws > pos else end
            text = line[pos:end].rstrip()
            c = self._count(text)
            if c <= budget or end - pos <= 1:
                pieces.append(_Piece(row, row, text, tokens=c, chars=len(text), exact=True))
                ratio = max(0.25, 0.95 * len(text) / max(c, 1))
                pos = end
            else:
                ratio = min(0.9 * len(text) / c, (end - pos - 1) / budget)
        return pieces

    def _emit(self, pieces: list[_Piece], path: list[str], depth: int = 0) -> None:
        limit = self.ctx.max_tokens
        for p in pieces:
            text = p.text if p.text is not None else self._text(p.start, p.end)
            if not text.strip():
                continue
            tokens = p.tokens if p.exact else self._count(text)
            if tokens > limit and depth < 2:  # joined estimate was off: exact line windows
                if p.text is not None:
                    sub = self._split_text(p.start, text, self.ctx.target_tokens)
                else:
                    sub = self._pack_lines(p.start, p.end, self.ctx.target_tokens)
                if len(sub) > 1:
                    self._emit(sub, path, depth + 1)
                    continue
            if tokens > limit:  # never index a chunk the model would truncate
                self.ex.warnings.append(
                    f"passage at lines {p.start + 1}-{p.end + 1} ({len(text)} characters) could "
                    f"not be split under {limit} tokens; dropped"
                )
                continue
            s, e = p.start, p.end
            while s < e and self._blank(s):
                s += 1
            while e > s and self._blank(e):
                e -= 1
            self.ex.chunks.append(
                Chunk(
                    ordinal=len(self.ex.chunks),
                    text=text,
                    start_line=s + 1,
                    end_line=e + 1,
                    heading_path=list(path),
                    token_count=tokens,
                )
            )


def _path_for(piece: _Piece, members) -> list[str]:
    """Heading path of a piece spanning merged segments: the deepest path when the
    segments run down one branch (a bare heading and its child), else the first."""
    paths = [m[1] for m in members if m[2][0].start <= piece.end and m[2][-1].end >= piece.start]
    if not paths:
        return members[0][1]
    last = paths[-1]
    return last if all(last[: len(p)] == p for p in paths[:-1]) else paths[0]


def _clean_title(title: str) -> str:
    """Heading text for a path: anchors, link targets, tags and code marks removed."""
    title = _ANCHOR_RE.sub("", title)
    title = _LINK_RE.sub(r"\1", title)
    title = _TAG_RE.sub("", title).replace("**", "").replace("`", "")
    return " ".join(title.split())[:200]


def _bracket_delta(line: str) -> int:
    return sum(line.count(c) for c in "({[") - sum(line.count(c) for c in ")}]")
