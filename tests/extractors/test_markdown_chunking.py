"""extract_markdown: heading-scoped chunks of Markdown/MDX, checked on the real corpus."""

from __future__ import annotations

import random
import re
import time

import pytest

from tests.kits.realdata import REAL_DOCS, needs_real_docs
from trustindex.extractors.base import ExtractionError, FileContext
from trustindex.extractors.markdown import extract_markdown

CORPUS = REAL_DOCS
needs_corpus = needs_real_docs


@pytest.fixture(scope="module")
def count_tokens():
    from trustindex.encoder.tokens import token_counter

    return token_counter()  # the production counter: the model's WordPiece tokenizer, whole texts


def ctx(path="doc.md", count=None, **kw):
    return FileContext("src", path, **({"count_tokens": count} if count else {}), **kw)


def chunks_of(text: str, path="doc.md", **kw):
    return extract_markdown(text.encode("utf-8"), ctx(path, **kw)).chunks


# -- decoding ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data,fragment",
    [
        (b"# ok\n\xff\xfe rest", "invalid UTF-8 at byte offset 5"),
        (b"abc\x00def", "NUL byte at byte offset 3"),
        (b"\xef\xbb\xbfab\x00", "NUL byte at byte offset 5"),  # offsets count the BOM
        (b"caf\xc3", "invalid UTF-8 at byte offset 3"),  # truncated sequence
        (b"\xed\xa0\x80", "invalid UTF-8 at byte offset 0"),  # encoded surrogate
    ],
)
def test_non_text_raises_with_offset(data, fragment):
    with pytest.raises(ExtractionError, match=re.escape(fragment)):
        extract_markdown(data, ctx())


def test_bom_is_fine():
    ex = extract_markdown(b"\xef\xbb\xbf# Title\n\nBody text.\n", ctx())
    assert [c.text for c in ex.chunks] == ["# Title\n\nBody text."]
    assert ex.chunks[0].heading_path == ["Title"]


@pytest.mark.parametrize(
    "text",
    ["", "\n\n  \n", "---\ntitle: Only front matter\n---\n", "---\ntitle: x\n---\n\n\n"],
)
def test_nothing_to_chunk(text):
    ex = extract_markdown(text.encode(), ctx())
    assert ex.chunks == []


# -- structure ------------------------------------------------------------------------------

DOC = """---
sidebar_label: Guide
---

Intro paragraph before any heading.

Guide
=====

## Install

Run the installer and wait for it to finish before you continue with anything else.
It prints a summary.

## Usage {#usage}

### Call {/*call*/}

Call the API.
Deep text.

### Errors { #errors }

#### Codes {: #codes .wide }

The codes.

## Map\\<key_type, value_type> {#map}

A backslash-escaped character is itself, not markup.
"""


def test_heading_paths_and_original_line_numbers():
    chunks = chunks_of(DOC, target_tokens=30, max_tokens=60)
    got = [(c.heading_path, c.start_line, c.end_line, c.text.splitlines()[0]) for c in chunks]
    assert got == [
        # the tiny intro folds into the bare H1, which goes down with its first child;
        # over target, so packing splits before the H1: a heading starts a chunk
        (["Guide"], 5, 5, "Intro paragraph before any heading."),
        (["Guide", "Install"], 7, 13, "Guide"),
        # a bare heading merges into its child; the chain names the chunk
        # explicit ids, Docusaurus's {#id}, react.dev's MDX comment {/*id*/} and the attribute lists of MkDocs
        # (Python-Markdown's attr_list: `{ #id }`, `{: #id .class }`), are no words of the heading
        (["Guide", "Usage", "Call"], 15, 20, "## Usage {#usage}"),
        (["Guide", "Usage", "Errors", "Codes"], 22, 26, "### Errors { #errors }"),
        # CommonMark's escapes: "Map\<key_type, value_type>" is a type, not a tag (it read "Map\")
        (["Guide", "Map<key_type, value_type>"], 28, 30, "## Map\\<key_type, value_type> {#map}"),
    ]
    lines = DOC.split("\n")
    for c in chunks:  # text is the passage as written at those lines
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])


@pytest.mark.parametrize(
    "text,path",
    [
        ("# First H1\n\nbody\n\n## Sub\n\nmore\n", ["First H1", "Sub"]),
        ("---\ntitle: FM\n---\n# Other\n\nx\n## Sub\n\nmore\n", ["FM", "Other", "Sub"]),
        ("## Only H2\n\nbody\n\n## Sub\n\nmore\n", ["Sub"]),  # no title: siblings stay siblings
        ("lead line\n\n## Only H2\n\nbody\n", ["Only H2"]),
        ("# [Link **title**](x.md) `code`\n\nbody\n\n## Sub\n\nmore\n", ["Link title code", "Sub"]),
    ],
)
def test_document_title(text, path):
    chunks = chunks_of(text, target_tokens=3, max_tokens=40)
    assert chunks[-1].heading_path == path
    assert all(c.heading_path for c in chunks)  # content above the first heading is named too


def test_tiny_sections_merge_with_following_sibling():
    text = "# T\n\n## A\n\nshort.\n\n## B\n\nalso short.\n\n## C\n\n" + "long words " * 60 + "\n"
    chunks = chunks_of(text, target_tokens=60, max_tokens=120)
    assert chunks[0].text.startswith("# T") and "## A" in chunks[0].text and "## B" in chunks[0].text
    assert "## C" not in chunks[0].text
    assert chunks[0].heading_path == ["T"]  # T -> A -> B is not one branch: the first path names it


def test_empty_heading_merges_into_child():
    chunks = chunks_of("# T\n\n## API\n\n### foo\n\nDoes foo.\n", target_tokens=50)
    assert len(chunks) == 1 and chunks[0].heading_path == ["T", "API", "foo"]


def test_long_section_splits_at_blocks_and_keeps_fences_whole():
    fence = "```ts\n" + "\n".join(f"const v{i} = compute({i});" for i in range(12)) + "\n```"
    paras = [" ".join(f"word{i}x{j}" for j in range(25)) for i in range(4)]
    text = "# T\n\n## Big\n\n" + "\n\n".join(paras[:2] + [fence] + paras[2:]) + "\n"
    chunks = chunks_of(text, target_tokens=50, max_tokens=120)
    assert len(chunks) > 3
    assert any(c.text == fence for c in chunks)  # over target, under max: whole
    assert all(c.token_count <= 120 for c in chunks)
    assert all(c.heading_path == ["T", "Big"] for c in chunks)
    assert chunks[0].text.startswith("# T\n\n## Big")  # the heading is not left alone


def test_fence_longer_than_max_splits_by_lines():
    body = "\n".join(f"line_{i} = value_{i} + other_{i}" for i in range(80))
    text = "# T\n\n```py\n" + body + "\n```\n"
    chunks = chunks_of(text, target_tokens=40, max_tokens=60)
    assert len(chunks) > 5 and all(c.token_count <= 60 for c in chunks)
    covered = {n for c in chunks for n in range(c.start_line, c.end_line + 1)}
    assert covered >= set(range(1, 84)) - {2}


def test_long_list_splits_at_items():
    items = "\n".join(f"- item {i} " + "detail " * 12 for i in range(20))
    chunks = chunks_of("# T\n\n" + items + "\n", target_tokens=60, max_tokens=100)
    assert len(chunks) > 3
    assert all(c.text.startswith(("- item", "# T")) for c in chunks)


def test_admonitions_stay_in_text_and_together():
    text = "# T\n\n" + "filler words " * 40 + "\n\n:::warning Deprecated\n\nUse `foo2`.\n\nMore.\n:::\n"
    chunks = chunks_of(text, target_tokens=40, max_tokens=80)
    adm = [c for c in chunks if ":::warning Deprecated" in c.text]
    assert len(adm) == 1 and adm[0].text.endswith("More.\n:::")


# -- MDX ---------------------------------------------------------------------------------------

MDX = """---
title: Tabs page
---
import Tabs from '@theme/Tabs';
import TabItem from "@theme/TabItem";
import {
  Thing,
} from '@site/src/components/Thing';

export const Badge = (props) => (
  <>
    <span className={props.class}>{props.text}</span>
  </>
);

# Tabs page

<Tabs>
<TabItem value="a" label="A">

Text inside a tab.

</TabItem>
</Tabs>

import the wallet key before you start.

```compact
import CompactStandardLibrary;
export circuit f(): [] {}
```
"""


def test_mdx_esm_dropped_jsx_text_kept_line_numbers_true():
    chunks = chunks_of(MDX, path="page.mdx")
    text = "\n".join(c.text for c in chunks)
    assert "@theme/Tabs" not in text and "Badge" not in text and "Thing" not in text
    assert "Text inside a tab." in text and '<TabItem value="a" label="A">' in text
    assert "import the wallet key before you start." in text  # prose, not ESM
    assert "import CompactStandardLibrary;" in text and "export circuit" in text  # in a fence
    assert chunks[0].start_line == 16 and chunks[0].text.startswith("# Tabs page")
    lines = MDX.split("\n")
    for c in chunks:
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])


@needs_corpus
def test_real_mdx_page_drops_component_exports():
    page = CORPUS / "api-reference/midnight-indexer/types/unions/unshielded-transactions-event.mdx"
    ex = extract_markdown(page.read_bytes(), ctx(str(page)))
    assert ex.front_matter["title"] == "UnshieldedTransactionsEvent"
    assert ex.chunks[0].start_line == 74
    assert ex.chunks[0].text.startswith("An event of the unshielded transactions subscription.")
    assert all("useState" not in c.text for c in ex.chunks)


# -- pathological input ---------------------------------------------------------------------

PATHOLOGICAL = [
    ("10k nested list markers", "- " * 10_000 + "x\n"),
    ("2k indented list levels", "\n".join("  " * i + "- item" for i in range(2_000))),
    ("10k nested quotes", ">" * 10_000 + " x\n"),
    ("5 MB line of words", "word " * 1_000_000),
    ("5 MB line without spaces", "a" * 5_000_000),
    ("5k headings", "\n\n".join(f"{'#' * (1 + i % 6)} H{i}\ntext {i}" for i in range(5_000))),
    ("unclosed fence", "# T\n```\n" + "code line\n" * 20_000),
    ("200k lines", "lorem ipsum dolor sit amet\n" * 200_000),
]


@pytest.mark.parametrize("name,text", PATHOLOGICAL, ids=[p[0] for p in PATHOLOGICAL])
def test_pathological_input_is_bounded(name, text):
    t0 = time.perf_counter()
    ex = extract_markdown(text.encode(), ctx())
    assert time.perf_counter() - t0 < 5.0  # ~0.1-1.5 s here unloaded; room for a busy machine
    assert ex.chunks, name
    assert all(0 < c.token_count <= 256 and len(c.text) <= 4096 for c in ex.chunks)


def test_pathological_input_warns_when_it_stops_early():
    ex = extract_markdown(("lorem ipsum dolor sit amet\n" * 200_000).encode(), ctx())
    assert any("line windows" in w for w in ex.warnings)
    assert any("not indexed" in w for w in ex.warnings)


# -- the real corpus --------------------------------------------------------------------------


def _esm_lines(lines: list[str]) -> set[int]:
    """1-based lines of blank-line-delimited paragraphs that start with import/export."""
    out, i = set(), 0
    while i < len(lines):
        if re.match(r"^(import|export)\b", lines[i]) and (i == 0 or not lines[i - 1].strip()):
            while i < len(lines) and lines[i].strip():
                out.add(i + 1)
                i += 1
        i += 1
    return out


@needs_corpus
def test_corpus_sample_invariants(count_tokens):
    files = sorted(CORPUS.rglob("*.md")) + sorted(CORPUS.rglob("*.mdx"))
    sample = random.Random(20260).sample(files, 200)
    total = 0
    for path in sample:
        data = path.read_bytes()
        ex = extract_markdown(data, ctx(str(path), count_tokens))
        lines = data.decode("utf-8-sig").split("\n")
        lines = [ln.rstrip("\r") for ln in lines]
        has_headings = any(re.match(r"^#{1,6} ", ln) for ln in lines)
        covered = set()
        assert ex.warnings == [], (path, ex.warnings)
        assert [c.ordinal for c in ex.chunks] == list(range(len(ex.chunks)))
        for c in ex.chunks:
            assert c.token_count == count_tokens(c.text) <= 256, (path, c.start_line)
            assert 1 <= c.start_line <= c.end_line <= len(lines), (path, c)
            span = lines[c.start_line - 1 : c.end_line]
            assert c.text.split("\n")[0] in span[0] and c.text.split("\n")[-1] in span[-1]
            assert all(t in span for t in c.text.split("\n")[1:-1]), (path, c.start_line)
            if has_headings:
                assert c.heading_path, (path, c.start_line)
            covered.update(range(c.start_line, c.end_line + 1))
            total += 1
        fm_end = 0
        if lines and lines[0].strip() == "---" and ex.front_matter:
            fm_end = next(i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")) + 1
        uncovered = {n for n in range(fm_end + 1, len(lines) + 1) if lines[n - 1].strip()} - covered - _esm_lines(lines)
        assert not uncovered, (path, sorted(uncovered)[:5])
    assert total > 800
