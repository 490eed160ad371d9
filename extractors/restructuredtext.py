"""reStructuredText (Sphinx, docutils) extraction: section titles as heading paths, blocks as units.

Before this module a ``.rst`` page was cut into plain line windows: no title, no heading path, so a Sphinx site's
passages reached the ranking without the words that name them.  The structure is read line by line, as the
reStructuredText specification defines it (docutils' "reStructuredText Markup Specification", sections
"Sections", "Literal Blocks", "Directives", "Comments"), never by running docutils or Sphinx: a Sphinx page is full
of roles and directives only Sphinx and its extensions know, which docutils reports as errors, and its line numbers
for them are not those of the file.

- A section title is a title line underlined, and optionally overlined, by one non-alphanumeric printable ASCII
  character repeated at least as long as the title; a title starts a block (the file's first line, or after a
  blank line or another title).  Levels follow the order in which adornment styles first appear, an overlined style
  being distinct from the underlined one of the same character (docutils' rule): the first style is the document
  title (level 1).
- A directive (``.. name:: argument``) and a literal block (after a paragraph ending in ``::``) run over every
  following line that is blank or indented; ``code-block``, ``code``, ``sourcecode`` and literal blocks are code
  (kept whole like a Markdown fence where they fit).  A comment (``..`` followed by anything that is not a
  directive, target, footnote or substitution) and a hyperlink target (``.. _name:``) are not shown by the site, so
  their lines are left out of the chunks' text (their line numbers stay those of the file).
- Every other run of non-blank lines is a block; the items of a bullet or enumerated list inside it are its split
  points.  Blocks become chunks by the Markdown chunker's rules (extractors/markdown.py, markdown_sizing.py: heading
  segments, tiny ones merged, big ones packed by blocks), so both kinds of page size alike.

Sphinx's ``.. deprecated:: VERSION`` directive marks the chunks that hold it (marker ``admonition``, as a Markdown
``:::warning Deprecated``), with the version and the directive's first line of text as its reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trustindex.extractors.base import Deprecation, Extraction, FileContext
from trustindex.extractors.markdown import HeadingChunker, decode_markdown
from trustindex.extractors.markdown_sizing import Unit
from trustindex.extractors.rst_includes import included_files

KIND = "restructuredtext"
# docutils' adornment characters: the printable 7-bit ASCII characters that are not letters or digits
_ADORNMENT_CHARS = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_ADORNMENT_RE = re.compile("^([" + re.escape(_ADORNMENT_CHARS) + r"])\1{2,}\s*$")
_DIRECTIVE_RE = re.compile(r"^\.\.\s+(?P<name>[\w:+.-]+)\s?::(?:\s+(?P<arg>.*))?$")
_EXPLICIT_RE = re.compile(r"^\.\.(?:\s|$)")
_TARGET_RE = re.compile(r"^\.\.\s+(?:_|__\s*:)")  # ``.. _name:`` and anonymous ``.. __:`` targets
_KEPT_MARKUP_RE = re.compile(r"^\.\.\s+(?:\[|\|)")  # footnotes, citations, substitution definitions
_DEPRECATED_RE = re.compile(r"^\s*\.\.\s+deprecated\s?::(?:\s+(?P<arg>.*))?$")
_CODE_DIRECTIVES = frozenset({"code-block", "code", "sourcecode", "highlight", "doctest", "testcode", "ipython"})
_LIST_ITEM_RE = re.compile(r"^(?:[-*+\u2022]|\d+[.)]|#[.)]|\(?[a-zA-Z0-9]\))\s+\S")
_ROLE_RE = re.compile(r":[\w:+.-]+:`([^`<]*?)(?:\s*<[^>]*>)?`")
_INLINE_RE = re.compile(r"``|\*\*|(?<!\w)[*`]|[*`](?!\w)|`_+")


def extract_restructuredtext(data: bytes, ctx: FileContext) -> Extraction:
    """Chunk a reStructuredText file by its sections and read its ``deprecated`` directives (rules in the module
    docstring).  Raises ExtractionError only for bytes that are not UTF-8 text."""
    text = decode_markdown(data)
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
    ex = Extraction(kind=KIND)
    chunker = _RstChunker(lines, 0, {}, ctx, ex)
    chunker.run()
    ex.deprecations = _deprecations(chunker.deprecated, ex, lines)
    ex.includes = included_files(text, ctx.path)
    return ex


class _RstChunker(HeadingChunker):
    """The Markdown chunker's segments and sizing over units read from reStructuredText."""

    deprecated: list[DeprecatedDirective]

    def _blocks(self) -> list[Unit] | None:
        self.deprecated = []
        units: list[Unit] = []
        styles: list[tuple[str, bool]] = []  # adornment styles in the order they first appear: (char, overlined)
        n, r = len(self.lines), self.body_row
        block_start = True  # a title must start a block
        while r < n:
            line = self.lines[r]
            if not line.strip():
                r, block_start = r + 1, True
                continue
            title = self._title(r, block_start)
            if title is not None:
                end, style, text = title
                if style not in styles:
                    styles.append(style)
                units.append(Unit(r, end, "heading", level=styles.index(style) + 1, title=_clean_title(text)))
                r, block_start = end + 1, True
                continue
            if _EXPLICIT_RE.match(line):
                r = self._explicit(r, units)
            else:
                r = self._paragraph(r, units)
            block_start = False
        return units

    def _title(self, r: int, block_start: bool) -> tuple[int, tuple[str, bool], str] | None:
        """(last row, style, text) of a section title starting at row ``r``, else None."""
        lines, n = self.lines, len(self.lines)
        if not block_start:
            return None
        over = _ADORNMENT_RE.match(lines[r])
        if over and r + 2 < n and lines[r + 1].strip():
            under = lines[r + 2].rstrip()
            text = lines[r + 1].strip()
            if under == lines[r].rstrip() and len(under) >= len(text):
                return r + 2, (over.group(1), True), text
        if over or lines[r][:1].isspace() or r + 1 >= n:
            return None
        under_match = _ADORNMENT_RE.match(lines[r + 1])
        text = lines[r].strip()
        if under_match and len(lines[r + 1].rstrip()) >= len(text):
            return r + 1, (under_match.group(1), False), text
        return None

    def _indented_run(self, r: int, deeper_than: int = 0) -> int:
        """The last row of the lines after row ``r`` that are blank or indented more than ``deeper_than`` columns
        (trailing blank lines left out): a directive's or literal block's body, or a nested directive's."""
        end, k = r, r + 1
        while k < len(self.lines) and (not self.lines[k].strip() or _indent(self.lines[k]) > deeper_than):
            if self.lines[k].strip():
                end = k
            k += 1
        return end

    def _explicit(self, r: int, units: list[Unit]) -> int:
        """A directive, comment, target, footnote or substitution starting at row ``r``; returns the next row."""
        line, end = self.lines[r], self._indented_run(r)
        directive = _DIRECTIVE_RE.match(line)
        if directive is None and not _KEPT_MARKUP_RE.match(line):  # a comment or a target: not on the page
            self.excluded.update(range(r, end + 1))
            return end + 1
        name = directive.group("name").lower() if directive else ""
        units.append(Unit(r, end, "fence" if name in _CODE_DIRECTIVES else "block"))
        if name not in _CODE_DIRECTIVES:  # a deprecated directive here or nested in this one's body
            for k in range(r, end + 1):
                nested = _DEPRECATED_RE.match(self.lines[k])
                if nested:
                    self.deprecated.append(self._deprecated_at(k, nested.group("arg") or "", (r, end)))
        return end + 1

    def _deprecated_at(self, k: int, version: str, enclosing: tuple[int, int]) -> DeprecatedDirective:
        """The ``deprecated`` directive at row ``k``: its rows, its reason and the block it sits in."""
        end = self._indented_run(k, _indent(self.lines[k]))
        said = next((self.lines[i].strip() for i in range(k + 1, end + 1) if self.lines[i].strip()), "")
        reason = f"deprecated since {version.strip()}" if version.strip() else "deprecated"
        reason = f"{reason}: {_clean_title(said)}" if said else reason
        return DeprecatedDirective(k, end, reason, enclosing if enclosing[0] != k else None)

    def _paragraph(self, r: int, units: list[Unit]) -> int:
        """A run of non-blank lines (its list items as split points), and the literal block its ``::`` opens."""
        n, end = len(self.lines), r
        while end + 1 < n and self.lines[end + 1].strip():
            end += 1
        indent = _indent(self.lines[r])
        unit = Unit(r, end)
        unit.children = [
            Unit(k, k)
            for k in range(r, end + 1)
            if _indent(self.lines[k]) == indent and _LIST_ITEM_RE.match(self.lines[k].strip())
        ]
        units.append(unit)
        if self.lines[end].rstrip().endswith("::"):
            literal = self._indented_run(end)
            if literal > end:
                units.append(Unit(end + 1, literal, "fence"))
                return literal + 1
        return end + 1


def _indent(line: str) -> int:
    """The columns of leading whitespace (a tab counts one: only comparisons within one file matter)."""
    return len(line) - len(line.lstrip())


def _clean_title(title: str) -> str:
    """A title as the page shows it: roles read as their text, inline markup marks removed."""
    return " ".join(_INLINE_RE.sub("", _ROLE_RE.sub(r"\1", title)).split())[:2000]


@dataclass(frozen=True)
class DeprecatedDirective:
    """A ``.. deprecated::`` directive: its rows (0-based), its reason, and the directive whose body holds it."""

    start: int
    end: int
    reason: str
    enclosing: tuple[int, int] | None  # the rows of ``.. class:: X`` for one nested in it; None at the top level


def _deprecations(found: list[DeprecatedDirective], ex: Extraction, lines: list[str]) -> list[Deprecation]:
    """A top-level ``deprecated`` directive marks the chunks whose lines it overlaps (its section's text there); one
    nested in an API directive (``.. class:: X`` / ``.. deprecated::``) marks what that directive describes, so only
    the chunks that are mostly that directive: a chunk packing several API entries is not marked for one of them."""
    out: list[Deprecation] = []
    for d in found:
        for c in ex.chunks:
            first, last = c.start_line - 1, c.end_line - 1  # the chunk's rows, 0-based like the directive's
            if not (first <= d.end and last >= d.start):
                continue
            if d.enclosing is not None:
                rows = [r for r in range(first, last + 1) if lines[r].strip()]
                inside = sum(1 for r in rows if d.enclosing[0] <= r <= d.enclosing[1])
                if inside * 2 < len(rows):
                    continue
            out.append(Deprecation("chunk", d.reason, "admonition", c.ordinal))
    return out
