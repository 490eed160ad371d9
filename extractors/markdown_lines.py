"""The Markdown line patterns the extractors share, each defined once (issue 25 item 5): a code fence's line and an
ATX heading's opening and closing sequences.

Readers that walk a page line by line (deprecation markers, version stamps, fenced code, release notes, AI-writing
badges) use these;
the chunker reads the structure with tree-sitter-markdown and uses the heading patterns only to take a heading's
text out of its line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

# A fence's opening or closing line (CommonMark 4.5): three or more backticks or tildes after ``indent``, then the
# info string.  How much indentation a reader accepts is its own rule (fence_line).
FENCE_LINE = re.compile(r"^(?P<indent>\s*)(?P<mark>`{3,}|~{3,})(?P<info>.*)$")

# An ATX heading's opening sequence (CommonMark 4.2): up to three blanks, one to six ``#``, then blanks or the end
# of the line; and its optional closing sequence of ``#`` (after a blank, or the whole content).  The chunker
# takes a heading's text out of its line with both; atx_heading reads a line with them.
ATX_OPENING = re.compile(r"^\s{0,3}(?P<hashes>#{1,6})(?:[ \t]+|$)")
ATX_CLOSING = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")

# A heading's explicit id: Docusaurus's `{#id}`, Python-Markdown's attribute list as MkDocs sites write it
# (`{ #id }`, `{: #id .class }`: FastAPI gives every heading one, in English on its translated pages too), or an MDX
# comment `{/*id*/}` as react.dev writes it (not words of the heading: left in, "usage" and "*/" were embedded and
# indexed with every passage under it)
HEADING_ID = re.compile(r"\s*\{(?::?\s*[#.][^}]*|/\*[^}]*?\*/)\}\s*$")
# An HTML or JSX tag, opening or closing: markup that carries no words (heading paths, deprecation reasons)
HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")


def fence_line(line: str, max_indent: int | None = 3, spaces_only: bool = False) -> re.Match[str] | None:
    """``line`` as a fence's opening or closing line (groups ``indent``, ``mark``, ``info``), or None.

    ``max_indent``: the most whitespace characters before the mark (None: any, as inside nested list items);
    ``spaces_only``: only spaces count as indentation (CommonMark's reading; a tab there makes indented code)."""
    m = FENCE_LINE.match(line)
    if m is None or (max_indent is not None and len(m["indent"]) > max_indent):
        return None
    return None if spaces_only and m["indent"].strip(" ") else m


def outside_fences(lines: Sequence[str]) -> Iterator[tuple[int, str]]:
    """Each line outside fenced code, as (row, the line without its ``\r``).  A fence closes on a line of its own
    mark character, at least as long, with nothing else on it (CommonMark 4.5); an unclosed one runs to the end."""
    fence: str | None = None
    for r, raw in enumerate(lines):
        ln = raw.rstrip("\r")
        m = fence_line(ln)
        if fence is not None:
            if m and m["mark"][0] == fence[0] and len(m["mark"]) >= len(fence) and not ln.strip().strip(fence[0]):
                fence = None
            continue
        if m:
            fence = m["mark"]
            continue
        yield r, ln


def atx_heading(line: str) -> tuple[int, str] | None:
    """An ATX heading line's level and text (opening and closing sequences, its explicit id and trailing blanks
    removed), or None.  The id is no word of the heading: a deprecated section's reason quoted FastAPI's
    `Alternative Events (deprecated) { #alternative-events-deprecated }`, markup and all, and react.dev's
    `## Deprecations {/*deprecations*/}` (the React 18 upgrade guide's list) was not read as a deprecations section.

    A bare ``#`` line (an empty heading to CommonMark) is not read as a heading here, nor is ``#5``."""
    m = ATX_OPENING.match(line)
    if m is None or m[0].endswith("#"):
        return None
    return len(m["hashes"]), HEADING_ID.sub("", ATX_CLOSING.sub("", line[m.end() :])).rstrip(" \t")


# Release notes read headings loosely (extractors/release_notes.py): any whitespace after the hashes and before
# the end (a name followed by a no-break space, "### Compact\xa0" in the real docs, is still the name) and closing
# hashes even without a blank before them; no indentation.
LOOSE_ATX_HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.+?)\s*#*\s*$")
