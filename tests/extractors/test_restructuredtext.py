"""reStructuredText pages (Sphinx sites) chunked by their sections, as the specification reads titles."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.kits.gitutil import RepoBuilder
from trustindex.extractors.base import ExtractionError, FileContext, approx_token_count
from trustindex.extractors.restructuredtext import KIND, extract_restructuredtext
from trustindex.ingest.dispatch import kind_of
from trustindex.ingest.source import ingest_source
from trustindex.schemas.config import Identities, Publisher, Source
from trustindex.schemas.policy import Policy

PAGE = """\
.. _install:

==============
 Installation
==============

.. A comment the site never shows: secret-word-in-a-comment.

Requirements
============

You need Python 3.10 or newer. Install the package with :command:`pip`::

    pip install widgetlib
    pip install "widgetlib[extra]"

Options:

- ``--user`` installs for one user
- ``--upgrade`` upgrades an older install

Configuring the :class:`Widget <widgetlib.Widget>`
--------------------------------------------------

.. code-block:: python

   from widgetlib import Widget

   w = Widget(size=3)

.. deprecated:: 2.1
   Use :func:`widgetlib.make` instead of ``Widget(size=...)``.

Troubleshooting
===============

``ImportError: cannot import name 'Widget'``
   Upgrade to 2.0 or later.
"""


def _extract(text: str, target: int = 60):
    return extract_restructuredtext(text.encode(), FileContext("s", "docs/install.rst", target_tokens=target))


def test_sections_name_their_chunks_by_the_order_adornment_styles_appear():
    ex = _extract(PAGE)
    assert ex.kind == KIND == kind_of("docs/install.rst") and ex.warnings == []
    paths = [c.heading_path for c in ex.chunks]
    # the overlined "=" style came first: the document title; the underlined "=" is a second level, "-" a third
    assert ["Installation", "Requirements"] in paths
    assert ["Installation", "Requirements", "Configuring the Widget"] in paths  # a role reads as its text
    assert ["Installation", "Troubleshooting"] in paths
    troubleshooting = next(c for c in ex.chunks if c.heading_path[-1] == "Troubleshooting")
    assert "ImportError: cannot import name" in troubleshooting.text


def test_line_numbers_are_the_file_s_and_comments_and_targets_are_not_shown():
    ex = _extract(PAGE)
    lines = PAGE.split("\n")
    starts = [c.start_line for c in ex.chunks]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    for c in ex.chunks:
        assert 1 <= c.start_line <= c.end_line <= len(lines)
        shown = [ln for ln in c.text.split("\n") if ln.strip()]
        file_lines = set(lines[c.start_line - 1 : c.end_line])
        assert all(ln in file_lines for ln in shown)  # every shown line is one of the chunk's own lines
    text = "\n".join(c.text for c in ex.chunks)
    assert "secret-word-in-a-comment" not in text and ".. _install:" not in text
    covered = {r for c in ex.chunks for r in range(c.start_line, c.end_line + 1)}
    left_out = {i + 1 for i, ln in enumerate(lines) if ln.strip()} - covered
    assert left_out == {1}  # the target before the title; the comment is inside a chunk's range, not its text


def test_code_stays_whole_and_a_small_budget_splits_between_blocks_not_inside_them():
    ex = _extract(PAGE, target=25)
    literal = [c for c in ex.chunks if "pip install widgetlib" in c.text]
    assert len(literal) == 1 and 'pip install "widgetlib[extra]"' in literal[0].text
    code = [c for c in ex.chunks if "from widgetlib import Widget" in c.text]
    assert len(code) == 1 and "w = Widget(size=3)" in code[0].text


def test_the_deprecated_directive_marks_its_chunk_with_the_version_and_what_it_says():
    ex = _extract(PAGE)
    [dep] = ex.deprecations
    marked = ex.chunks[dep.chunk_ordinal]
    assert dep.scope == "chunk" and dep.marker == "admonition"
    assert dep.reason == "deprecated since 2.1: Use widgetlib.make instead of Widget(size=...)."
    assert ".. deprecated:: 2.1" in marked.text


def test_tables_transitions_and_short_underlines_are_not_titles():
    page = (
        "Guide\n=====\n\nIntro text.\n\n----------\n\nMore text.\n\n"
        "=====  =====\nName   Meaning\n=====  =====\nA      first\n=====  =====\n\n"
        "Not a title because the line is long\n---\n\nEnd.\n"
    )
    ex = _extract(page)
    assert {tuple(c.heading_path) for c in ex.chunks} == {("Guide",)}


def test_bytes_that_are_not_utf8_fail_with_the_offset():
    with pytest.raises(ExtractionError, match="invalid UTF-8 at byte offset 6"):
        extract_restructuredtext(b"Title\n\xff\n", FileContext("s", "docs/bad.rst"))


def test_a_sphinx_source_ingests_its_pages_by_section(tmp_path: Path):
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit({"docs/install.rst": PAGE, "docs/index.rst": "Widgetlib\n=========\n\nWelcome.\n"}, "docs")
    src = Source("lib", str(tmp_path / "repo"), "main", "p", include=("docs/**/*.rst",), exclude=())
    ids = Identities(publishers={"p": Publisher("p", "Lib Maintainers", "foundation")})
    result = ingest_source(src, tmp_path / "data", ids, [], Policy.from_dict({}), approx_token_count)

    report = {r["path"]: r for r in result.tables["ingest_report"].to_pylist()}
    assert {p: r["status"] for p, r in report.items()} == {"docs/install.rst": "ingested", "docs/index.rst": "ingested"}
    kinds = {r["path"]: r["kind"] for r in result.tables["documents"].to_pylist()}
    assert kinds == {"docs/install.rst": KIND, "docs/index.rst": KIND}
    paths = [c["heading_path"] for c in result.tables["chunks"].to_pylist() if c["path"] == "docs/install.rst"]
    assert all(p and p[0] == "Installation" for p in paths)
    deps = result.tables["deprecations"].to_pylist()
    assert [d["marker"] for d in deps] == ["admonition"] and deps[0]["reason"].startswith("deprecated since 2.1")


API_PAGE = """\
API
===

.. class:: widgetlib.Widget

    A widget that draws itself on the screen it was given, at the size it was given.

.. class:: widgetlib.OldWidget

    .. deprecated:: 3.2
        Merged with :class:`Widget`. This alias will be removed in 4.0.

.. function:: widgetlib.make(size)

    Make a widget of ``size``, drawn on the default screen, and return it to the caller.
"""


def test_a_deprecated_directive_nested_in_an_api_entry_marks_only_a_chunk_that_is_mostly_that_entry():
    packed = _extract(API_PAGE, target=200)  # every entry in one chunk: the others are not deprecated
    assert len(packed.chunks) == 1 and packed.deprecations == []
    alone = _extract(API_PAGE, target=30)  # the entry gets a chunk of its own: that chunk is marked
    [dep] = alone.deprecations
    assert "widgetlib.OldWidget" in alone.chunks[dep.chunk_ordinal].text
    assert "widgetlib.make" not in alone.chunks[dep.chunk_ordinal].text
    assert dep.reason == "deprecated since 3.2: Merged with Widget. This alias will be removed in 4.0."


_RST_LINES = st.sampled_from(
    [
        "",
        "Title",
        "=====",
        "-----",
        "~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~",
        ".. note::",
        ".. deprecated:: 1.0",
        ".. code-block:: python",
        ".. _target:",
        ".. a comment",
        "   indented body line with words",
        "        deeper indented line",
        "A paragraph that ends in a literal block::",
        "- a list item",
        "#. an enumerated item",
        "plain words about the widget and its screen",
        "x" * 300,
    ]
)


@settings(max_examples=120, deadline=None)
@given(st.lists(_RST_LINES, max_size=60), st.integers(min_value=8, max_value=80))
def test_any_mix_of_rst_lines_keeps_the_chunk_invariants(rows, target):
    text = "\n".join(rows)
    ctx = FileContext("s", "docs/p.rst", max_tokens=max(target, 16), target_tokens=target)
    ex = extract_restructuredtext(text.encode(), ctx)
    lines = text.split("\n")
    last = 0
    for n, c in enumerate(ex.chunks):
        assert c.ordinal == n and 1 <= c.start_line <= c.end_line <= len(lines) and c.start_line >= last
        assert c.token_count <= ctx.max_tokens and c.text.strip()
        last = c.start_line
    for d in ex.deprecations:
        assert 0 <= d.chunk_ordinal < len(ex.chunks) and d.reason.startswith("deprecated")
