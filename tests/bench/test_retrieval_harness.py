"""bench/bench_retrieval.py's harness on the demo corpus (issue 43): every system ranks, every metric is scored, the
whole-page BM25 sees a page as one document, and the second corpus's section names what it measured."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.bench_retrieval import (
    METRICS,
    SYSTEMS,
    Baselines,
    evaluate,
    second_corpus_section,
    site_urls,
    summarise,
)
from bench.retrieval_corpora import REACT
from trustindex.calibration.judged import JudgedQuery

ZSWAP = "docs/concepts/zswap.md"  # the demo corpus's page on Zswap (examples/demo/midnight-docs)


@pytest.fixture(scope="module")
def rows(index):
    queries = [
        JudgedQuery("demo-1", "How do Zswap coin commitments and nullifiers work?", {ZSWAP: 2}, "concept"),
        JudgedQuery("demo-2", "What is a Zswap offer used for in an atomic swap?", {ZSWAP: 2}, "how-to"),
    ]
    return evaluate(index, queries, source="midnight-docs")


def test_every_system_is_scored_on_every_metric(rows):
    for row in rows:
        for system in SYSTEMS:
            assert set(row[system]) == {*METRICS, "top"}, system
            assert all(0.0 <= row[system][m] <= 1.0 for m in METRICS)
            assert len(row[system]["top"]) == len(set(row[system]["top"])) <= 10
        assert row["bm25s_pages"]["top"][0] == ZSWAP  # the one page about it, read whole
        assert row["bm25s_pages"]["mrr"] == 1.0 and row["bm25s_pages"]["ndcg"] == 1.0


def test_whole_page_bm25_holds_one_document_per_file(index):
    base = Baselines(index, "midnight-docs")
    assert base.page_bm25.scores["num_docs"] == len(base.paths) < len(base.texts)
    assert any(":" in p for p in base.paths)  # another source's file is named source:path


def test_the_second_corpus_section_shows_both_halves_beside_midnight(rows, index):
    summary = summarise(rows)
    midnight = {"queries": 262, "trustindex": {"ndcg": 0.849, "recall": 0.962}, "measured_at": "then", "load": 1.0}
    text = " ".join(second_corpus_section(replace(REACT, title="Demo"), summary, midnight, index))  # wrapped lines
    assert "| Midnight test (262) | trustindex | 0.849 | – | – | 0.962 |" in text  # unmeasured metrics say so
    split = rows[0]["split"]
    assert f"| Demo {split} (" in text and "--corpus react" in text
    cited, pages = site_urls(index)
    assert f"{pages} pages, {cited} of them cited with a site URL" in text
