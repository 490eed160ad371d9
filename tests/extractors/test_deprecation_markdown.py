"""Deprecation markers in Markdown/MDX (front matter, admonitions, sections) and path rules.

Snippets marked "real" are shaped like passages of the real Midnight docs (../shared/corpus/midnight-docs).
"""

from __future__ import annotations

import time

import pytest

from tests.kits.realdata import REAL_DOCS, needs_real_docs
from trustindex.extractors.base import FileContext
from trustindex.extractors.deprecation import MAX_REASON, markdown_deprecations, path_deprecations
from trustindex.extractors.markdown import extract_markdown

CORPUS = REAL_DOCS


def deprecations(text: str):
    ex = extract_markdown(text.encode("utf-8"), FileContext("src", "doc.mdx"))
    deps = markdown_deprecations(ex.front_matter, text, ex.chunks)
    assert ex.deprecations == deps  # extract_markdown records the same evidence
    return ex, deps


def summary(ex, deps):
    """(scope, marker, reason, first line of the chunk or None) for each deprecation."""
    return [
        (
            d.scope,
            d.marker,
            d.reason,
            None if d.chunk_ordinal is None else ex.chunks[d.chunk_ordinal].text.split("\n")[0],
        )
        for d in deps
    ]


WALLET_API = """---
title: Wallet API
displayed_sidebar: sidebar
---

# Wallet API

:::warning Deprecated
The Wallet API is deprecated. Wallet functionality is now handled through the [Wallet SDK](./wallet). \
Please migrate to the Wallet SDK for all wallet operations and integrations.
:::

---

import DynamicList from '@site/src/components/DynamicListMidnightWalletAPI';

<DynamicList />
"""  # real: docs/relnotes/midnight-wallet-api.mdx

QUERY_CONTEXT = """# Class: QueryContext

### partitionTranscripts()

> **partitionTranscripts**(`calls`, `params`): `PartitionedTranscript`[]

Runs a set of calls and partitions the transcripts.

#### Deprecated

Please use the ledger's `partitionTranscripts` instead.

***

### qualify()

Qualifies a coin.
"""  # real: .../compact-runtime/classes/QueryContext.md

DUMMY_ADDRESS = """# Variable: DUMMY\\_ADDRESS

> `const` **DUMMY\\_ADDRESS**: `string`

## Deprecated

Cannot handle [NetworkId](../enumerations/NetworkId.md)s, use
[dummyContractAddress](../functions/dummyContractAddress.md) instead.
"""  # real: .../compact-runtime/variables/DUMMY_ADDRESS.md

DAPP_CONNECTOR_4 = """# DApp Connector API v4.0.0 release notes

## Deprecations

Here is a list of deprecated features in this release.

### Prover server URI

- **Starts**: v4.0.0
- **Replacement**: `getProvingProvider()` method

---

## Breaking changes

Everything changed.
"""  # real: docs/relnotes/dapp-connector-api/dapp-connector-api-4-0-0.mdx

WALLET_4 = """# Wallet 4.0.0

### Deprecations

#### `.buildFromSeed` method is deprecated

   * **Impact:** The `.build` API is now effectively what `.buildFromSeed` was.
   * **Action Required:** Use `.build` instead

### Fixes

Fixed things.
"""  # real: main_versioned_docs/version-0.0.0/relnotes/wallet/wallet-4-0-0.mdx

GRAPHQL_ARG = """# Directive deprecated

#### [<code style={{ fontWeight: 'normal' }}>deprecated.<b>reason</b></code>](#)<Bullet />\
[<code style={{ fontWeight: 'normal' }}><b>String</b></code>](/midnight-indexer/types/scalars/string.mdx)

The reason text.
"""  # real: the indexer's GraphQL directive page

CASES = [
    (
        "front matter true",
        "---\ndeprecated: true\n---\n# T\n\nBody.\n",
        [("document", "front_matter", "front matter: deprecated: true", None)],
    ),
    (
        "front matter reason",
        "---\ndeprecated: Use the v2 guide instead.\n---\n# T\n\nBody.\n",
        [("document", "front_matter", "Use the v2 guide instead.", None)],
    ),
    ("front matter false", "---\ndeprecated: false\n---\n# T\n\nBody.\n", []),
    ("front matter 'no'", "---\ndeprecated: 'no'\n---\n# T\n\nBody.\n", []),
    ("real admonition", WALLET_API, [("chunk", "admonition", "The Wallet API is deprecated.", "# Wallet API")]),
    (
        "caution Legacy",
        "# T\n\n:::caution Legacy\nThis flow predates v2! Use the new one.\n:::\n",
        [("chunk", "admonition", "This flow predates v2!", "# T")],
    ),
    (
        "bracket title",
        "# T\n\n:::danger[Deprecated]\n\nRemoved in 3.0.\n\n:::\n",
        [("chunk", "admonition", "Removed in 3.0.", "# T")],
    ),
    ("title only", "# T\n\n:::warning Deprecated\n:::\n", [("chunk", "admonition", "Deprecated", "# T")]),
    ("note is not deprecation", "# T\n\n:::note\nThis is deprecated-free.\n:::\n", []),
    ("other title", "# T\n\n:::warning Important notice\nThe old API is deprecated.\n:::\n", []),
    (
        "blockquote",
        "# T\n\n> **Deprecated**: Use `foo2` instead. It is faster.\n",
        [("chunk", "admonition", "Deprecated: Use `foo2` instead.", "# T")],
    ),
    (
        "github alert",
        "# T\n\n> [!WARNING]\n> **Legacy:** kept for v1 users.\n",
        [("chunk", "admonition", "Legacy: kept for v1 users.", "# T")],
    ),
    ("plain quote is not", "# T\n\n> Legacy systems are hard to migrate.\n", []),
    (
        "real typedoc section",
        QUERY_CONTEXT,
        [("chunk", "section", "Please use the ledger's `partitionTranscripts` instead.", "#### Deprecated")],
    ),
    (
        "real variable section",
        DUMMY_ADDRESS,
        [
            (
                "chunk",
                "section",
                "Cannot handle NetworkIds, use dummyContractAddress instead.",
                "# Variable: DUMMY\\_ADDRESS",
            )
        ],
    ),
    (
        "real deprecations list",
        DAPP_CONNECTOR_4,
        [
            (
                "chunk",
                "section",
                "Here is a list of deprecated features in this release.",
                "# DApp Connector API v4.0.0 release notes",
            )
        ],
    ),  # the bare H1 goes down with its child
    (
        "heading names the thing",
        WALLET_4,
        [("chunk", "section", "`.buildFromSeed` method is deprecated", "# Wallet 4.0.0")],
    ),
    ("graphql argument heading", GRAPHQL_ARG, []),
    (
        "a heading's own id is no part of the reason",  # FastAPI gives every heading one
        "# Events\n\nIntro.\n\n## Alternative Events (deprecated) { #alternative-events-deprecated }\n\nOld.\n",
        [("chunk", "section", "Alternative Events (deprecated)", "# Events")],
    ),
    (
        "a deprecations section with its own id",  # react.dev's MDX comment id
        "# Upgrade\n\nIntro.\n\n## Deprecations {/*deprecations*/}\n\n* `render` has been deprecated.\n",
        [("chunk", "section", "`render` has been deprecated.", "# Upgrade")],
    ),
    ("heading in a fence", "# T\n\n```md\n## Deprecated\n\nOld stuff.\n```\n", []),
    ("admonition in a fence", "# T\n\n```md\n:::warning Deprecated\nOld.\n:::\n```\n", []),
]

# The wording of the 9 empty "## Deprecations" sections of the real corpus, and a few more.
NOTHING = [
    "None.",
    "N/A",
    "No deprecations in this release.",
    "This release does not introduce any deprecations.",
    "No deprecations are introduced in this release.",
    "None in this release.",
    "-",
    "",
    "n/a",
    "---",
    "*None.*",
    "- None",
]


@pytest.mark.parametrize("name,text,expected", CASES, ids=[c[0] for c in CASES])
def test_markdown_deprecations(name, text, expected):
    ex, deps = deprecations(text)
    assert summary(ex, deps) == expected


@pytest.mark.parametrize("body", NOTHING)
def test_empty_deprecations_sections_are_not_deprecations(body):
    text = f"# Release notes\n\n## Deprecations\n\n{body}\n\n---\n\n## Breaking changes\n\nMany.\n"
    assert deprecations(text)[1] == []


def test_section_scope_covers_every_overlapping_chunk():
    items = "\n".join(f"- `old{i}()` is replaced by `new{i}()` " + "and more words " * 8 for i in range(12))
    text = "# API\n\nIntro.\n\n## Deprecated\n\n" + items + "\n\n## Current\n\nFine.\n"
    ex = extract_markdown(text.encode(), FileContext("s", "d.md", target_tokens=60, max_tokens=100))
    deps = markdown_deprecations(ex.front_matter, text, ex.chunks)
    marked = sorted(d.chunk_ordinal for d in deps)
    in_section = [c.ordinal for c in ex.chunks if c.end_line >= 5 and c.start_line <= 18]
    assert len(marked) > 2 and marked == in_section
    assert all("Fine." not in ex.chunks[o].text for o in marked)


def test_reasons_are_short():
    text = "# T\n\n:::warning Deprecated\n" + "word " * 300 + "\n:::\n"
    deps = deprecations(text)[1]
    assert len(deps) > 1  # the long admonition spans several chunks: each is marked
    assert all(len(d.reason) <= MAX_REASON and d.reason.endswith("…") for d in deps)
    fm = "---\ndeprecated: " + "x" * 500 + "\n---\n"
    (dep,) = deprecations(fm)[1]
    assert dep.scope == "document" and len(dep.reason) <= MAX_REASON


PATHOLOGICAL = [
    ("10k unclosed admonitions", ":::warning Deprecated\n" * 10_000),
    ("5k deprecated sections", "\n\n".join(f"## Deprecated\n\nUse v{i}." for i in range(5_000))),
    ("5k nested deprecated headings", "\n".join("#" * (1 + i % 6) + " Deprecated x" for i in range(5_000))),
    ("20k quoted markers", "> **Deprecated** x\n" * 20_000),
    ("unclosed fence hides markers", "```\n" + "## Deprecated\n\nOld.\n" * 5_000),
]


@pytest.mark.parametrize("name,text", PATHOLOGICAL, ids=[p[0] for p in PATHOLOGICAL])
def test_pathological_markers_are_bounded(name, text):
    ex = extract_markdown(text.encode(), FileContext("s", "x.md"))
    t0 = time.perf_counter()
    deps = markdown_deprecations(ex.front_matter, text, ex.chunks)
    assert time.perf_counter() - t0 < 5.0  # ~0.1-1.5 s here unloaded; room for a busy machine
    ordinals = [d.chunk_ordinal for d in deps]
    assert len(ordinals) == len(set(ordinals))  # one marker of a kind per chunk
    if name.startswith("unclosed fence"):
        assert deps == []
    else:
        assert len(deps) == len(ex.chunks)


@pytest.mark.parametrize(
    "path,patterns,hit",
    [
        (
            "main_versioned_docs/version-0.0.0/relnotes/dapp-examples-deprecated/dapp-examples-0-1-13.mdx",
            ["**/dapp-examples-deprecated/**"],
            True,
        ),
        (
            "main_versioned_docs/version-0.0.0/relnotes/dapp-examples-deprecated.mdx",
            ["**/dapp-examples-deprecated/**"],
            False,
        ),
        ("./dapp-examples-deprecated/a.md", ["**/dapp-examples-deprecated/**"], True),
        ("docs\\legacy\\a.md", ["docs/legacy/**"], True),
        ("docs/current/a.md", ["docs/legacy/**", "**/old/**"], False),
        ("docs/current/a.md", [], False),
    ],
)
def test_path_deprecations(path, patterns, hit):
    deps = path_deprecations(path, patterns)
    if hit:
        assert [(d.scope, d.marker, d.chunk_ordinal) for d in deps] == [("document", "path_rule", None)]
        assert patterns[0] in deps[0].reason
    else:
        assert deps == []


@needs_real_docs
def test_real_corpus_deprecations_sections():
    """Of the 11 real "## Deprecations" sections only 2 carry content (one is a template)."""
    flagged, sections = set(), 0
    for path in sorted(CORPUS.rglob("*.md*")):
        text = path.read_text("utf-8")
        if "## Deprecations" not in text:
            continue
        sections += 1
        ex = extract_markdown(text.encode(), FileContext("s", str(path)))
        for d in markdown_deprecations(ex.front_matter, text, ex.chunks):
            if "Deprecations" in ex.chunks[d.chunk_ordinal].heading_path:
                flagged.add(path.name)
    assert sections == 11
    assert flagged == {"dapp-connector-api-4-0-0.mdx", "RELEASE_NOTE_TEMPLATE.md"}
