"""One hit per page (issue 43, query/candidates.py fold_pages): k hits name k pages, a page's lower-ranked passages
(a partial's that it renders included) are listed under its hit, and a passage the content-risk rules flagged stays
a hit of its own."""

from __future__ import annotations

import numpy as np
import pytest

from trustindex.query.candidates import OrderedHit, fold_pages
from trustindex.query.explain import check
from trustindex.schemas.policy import Policy

QUESTIONS = (
    "How do I install the Compact compiler?",
    "How much memory does the proof server need?",
    "How do I claim the community airdrop?",
    "How do I deploy a contract?",
)


def test_a_page_heads_one_hit_and_its_next_passages_fold_under_it():
    rows = np.array([10, 11, 12, 13, 14, 15])
    page_of = np.zeros(16, dtype=np.int64)
    page_of[[10, 12, 13]] = 1  # page 1: rows 10, 12, 13
    page_of[[11, 15]] = 2
    page_of[14] = 3
    at, also = np.arange(6), [[], [7], [], [], [], []]  # the hits' positions in rows, and their identical copies
    assert fold_pages(at, also, rows, page_of, wanted=10, shown=1) == [
        OrderedHit(0, [], [2]),  # page 1's third passage (position 3) is past the one shown
        OrderedHit(1, [7], [5]),
        OrderedHit(4, [], []),
    ]
    # wanted counts pages; a page already shown still collects its passages after the last wanted page
    assert fold_pages(at, also, rows, page_of, wanted=2, shown=3) == [
        OrderedHit(0, [], [2, 3]),
        OrderedHit(1, [7], [5]),
    ]
    flagged = np.zeros(16, dtype=bool)
    flagged[12] = True  # flagged: a hit of its own, and no page-mate folds under it
    assert fold_pages(at, also, rows, page_of, wanted=10, shown=3, own_hit=flagged) == [
        OrderedHit(0, [], [3]),
        OrderedHit(1, [7], [5]),
        OrderedHit(2, [], []),
        OrderedHit(4, [], []),
    ]


@pytest.fixture(scope="module")
def passage_index(refreshed):
    from trustindex.query.index import Index

    return Index.open(data_dir=refreshed["data"], policy=Policy.from_dict({"fusion": {"one_hit_per_page": False}}))


def _page(h: dict) -> str:
    """The page a hit is cited at: a partial's is the page that renders it."""
    p = h["provenance"]
    return f"{p['source']}/{p['part_of'] or p['path']}"


def _risky(h: dict) -> bool:
    return h["factors"]["content_risk"]["status"] != "no_findings"


@pytest.mark.parametrize("question", QUESTIONS)
def test_k_hits_are_the_first_k_pages_of_the_passage_order(index, passage_index, question):
    by_page = index.search(question, k=5)
    by_passage = passage_index.search(question, k=1000)  # the whole pool: a page folds every candidate of it
    assert check(by_page, index.policy) == []
    files = [_page(h) for h in by_page["hits"] if not _risky(h)]
    assert len(files) == len(set(files))
    # the same order, read a page at a time: each page's best passage heads its hit, with the same scores
    first = {}
    for h in by_passage["hits"]:
        if not _risky(h):
            first.setdefault(_page(h), h)
    expected = list(first.values())[: len(files)]
    assert [h["chunk_id"] for h in by_page["hits"] if not _risky(h)] == [h["chunk_id"] for h in expected]
    for h in by_page["hits"]:
        if _risky(h):
            assert h["same_page"] == []
            continue
        mates = [h2 for h2 in by_passage["hits"] if _page(h2) == _page(h)]
        later = [m["chunk_id"] for m in mates if m["chunk_id"] != h["chunk_id"] and not _risky(m)]
        assert [p["chunk_id"] for p in h["same_page"]] == later[: index.policy.fusion.same_page_shown]
        assert all(p["ranking_score"] <= h["ranking_score"] for p in h["same_page"])


def test_the_check_names_a_page_that_heads_two_hits(index, passage_index):
    r = passage_index.search("How do I install the Compact compiler?", k=20)
    paths = [_page(h) for h in r["hits"]]
    assert len(paths) > len(set(paths)), "the demo's install question has two passages of one page"
    assert check(r, passage_index.policy) == []
    assert any("is of the page of hit" in p for p in check(r, index.policy))
    folded = index.search("How much memory does the proof server need?", k=5)
    assert check(folded, index.policy) == []
    hit = next(h for h in folded["hits"] if h["same_page"])
    hit["same_page"][0]["ranking_score"] = hit["ranking_score"] + 0.01  # a folded passage above its hit
    assert any("ranks above it" in p for p in check(folded, index.policy))


def test_a_flagged_passage_is_shown_with_its_warning_not_folded(index):
    r = index.search("How do I claim the community airdrop?", k=10)
    flagged = [h for h in r["hits"] if _risky(h)]
    assert flagged and flagged[0]["text"], "the phishing passage is a hit of its own, its warning shown"
    folded = {p["chunk_id"] for h in r["hits"] for p in h["same_page"]}
    assert not folded & {h["chunk_id"] for h in flagged}


def _fold_by_loop(hits, rows, page_of, wanted, shown, own_hit=None):
    """The rule as a loop over the order (fold_pages works it out on arrays)."""
    out, at = [], {}
    for j, also in hits:
        if own_hit is not None and own_hit[rows[j]]:
            if len(out) < wanted:
                out.append(OrderedHit(j, also, []))
            continue
        head = at.get(int(page_of[rows[j]]))
        if head is not None:
            if len(head.same_page) < shown:
                head.same_page.append(j)
        elif len(out) < wanted:
            at[int(page_of[rows[j]])] = OrderedHit(j, also, [])
            out.append(at[int(page_of[rows[j]])])
    return out


@pytest.mark.parametrize("seed", range(20))
def test_the_fold_on_arrays_is_the_loop_that_states_it(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    rows = rng.permutation(1000)[:n]
    page_of = rng.integers(0, int(rng.integers(1, 60)), size=1000)
    flagged = rng.random(1000) < 0.05
    at = rng.permutation(n)
    also = [[int(j) + 1000] if rng.random() < 0.1 else [] for j in at] if seed % 2 else None
    hits = [(int(j), also[i] if also else []) for i, j in enumerate(at)]
    for wanted, shown in ((1, 0), (5, 3), (10, 1), (400, 50)):
        for own in (None, flagged):
            assert fold_pages(at, also, rows, page_of, wanted, shown, own) == _fold_by_loop(
                hits, rows, page_of, wanted, shown, own
            )
