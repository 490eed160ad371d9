"""The Markdown line patterns defined once (extractors/markdown_lines.py): each reader's rule, as it read lines
before the patterns were shared (issue 25 item 5)."""

from __future__ import annotations

from trustindex.extractors.markdown_lines import (
    ATX_CLOSING,
    ATX_OPENING,
    LOOSE_ATX_HEADING,
    atx_heading,
    fence_line,
    outside_fences,
)


def _mark(m) -> str | None:
    return None if m is None else m["mark"]


def test_a_fence_line_is_read_with_each_readers_indentation_rule():
    assert [(m["indent"], m["mark"], m["info"]) for m in [fence_line("  ````ts title=a.ts")]] == [
        ("  ", "````", "ts title=a.ts")
    ]
    # CommonMark (fenced code): at most three spaces; a tab or a fourth space makes indented code
    assert [_mark(fence_line(x, spaces_only=True)) for x in ("   ```", "    ```", "\t```", "~~~")] == [
        "```",
        None,
        None,
        "~~~",
    ]
    # deprecation markers: at most three whitespace characters; version stamps: any (a fence inside a list item)
    assert _mark(fence_line("\t```")) == "```" and fence_line("    ```") is None
    assert _mark(fence_line("        ~~~~", max_indent=None)) == "~~~~"
    assert fence_line("``") is None and fence_line("text ```") is None


def test_an_atx_heading_gives_its_level_and_text():
    assert atx_heading("## Deprecated API ##  ") == (2, "Deprecated API")
    assert atx_heading("   ### C# notes") == (3, "C# notes")  # a hash inside the text is text
    assert atx_heading("# x#") == (1, "x#")  # no blank before it: not a closing sequence
    assert atx_heading("## ##") == (2, "")  # only a closing sequence: an empty heading
    # the heading's own id is no word of it (Docusaurus, MkDocs' attribute list, react.dev's MDX comment)
    assert atx_heading("## Old API { #old-api }") == (2, "Old API")
    assert atx_heading("### Usage {/*usage*/}") == (3, "Usage")
    assert atx_heading("## Setup {#setup} ##") == (2, "Setup")
    assert [atx_heading(x) for x in ("#", "#5", "####### seven", "    # code")] == [None] * 4
    # the chunker takes the text out of a heading line it was told is one, and leaves any other line whole
    assert ATX_CLOSING.sub("", ATX_OPENING.sub("", "#  Title {#id} #", count=1)) == "Title {#id}"
    assert ATX_CLOSING.sub("", ATX_OPENING.sub("", "> # Quoted", count=1)) == "> # Quoted"


def test_outside_fences_skips_fenced_code_to_its_closing_line():
    page = [
        "# Title\r",
        "````md",
        "```",  # shorter than the opener: still inside
        "# not a heading",
        "~~~~",  # another mark character: still inside
        "```` trailing",  # text after the mark: not a closer
        "````",
        "after",
        "~~~",
        "never closed",
    ]
    assert list(outside_fences(page)) == [(0, "# Title"), (7, "after")]


def test_release_notes_read_headings_loosely():
    m = LOOSE_ATX_HEADING.match("### Compact\xa0")
    assert m and (m["hashes"], m["text"]) == ("###", "Compact")
    assert LOOSE_ATX_HEADING.match("## Fixes#")["text"] == "Fixes"
    assert LOOSE_ATX_HEADING.match("  ## Indented") is None and atx_heading("  ## Indented") == (2, "Indented")
