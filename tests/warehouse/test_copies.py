"""Copies across sources (warehouse/copies.py, issue 43 item 2b): a passage whose normalised text nearly equals a
passage of another source is marked as a copy of the original (higher attribution tier, then the earlier first
commit); short passages, passages of one source and merely related ones are not."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pyarrow as pa

from trustindex.query.candidates import collapse_order
from trustindex.query.copies import copy_groups, copy_rows, with_originals
from trustindex.schemas.tables import table_from_rows
from trustindex.warehouse.copies import (
    IDENTICAL,
    JACCARD,
    MIN_WORDS,
    NEAR_DUPLICATE,
    find_copies,
    jaccard,
    normalised_words,
    shingles,
)

GUIDE = (
    "Run the proof server locally with Docker before you deploy a contract. The wallet sends each transaction to "
    "the proof server, which computes the zero knowledge proof on your machine so that private inputs never leave "
    "it. Start it with docker run and map port 6300, then point the wallet's settings at the local address."
)
OTHER = (
    "The indexer serves a GraphQL API over the chain's blocks, transactions and contract actions. Subscribe to "
    "contract actions to follow a deployed contract's state as new blocks arrive, and query past blocks by height "
    "or hash when your application starts."
)


def _snapshot(passages: list[tuple[str, str, str, str, datetime]]):
    """Tables for (source, path, tier, text, created) passages, one document each."""
    chunks, docs, attribution = [], [], []
    for n, (source, path, tier, text, created) in enumerate(passages):
        doc = f"d{n}"
        chunks.append({"chunk_id": f"c{n}", "doc_id": doc, "source": source, "path": path, "ordinal": 0, "text": text})
        docs.append({"doc_id": doc, "source": source, "path": path, "created": created})
        attribution.append({"doc_id": doc, "tier": tier})
    return (
        table_from_rows("chunks", chunks),
        table_from_rows("documents", docs),
        table_from_rows("attribution", attribution),
    )


OLD, NEW = datetime(2024, 3, 1, tzinfo=UTC), datetime(2026, 1, 5, tzinfo=UTC)


def test_a_near_copy_in_another_source_yields_to_the_higher_tier_whatever_its_age():
    edited = GUIDE.replace("before you deploy", "before you ship") + " Fork notes: none."
    assert JACCARD <= jaccard(shingles(normalised_words(GUIDE)), shingles(normalised_words(edited))) < 1.0
    copies = find_copies(
        *_snapshot(
            [
                ("community-kit", "guides/proof-server.md", "community", edited, OLD),  # older, but community
                ("midnight-docs", "docs/guides/proof-server.mdx", "foundation", GUIDE, NEW),
                ("midnight-docs", "docs/indexer.mdx", "foundation", OTHER, NEW),
            ]
        )
    ).to_pylist()
    assert len(copies) == 1
    c = copies[0]
    assert (c["chunk_id"], c["copy_of"], c["method"]) == ("c0", "c1", NEAR_DUPLICATE)
    assert JACCARD <= c["similarity"] < 1.0


def test_between_equal_tiers_the_earlier_first_commit_is_the_original():
    copies = find_copies(
        *_snapshot(
            [
                ("fork", "docs/run.md", "partner", GUIDE.upper(), NEW),  # the same words in other case: identical
                ("sdk", "README.md", "partner", GUIDE, OLD),
            ]
        )
    ).to_pylist()
    assert copies == [{"chunk_id": "c0", "copy_of": "c1", "similarity": 1.0, "method": IDENTICAL}]


def test_short_related_and_same_source_passages_are_no_copies():
    short = " ".join(GUIDE.split()[: MIN_WORDS - 1])
    half = " ".join(GUIDE.split()[:30]) + " " + OTHER  # shares a sentence, not the passage
    tables = _snapshot(
        [
            ("a", "x.md", "foundation", short, OLD),
            ("b", "y.md", "foundation", short, NEW),
            ("a", "docs/guide.md", "foundation", GUIDE, OLD),
            ("a", "versioned/guide.md", "foundation", GUIDE, NEW),  # the same source's older version
            ("b", "notes.md", "community", half, NEW),
        ]
    )
    assert find_copies(*tables).num_rows == 0
    one_source = _snapshot([("a", "p.md", "foundation", GUIDE, OLD), ("a", "q.md", "foundation", GUIDE, NEW)])
    assert find_copies(*one_source).num_rows == 0


def test_a_search_folds_a_copy_into_its_originals_hit_and_brings_the_original_in():
    ids = pa.chunked_array([["c0", "c1", "c2", "c3"]])
    table = table_from_rows("copies", [{"chunk_id": "c2", "copy_of": "c0", "similarity": 0.9, "method": "m"}])
    copy_of = copy_rows(table, ids, 4)
    assert copy_of.tolist() == [-1, -1, 0, -1] and not copy_of.flags.writeable
    assert copy_rows(None, ids, 4).tolist() == [-1] * 4
    assert with_originals(np.array([1, 2]), copy_of).tolist() == [0, 1, 2]  # the copy's original joins the pool
    groups = copy_groups(np.arange(4), copy_of)
    assert groups.tolist() == [0, 1, 0, 3]
    rows = np.array([0, 1, 2, 3])
    # the copy ranks first: it waits for its original, whose hit lists it, at the original's own place
    at, also = collapse_order(groups, rows, np.array([2, 1, 0, 3]), copy_of)
    assert at.tolist() == [1, 0, 3] and also == [[], [2], []]
    # its original is not a candidate: the copy stands as its own hit
    at, also = collapse_order(groups, np.array([1, 2, 3]), np.array([1, 0, 2]), copy_of)
    assert at.tolist() == [1, 0, 2] and also is None  # no two candidates share a group: the order itself
