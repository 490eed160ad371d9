"""Compact pragmas inside fenced code blocks of Markdown/MDX pages → chunk-scoped version targets.

The Midnight docs show contracts in ```` ```compact ```` fences (often ```` ```compact title=lock.compact ````)
that start with ``pragma language_version 0.16;``: the example was written for that language version, so
the chunk(s) holding the fence target it.  Every fence tagged ``compact`` is read with the same pragma parser
as a ``.compact`` file (:func:`extractors.pragma.extract_pragmas`); an untagged fence is read only when its
text parses as Compact without syntax errors and holds a pragma (an untagged shell transcript that mentions
``pragma`` is not a contract).  Fences are found line by line, as CommonMark opens and closes them (a closing
fence uses the opening character, at least as many of them, and nothing after), so a ``pragma`` line in
prose or in a fence of another language is never read.

A page-level stamp or front-matter value that admits none of a fence's versions is *recorded* (a warning,
and a note in the fence target's detail), never merged: the fence targets its chunk, the stamp the rest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from tree_sitter import Parser

from trustindex.extractors.base import Chunk, VersionTarget
from trustindex.extractors.markdown_lines import fence_line
from trustindex.extractors.pragma import _LANGUAGE, COMPONENTS, extract_pragmas
from trustindex.schemas.versions import ConstraintSet, VersionSyntaxError

ORIGIN = "docs_fence"
COMPACT_TAGS = frozenset({"compact"})
_TITLE = re.compile(r"""\btitle=(?:"([^"]*)"|'([^']*)'|(\S+))""")
_PRAGMA_WORD = re.compile(r"\bpragma\s+(?:" + "|".join(COMPONENTS) + r")\b")


@dataclass(frozen=True)
class Fence:
    tag: str  # the info string's first word, lower-cased ("" for an untagged fence)
    title: str
    first_line: int  # 1-based line of the opening fence
    last_line: int  # 1-based line of the closing fence (or the file's last line when unclosed)
    code: str  # the lines between, with the opening fence's indentation removed


def fences(text: str) -> list[Fence]:
    """The fenced code blocks of a Markdown text, in order (an unclosed fence runs to the end, as CommonMark)."""
    out: list[Fence] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = fence_line(lines[i], spaces_only=True)
        if not m or (m["mark"][0] == "`" and "`" in m["info"]):
            i += 1
            continue
        mark, indent, info = m["mark"], len(m["indent"]), m["info"].strip()
        body, j = [], i + 1
        while j < len(lines):
            close = fence_line(lines[j], spaces_only=True)
            if close and close["mark"][0] == mark[0] and len(close["mark"]) >= len(mark) and not close["info"].strip():
                break
            line = lines[j]
            strip = min(indent, len(line) - len(line.lstrip(" ")))
            body.append(line[strip:])
            j += 1
        title_m = _TITLE.search(info)
        title = next((g for g in title_m.groups() if g), "") if title_m else ""
        tag = info.split()[0].lower() if info else ""
        out.append(Fence(tag, title, i + 1, min(j, len(lines) - 1) + 1, "\n".join(body) + "\n"))
        i = j + 1
    return out


def _parses_as_compact(code: str) -> bool:
    tree = Parser(_LANGUAGE).parse(code.encode("utf-8", "replace"))
    return not tree.root_node.has_error


def _chunks_over(first: int, last: int, chunks: Sequence[Chunk]) -> list[int | None]:
    hit = [c.ordinal for c in chunks if c.start_line <= last and c.end_line >= first]
    return hit or [None]


def fence_pragma_targets(text: str, chunks: Sequence[Chunk] | None = None) -> tuple[list[VersionTarget], list[str]]:
    """Every pragma in a ``compact`` (or untagged Compact) fence of ``text`` (the whole file), with warnings.

    Each target is scoped to every chunk whose line range overlaps the fence (a long fence split over two
    chunks governs both); with no ``chunks`` it stays document-scoped.  ``detail`` names the fence's line
    span, its title and the pragma's line in the file.
    """
    out: list[VersionTarget] = []
    warnings: list[str] = []
    for f in fences(text):
        if f.tag not in COMPACT_TAGS:
            if f.tag or not _PRAGMA_WORD.search(f.code) or not _parses_as_compact(f.code):
                continue
        if not _PRAGMA_WORD.search(f.code):
            continue
        targets, warns = extract_pragmas(f.code)
        where = f"fence lines {f.first_line}-{f.last_line}" + (f" ({f.title})" if f.title else "")
        if f.tag == "":
            where += " (untagged; parses as Compact)"
        warnings.extend(f"{where}: {w}" for w in warns)
        for t in targets:
            code_line = int(re.match(r"line (\d+)", t.detail)[1])  # extract_pragmas: "line N…", 1-based in code
            rest = t.detail[len(f"line {code_line}") :]
            detail = f"{where}: pragma at line {f.first_line + code_line}{rest}"
            for ordinal in _chunks_over(f.first_line, f.last_line, chunks or []):
                out.append(replace(t, origin=ORIGIN, chunk_ordinal=ordinal, detail=detail))
    return out, warnings


def _admits(t: VersionTarget) -> ConstraintSet | None:
    if t.status != "parsed" or not t.intervals:
        return None
    try:
        return ConstraintSet.from_json(t.intervals)
    except VersionSyntaxError:
        return None


def record_disagreements(targets: list[VersionTarget]) -> tuple[list[VersionTarget], list[str]]:
    """Fence targets that share no version with a page-level (document-scoped) target of their component get a
    note in their detail, and a warning says so; both are kept as they are otherwise."""
    page = [t for t in targets if t.chunk_ordinal is None and t.origin != ORIGIN and _admits(t) is not None]
    out, warnings, noted = [], [], set()
    for t in targets:
        fence_set = _admits(t) if t.origin == ORIGIN else None
        clash = [p for p in page if p.component == t.component and fence_set is not None]
        clash = [p for p in clash if not fence_set.intersects(_admits(p))]
        if clash:
            p = clash[0]
            note = f"; disagrees with the page's {p.origin} {p.constraint!r} ({p.detail})"
            t = replace(t, detail=t.detail + note)
            key = (t.detail.split(":", 1)[0], p.constraint)
            if key not in noted:
                noted.add(key)
                warnings.append(
                    f"{t.component}: {t.detail.split(';', 1)[0]} says {t.constraint!r}, "
                    f"the page's {p.origin} says {p.constraint!r}"
                )
        out.append(t)
    return out, warnings
