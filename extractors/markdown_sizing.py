"""Sizing Markdown chunks to the embedding model's token budget.

The structural pass in :mod:`extractors.markdown` turns a file into heading
segments of block units; this module decides how those become chunks (rules 3
and 4 of that module's list):

3. Tiny segments (at most one content line and under a quarter of
   ``ctx.target_tokens``) merge with the following sibling or child segment when
   the merged text stays within the target; a bare heading (no content) always
   goes down with its first child.  A merged chunk keeps the path of its last
   member when the members run down one branch, else the path of the first.
4. A segment over ``ctx.target_tokens`` is packed from its blocks (paragraph,
   list, fence, table, a Docusaurus ``:::`` admonition kept together where it
   fits); a heading starts a chunk and never ends one; a block still over the
   target splits by list items, then by lines, then a line at whitespace; a code
   fence stays whole while it fits ``ctx.max_tokens``.  Every chunk is at most
   ``ctx.max_tokens`` tokens and ``MAX_CHUNK_CHARS_PER_TOKEN * max_tokens``
   characters (WordPiece maps a >100-character word to one ``[UNK]``, so a token
   bound alone would allow megabyte chunks).

Token counting stops at ``MAX_COUNTED_CHARS``/``MAX_COUNT_CALLS`` (the caller
warns); nothing here recurses on input depth beyond two re-split passes.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from trustindex.extractors.base import Chunk, Extraction, FileContext

MAX_CHUNK_CHARS_PER_TOKEN = 16  # MAX_CHUNK_CHARS = 16 * max_tokens (4096 for MiniLM)
# Token counting dominates the cost (the MiniLM tokenizer: ~20 us a call plus
# ~0.5-1 us a character here); the largest real page (178 KB) counts 416 K characters
# in 815 calls.  Past these limits the rest of the file is dropped with a warning:
# a poisoned file must neither stall a run nor flood the index with junk chunks.
MAX_COUNTED_CHARS = 1_200_000
MAX_COUNT_CALLS = 50_000


@dataclass
class Unit:
    """A contiguous row range that chunking treats as one piece where it fits."""

    start: int  # 0-based rows, inclusive
    end: int
    kind: str = "block"  # block | fence | heading | group
    children: list[Unit] = field(default_factory=list)
    level: int = 0  # heading level (headings only)
    title: str = ""
    anchor: str = ""  # the id the heading sets itself, "" when none (extractors/markdown.py heading_id)


@dataclass
class _Piece:
    start: int
    end: int
    text: str | None = None  # set when the piece is part of one line
    tokens: int = 0  # estimate, for joining neighbours
    chars: int = 0
    exact: bool = False  # tokens is the count of exactly this piece's text


class ChunkSizer:
    """Line state, token counting and the packing of units into chunks; the
    structural pass (:class:`extractors.markdown.HeadingChunker`) subclasses it."""

    def __init__(self, lines, body_row, ctx: FileContext, ex: Extraction):
        self.lines, self.body_row, self.ctx, self.ex = lines, body_row, ctx, ex
        self.excluded: set[int] = set(range(body_row))
        self.max_chars = MAX_CHUNK_CHARS_PER_TOKEN * ctx.max_tokens
        self.overhead = max(0, ctx.count_tokens(""))  # e.g. [CLS]/[SEP]
        self.calls = self.counted = 0
        self.exhausted = False
        # each section's heading path → the id its heading sets itself (the first such heading of that path)
        self.heading_ids: dict[tuple[str, ...], str] = {}

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

    # -- sizing ------------------------------------------------------------
    def _seg_tokens(self, units: list[Unit]) -> int:
        return self._count(self._text(units[0].start, units[-1].end))

    def _content_rows(self, units: list[Unit]) -> int:
        return sum(1 for u in units if u.kind != "heading" for r in range(u.start, u.end + 1) if not self._blank(r))

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

    def _pack(self, units: list[Unit], budget: int) -> list[_Piece]:
        """Greedy packing; a sum of part counts estimates the joined count (WordPiece
        pre-tokenizes on whitespace, so it is exact up to the special tokens).
        The pieces of a unit that had to be split join their neighbours where they fit,
        so a heading never ends up alone in front of a long table."""
        pieces: list[_Piece] = []
        cur: _Piece | None = None
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
            a.text is None
            and b.text is None
            and a.tokens + b.tokens - self.overhead <= budget
            and a.chars + b.chars + 2 <= self.max_chars
        )

    def _split(self, u: Unit, budget: int) -> list[_Piece]:
        """Split a unit over budget: its children (admonition blocks, list items), else lines."""
        subs: list[Unit] = []
        if u.kind == "group":
            subs = u.children
        elif len(u.children) > 1:  # list items: partition the list at item starts
            starts = sorted({u.start} | {c.start for c in u.children})
            subs = [Unit(s, (starts[j + 1] - 1) if j + 1 < len(starts) else u.end) for j, s in enumerate(starts)]
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
                    anchor=self.heading_ids.get(tuple(path), ""),
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
