"""Property-based tests of the Markdown chunker (issue item 7): any input, the chunk invariants hold.

The invariants are the ones ``extractors/markdown.py`` documents: ExtractionError only for
bytes that are not text; every chunk within the file's lines, in order, at most
``ctx.max_tokens`` by the counter the context gives (and ``16 × max_tokens`` characters);
every non-blank body line inside some chunk unless a warning says what was not indexed
(front matter and MDX import/export statements are not body text).
"""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trustindex.encoder.tokens import token_counter
from trustindex.extractors.base import ExtractionError, FileContext, approx_token_count
from trustindex.extractors.frontmatter import split_front_matter
from trustindex.extractors.markdown import MAX_CHUNK_CHARS_PER_TOKEN, extract_markdown

# Bounded so the file stays well under 20 s; HYPOTHESIS_EXAMPLES=2000 searches harder.
SETTINGS = settings(
    max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", 80)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

_count = token_counter()


def wordpiece(text: str) -> int:
    """The production counter: the MiniLM tokenizer, [CLS]/[SEP] included."""
    return _count(text)


def chars(text: str) -> int:
    """A counter unlike WordPiece (no whitespace pre-tokenization), with a 2-token overhead."""
    return len(text) // 3 + 2


COUNTERS = {"wordpiece": wordpiece, "approx": approx_token_count, "chars": chars}

WORDS = [
    "the",
    "Compact",
    "ledger",
    "circuit",
    "witness",
    "zswap",
    "`code`",
    "**bold**",
    "[link](http://x.y/z)",
    "naïve",
    "日本語",
    "Ωμέγα",
    "<Tabs>",
    "{props}",
    "a" * 120,
    "x" * 9,
    "—",
    "\t",
]
word_seq = st.lists(st.sampled_from(WORDS), min_size=1, max_size=30).map(" ".join)
LINE = st.one_of(
    st.just(""),
    st.just(""),
    word_seq,
    st.builds(lambda n, w: "#" * n + " " + w, st.integers(1, 7), word_seq),
    st.sampled_from(
        [
            "===",
            "---",
            "***",
            "```",
            "```ts",
            "~~~",
            ":::note",
            ":::",
            "> quote",
            "| a | b |",
            "|---|---|",
            "<details>",
            "</details>",
            "    indented code",
            "{/* mdx comment */}",
            "---\ntitle: T\n---",
            "* item",
            "1. item",
            "  - nested",
            "+++",
        ]
    ),
    st.builds(lambda m, w: m + " " + w, st.sampled_from(["-", "*", "1.", ">", "  -", "   *"]), word_seq),
    st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=40),
)
documents = st.lists(LINE, max_size=60).map("\n".join)
front = st.sampled_from(
    ["", "---\ntitle: Page\n---\n", "---\ntitle: [unclosed\n---\n", "---\n- a list\n---\n", "\ufeff---\nid: x\n---\n"]
)
contexts = st.builds(
    lambda name, mx, frac: (name, mx, max(1, int(mx * frac))),
    st.sampled_from(sorted(COUNTERS)),
    st.integers(12, 96),
    st.floats(0.3, 1.0),
)
_ESM = re.compile(r"^(?:import|export)\b")


def _run(text: str, ctx_spec) -> tuple:
    name, max_tokens, target = ctx_spec
    ctx = FileContext("src", "doc.mdx", count_tokens=COUNTERS[name], max_tokens=max_tokens, target_tokens=target)
    return ctx, extract_markdown(text.encode("utf-8"), ctx)


@SETTINGS
@given(st.binary(max_size=400), contexts)
def test_any_bytes_extract_or_raise_extraction_error(data, ctx_spec):
    name, max_tokens, target = ctx_spec
    ctx = FileContext("src", "doc.md", count_tokens=COUNTERS[name], max_tokens=max_tokens, target_tokens=target)
    try:
        ex = extract_markdown(data, ctx)
    except ExtractionError as exc:
        assert "byte offset" in str(exc)  # names where the bytes stop being text
        return
    assert all(c.token_count <= max_tokens for c in ex.chunks)


@SETTINGS
@given(front, documents, contexts)
def test_chunk_invariants(fm, body, ctx_spec):
    text = fm + body
    ctx, ex = _run(text, ctx_spec)
    lines = text.lstrip("\ufeff").split("\n")
    prev_end = 0
    for i, c in enumerate(ex.chunks):
        assert c.ordinal == i
        assert 1 <= c.start_line <= c.end_line <= len(lines), c
        assert c.start_line >= prev_end, "chunks out of order or overlapping"
        prev_end = c.end_line
        assert c.text.strip()
        assert ctx.count_tokens(c.text) == c.token_count <= ctx.max_tokens
        assert len(c.text) <= MAX_CHUNK_CHARS_PER_TOKEN * ctx.max_tokens
        window = "\n".join(lines[c.start_line - 1 : c.end_line])
        for piece in c.text.split("\n"):  # chunk text is the file's own text, nothing invented
            assert piece.strip() in window, (piece, window)
    again = extract_markdown(text.encode("utf-8"), ctx)
    assert [(c.start_line, c.end_line, c.text, c.heading_path) for c in again.chunks] == [
        (c.start_line, c.end_line, c.text, c.heading_path) for c in ex.chunks
    ]


@SETTINGS
@given(front, documents.filter(lambda t: not any(_ESM.match(ln) for ln in t.split("\n"))), contexts)
def test_every_body_line_is_covered(fm, body, ctx_spec):
    text = fm + body
    ctx, ex = _run(text, ctx_spec)
    if any("dropped" in w or "not indexed" in w for w in ex.warnings):
        return  # the chunker said what it left out
    lines = text.lstrip("\ufeff").split("\n")
    _fm, body_start, _w = split_front_matter(text)
    covered = set()
    for c in ex.chunks:
        covered.update(range(c.start_line, c.end_line + 1))
    missing = [n for n in range(body_start, len(lines) + 1) if lines[n - 1].strip() and n not in covered]
    assert not missing, (missing[:5], [lines[n - 1] for n in missing[:5]])


@pytest.mark.parametrize("name", sorted(COUNTERS))
def test_one_huge_line_is_split_under_the_bound(name):
    ctx = FileContext("src", "doc.md", count_tokens=COUNTERS[name], max_tokens=32, target_tokens=24)
    ex = extract_markdown((" ".join(["circuit"] * 3000) + "\n" + "z" * 5000).encode(), ctx)
    assert ex.chunks and all(COUNTERS[name](c.text) <= 32 for c in ex.chunks)
    assert {c.start_line for c in ex.chunks} == {1, 2} or any("dropped" in w for w in ex.warnings)
