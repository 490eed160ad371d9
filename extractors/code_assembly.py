"""Unit assembly: the shared engine that turns a code file's ``Unit``s into ``Chunk``s.

A language module turns its tree-sitter tree into ``Unit``s (line ranges with a symbol path); this
module turns units into ``Chunk``s so that every language obeys the same rules:

* Lines are the file split on ``"\\n"`` (tree-sitter counts rows the same way); a trailing ``"\\r"``
  is dropped and a leading UTF-8 BOM removed (``code_common.decode_lines``).  Start/end lines are
  1-based and inclusive; a chunk's text is exactly its lines joined with ``"\\n"`` and never starts
  or ends with a blank line.
* Every non-blank line lands in at least one chunk: lines outside any unit ("gap" code: top-level
  statements, detached comments, ERROR regions) become gap units whose symbol path is the enclosing
  container's path, or the file-level ``gap_path`` (``None`` unless the language has a module name).
  A gap made only of closing punctuation (``}``, ``});``) is appended to the unit before it.
* A container (class, impl, module) whose text exceeds ``ctx.max_tokens``, or that holds a
  deprecated member, is expanded into its members; otherwise it stays one chunk.
* When a container is expanded, a short header (at most ``ctx.target_tokens / 2`` tokens, e.g.
  ``impl Point {`` with its doc comment) joins the chunk of the first member.
* Consecutive *groupable* units (imports, ledger fields, consts, gap code) that live in the same
  container merge while their estimated total stays within ``ctx.target_tokens``; the merged chunk's
  symbol path lists the members' paths joined with ``", "`` (at most 8, then ``"…"``), or the
  container path when no member is named.  Deprecated units never merge.
* A unit over ``ctx.max_tokens`` tokens (or ``max_tokens * 16`` characters, so no tokenizer is ever
  handed megabytes) is split into line windows balanced to about ``ctx.target_tokens`` each.  The
  first window keeps the symbol path, later ones get ``#2``, ``#3``... (windows of unnamed gap code
  all keep the gap path).  A single line too long for a window is cut into consecutive character
  slices (preferring whitespace) that share its line number: for those chunks the concatenated
  texts, not each text, equal the line.
* Deprecation reasons attached to a unit apply to every chunk made from it (its windows, and the
  members and gap code of an expanded container).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from trustindex.extractors.base import Chunk, Deprecation, FileContext

# Characters per token allowed before a text is split without asking the tokenizer: code averages
# 3-4 characters a WordPiece token, so 16 only trips on whitespace-heavy or pathological text.
CHARS_PER_TOKEN_CAP = 16
MAX_CONTAINER_DEPTH = 8  # nested classes/modules expanded at most this deep
_MAX_NAMES = 8
_CLOSING_ONLY = re.compile(r"^[\s})\];,]*$")


class Unit:
    """A line range the chunker keeps together (plus its leading comments / attributes).

    ``names`` lists the paths a merged group shows (default ``[path]``); ``context`` is the
    enclosing container's path (set by the engine: groups never cross it); ``gap`` marks code
    between symbols; ``tokens`` caches the count of the unit's current text.
    """

    __slots__ = ("start", "end", "path", "groupable", "deprecations", "children", "names", "context", "gap", "tokens")

    def __init__(
        self,
        start: int,
        end: int,
        path: str | None = None,
        groupable: bool = False,
        deprecations: list[tuple[str, str]] | None = None,
        children: list[Unit] | None = None,
        names: list[str] | None = None,
        context: str | None = None,
        gap: bool = False,
    ):
        self.start, self.end, self.path, self.groupable = start, end, path, groupable
        self.deprecations = deprecations or []  # (marker, reason)
        self.children = children or []
        self.names = names if names is not None else ([path] if path else [])
        self.context, self.gap = context, gap
        self.tokens: int | None = None

    def __repr__(self) -> str:
        return f"Unit({self.start}-{self.end} {self.path!r})"


def join_path(prefix: str | None, name: str, sep: str = ".") -> str:
    return f"{prefix}{sep}{name}" if prefix else name


def join_names(names: list[str]) -> str | None:
    if not names:
        return None
    shown = ", ".join(names[:_MAX_NAMES])
    return shown + (", …" if len(names) > _MAX_NAMES else "")


class _Assembler:
    def __init__(self, lines: list[str], ctx: FileContext):
        self.lines = lines
        self.ctx = ctx
        self.max_tokens = max(8, ctx.max_tokens)
        self.target = max(4, min(ctx.target_tokens, self.max_tokens))
        self.char_cap = self.max_tokens * CHARS_PER_TOKEN_CAP
        self.overhead = ctx.count_tokens("")  # e.g. [CLS]/[SEP] of a real tokenizer

    # -- text and tokens ---------------------------------------------------------------------
    def text(self, start: int, end: int) -> str:
        return "\n".join(self.lines[start - 1 : end])

    def blank(self, i: int) -> bool:
        return not self.lines[i - 1].strip()

    def tokens(self, text: str) -> int:
        """Token count, or a sentinel above max_tokens for texts too long to hand the tokenizer."""
        if len(text) > self.char_cap:
            return self.max_tokens * 4 + len(text) // CHARS_PER_TOKEN_CAP
        return self.ctx.count_tokens(text)

    def trim(self, start: int, end: int) -> tuple[int, int]:
        while start <= end and self.blank(start):
            start += 1
        while end >= start and self.blank(end):
            end -= 1
        return start, end

    # -- units to leaves -----------------------------------------------------------------------
    def flatten(
        self, units: list[Unit], lo: int, hi: int, gap_path: str | None, deps: list, depth: int, out: list[Unit]
    ) -> None:
        cursor = lo
        for unit in _normalise(units, lo, hi):
            self.gap(cursor, unit.start - 1, gap_path, deps, out)
            unit.deprecations = _dedupe(deps + unit.deprecations)
            unit.context = gap_path
            if (
                unit.children
                and depth < MAX_CONTAINER_DEPTH
                and (
                    any(c.deprecations for c in unit.children)
                    or self.tokens(self.text(unit.start, unit.end)) > self.max_tokens
                )
            ):
                members: list[Unit] = []
                self.flatten(unit.children, unit.start, unit.end, unit.path, unit.deprecations, depth + 1, members)
                out.extend(self.fold_header(members))
            else:
                out.append(unit)
            cursor = unit.end + 1
        self.gap(cursor, hi, gap_path, deps, out)

    def fold_header(self, members: list[Unit]) -> list[Unit]:
        """Join a short container header (``impl Point {``, ``class C {``) to the first member,
        so the member's chunk says what it belongs to."""
        if len(members) >= 2 and members[0].gap and not members[1].groupable:
            head = members[0]
            if self.tokens(self.text(head.start, head.end)) <= self.target // 2:
                members[1].start = head.start
                return members[1:]
        return members

    def gap(self, start: int, end: int, path: str | None, deps: list, out: list[Unit]) -> None:
        start, end = self.trim(start, end)
        if start > end:
            return
        if out and out[-1].end < start and all(_CLOSING_ONLY.match(self.lines[i - 1]) for i in range(start, end + 1)):
            out[-1].end = end  # a lone "}" belongs to what it closes
            return
        out.append(Unit(start, end, path, groupable=True, deprecations=list(deps), names=[], context=path, gap=True))

    # -- grouping and emission -----------------------------------------------------------------
    def count(self, unit: Unit) -> int:
        if unit.tokens is None:
            unit.tokens = self.tokens(self.text(unit.start, unit.end))
        return unit.tokens

    def group(self, leaves: list[Unit]) -> list[Unit]:
        grouped: list[Unit] = []
        merged: set[int] = set()
        run_tokens = 0
        for leaf in leaves:
            leaf.start, leaf.end = self.trim(leaf.start, leaf.end)
            if leaf.start > leaf.end:
                continue
            leaf.tokens = None
            mergeable = leaf.groupable and not leaf.deprecations
            last = grouped[-1] if grouped else None
            if (
                mergeable
                and last is not None
                and last.groupable
                and not last.deprecations
                and last.context == leaf.context
            ):
                cost = self.count(leaf) - self.overhead
                if run_tokens + cost <= self.target:
                    last.end = leaf.end
                    last.names.extend(leaf.names)
                    last.tokens = None
                    merged.add(id(last))
                    run_tokens += cost
                    continue
            grouped.append(leaf)
            run_tokens = self.count(leaf) if mergeable else 0
        for unit in grouped:
            if id(unit) in merged:
                unit.path = join_names(unit.names) or unit.context
        return grouped

    def emit(self, unit: Unit) -> list[tuple[int, int, str, int]]:
        text = self.text(unit.start, unit.end)
        count = self.count(unit)
        if count <= self.max_tokens:
            return [(unit.start, unit.end, text, count)]
        return self.windows(unit.start, unit.end, overlap=0, balance=True)

    def windows(self, start: int, end: int, overlap: int, balance: bool) -> list[tuple[int, int, str, int]]:
        """Greedy line windows of about ``target`` tokens, each verified against ``max_tokens``."""
        est: dict[int, int] = {}
        total = 0
        for i in range(start, end + 1):
            line = self.lines[i - 1]
            if not line.strip():
                est[i] = 0
            elif len(line) > self.char_cap:
                est[i] = -1  # too long for any window: sliced on its own
            else:
                est[i] = max(1, self.ctx.count_tokens(line) - self.overhead)
                total += est[i]
        rest: dict[int, int] = {}  # est still to come from line i on, over-long lines counting big
        running = 0
        for i in range(end, start - 1, -1):
            running += est[i] if est[i] >= 0 else self.max_tokens * 4
            rest[i] = running
        goal = self.target
        if balance and total > 0:
            goal = min(self.target, math.ceil(total / math.ceil(total / self.target)))
        out: list[tuple[int, int, str, int]] = []
        i = start
        while i <= end:
            while i <= end and est[i] == 0:
                i += 1
            if i > end:
                break
            if est[i] < 0:
                out.extend(self.slices(i))
                i += 1
                continue
            j, acc, chars = i, self.overhead + est[i], len(self.lines[i - 1])
            # Past the balanced goal, still take the tail when all of it fits the target:
            # no runt window of three lines at the end of a function.
            while (
                j < end
                and est[j + 1] >= 0
                and (acc + est[j + 1] <= goal or acc + rest[j + 1] <= self.target)
                and chars + len(self.lines[j]) + 1 <= self.char_cap
            ):
                j += 1
                acc += est[j]
                chars += len(self.lines[j - 1]) + 1
            out.extend(self.verified(*self.trim(i, j)))
            nxt = j + 1
            while nxt <= end and est[nxt] == 0:
                nxt += 1
            if nxt > end:
                break
            # Overlap only into a window of ordinary lines: before an over-long line it would
            # just repeat the tail as slivers.
            i = nxt if est[nxt] < 0 else max(i + 1, j + 1 - overlap)
        return out

    def verified(self, start: int, end: int) -> list[tuple[int, int, str, int]]:
        if start > end:
            return []
        text = self.text(start, end)
        count = self.tokens(text)
        if count <= self.max_tokens:
            return [(start, end, text, count)]
        if start == end:
            return self.slices(start)
        mid = (start + end) // 2
        return self.verified(*self.trim(start, mid)) + self.verified(*self.trim(mid + 1, end))

    def slices(self, i: int) -> list[tuple[int, int, str, int]]:
        """Consecutive character slices of one over-long line, cut at whitespace where possible."""
        line = self.lines[i - 1]
        out: list[tuple[int, int, str, int]] = []
        pos, start_size = 0, max(16, self.target * 3)
        step = start_size  # adapts to the line's density, so most pieces are counted once
        while pos < len(line):
            while True:
                cut = min(len(line), pos + step)
                if cut < len(line):
                    space = line.rfind(" ", pos + step // 2, cut)
                    cut = space + 1 if space > 0 else cut
                piece = line[pos:cut]
                count = self.tokens(piece)
                if count <= self.max_tokens or step <= 1:
                    break
                step //= 2
            out.append((i, i, piece, count))
            pos = cut
            if count < self.target // 2 and step < start_size:
                step *= 2
        return out


def _normalise(units: list[Unit], lo: int, hi: int) -> list[Unit]:
    """Sorted, clipped to [lo, hi], overlaps merged (minified code has several symbols a line)."""
    out: list[Unit] = []
    for unit in sorted(units, key=lambda u: (u.start, u.end)):
        unit.start, unit.end = max(unit.start, lo), min(unit.end, hi)
        if unit.start > unit.end:
            continue
        if out and unit.start <= out[-1].end:
            prev = out[-1]
            prev.end = max(prev.end, unit.end)
            if len(prev.names) <= _MAX_NAMES:  # only the first few are ever shown
                prev.names.extend(unit.names)
            prev.path = join_names(prev.names) or prev.path
            prev.groupable = prev.groupable and unit.groupable
            prev.deprecations = _dedupe(prev.deprecations + unit.deprecations)
            prev.children = []
            continue
        out.append(unit)
    return out


def _dedupe(items: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return list(dict.fromkeys(items))


def assemble(
    lines: list[str], units: list[Unit], ctx: FileContext, gap_path: str | None = None
) -> tuple[list[Chunk], list[Deprecation]]:
    """Chunks (ordinals from 0) and chunk-scoped deprecations for a file's top-level units."""
    asm = _Assembler(lines, ctx)
    leaves: list[Unit] = []
    asm.flatten(units, 1, len(lines), gap_path, [], 0, leaves)
    chunks: list[Chunk] = []
    deprecations: list[Deprecation] = []
    for unit in asm.group(leaves):
        for part, (start, end, text, count) in enumerate(asm.emit(unit), start=1):
            # Later parts of a symbol are "path#2", "path#3"; gap code has no symbol to number.
            numbered = part > 1 and unit.path is not None and bool(unit.names)
            path = f"{unit.path}#{part}" if numbered else unit.path
            ordinal = len(chunks)
            chunks.append(
                Chunk(ordinal=ordinal, text=text, start_line=start, end_line=end, symbol_path=path, token_count=count)
            )
            for marker, reason in unit.deprecations:
                deprecations.append(Deprecation(scope="chunk", reason=reason, marker=marker, chunk_ordinal=ordinal))
    return chunks, deprecations


def text_windows(lines: list[str], ctx: FileContext, overlap: int = 2) -> list[Chunk]:
    """Plain line windows of about ``ctx.target_tokens`` with ``overlap`` lines shared."""
    asm = _Assembler(lines, ctx)
    return [
        Chunk(ordinal=n, text=text, start_line=s, end_line=e, token_count=c)
        for n, (s, e, text, c) in enumerate(asm.windows(1, len(lines), overlap, balance=False))
    ]
