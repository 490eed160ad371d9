"""How much of a page is about the question, and problem sections for problem reports (issue 43,
query/page_focus.py): two page terms, off by default (no hit shows them), that when weighted every hit shows with
its value and policy weight, that explain.py reproduces, and whose values follow their stated definitions."""

from __future__ import annotations

import math

import pytest

from trustindex.query.explain import check, formula_lines
from trustindex.schemas.embedded_text import embed_text
from trustindex.schemas.lexical import tokenize
from trustindex.schemas.policy import Policy
from trustindex.schemas.question_form import names_problem_section, reports_problem
from trustindex.schemas.response import validate_response

FOCUS_ON = Policy.from_dict({"fusion": {"page_focus_weight": 0.2, "focus_share": 0.6, "problem_section_weight": 0.05}})
QUERY = "How do I run the proof server with Docker and check its health?"


@pytest.mark.parametrize(
    ("question", "problem"),
    [
        ("why does my component render twice in development", True),
        ("deploying the contract fails with mismatched verifier keys", True),
        ("getNetworkId() throws Network ID has not been configured", True),
        ("the screen doesn't update after I set state", True),
        ("How do I install the Compact compiler?", False),
        ("what is the block time on Midnight", False),
    ],
)
def test_a_question_reports_a_problem_by_its_own_wording(question, problem):
    assert reports_problem(question) is problem


def test_a_section_about_problems_is_named_by_its_headings_or_its_file():
    assert names_problem_section(["useState", "Troubleshooting", "My initializer runs twice"], "reference/useState.md")
    assert names_problem_section(["Proof server", "Common issues"], "docs/proof-server.md")
    assert names_problem_section(["Install"], "docs/troubleshoot/faq.mdx")
    assert names_problem_section(["Fix version mismatch errors"], "docs/a.mdx")
    assert not names_problem_section(["Install the toolchain", "Set up the proof server"], "docs/install.mdx")
    assert not names_problem_section(None, "docs/getting-started/hello-world.mdx")


def test_off_by_default_no_hit_shows_the_terms(index):
    assert index.policy.fusion.page_focus_weight == 0 and index.policy.fusion.problem_section_weight == 0
    for h in index.search(QUERY, k=10)["hits"]:
        assert not {"page_focus", "problem_section"} & set(h["ranking_terms"]["page"])


def _focus(index, tokens: list[str], path: str, share: float) -> float:
    """The share of the page's passages holding ``share`` of the query's idf-weighted terms, read from what the
    lexical index reads of each (its heading path, symbol, file and text: schemas/embedded_text.py)."""
    d = index.data
    lexical = d.lexical_indexes.text
    idf = {}
    for t in dict.fromkeys(t for t in tokens if t in lexical.vocab):
        df = lexical.df(lexical.vocab[t])
        idf[t] = math.log(1 + (lexical.n_docs - df + 0.5) / (df + 0.5))
    rows = [i for i in range(d.passages.n) if d.pages.document(d.passages.chunk_doc[i]).path == path]
    columns = [d.passages.chunks.take(c, rows) for c in ("heading_path", "symbol_path")]
    texts = [
        embed_text(hp or [], sp, path, text) for hp, sp, text in zip(*columns, d.passages.texts(rows), strict=True)
    ]
    held = [sum(w for t, w in idf.items() if t in set(tokenize(text))) for text in texts]
    return sum(h >= share * sum(idf.values()) - 1e-9 for h in held) / len(rows)


def test_weighted_every_hit_shows_them_the_order_is_reproduced_and_the_focus_is_as_defined(index):
    index.reload_policy(FOCUS_ON)
    try:
        r = index.search(QUERY, k=10)
        validate_response(r)
        assert check(r, FOCUS_ON) == []
        tokens = tokenize(QUERY)
        focus = {}
        for h in r["hits"]:
            page = h["ranking_terms"]["page"]
            assert page["page_focus"]["weight"] == 0.2 and page["problem_section"]["weight"] == 0.05
            assert page["problem_section"]["value"] == 0  # the question reports no problem
            focus[h["provenance"]["path"]] = page["page_focus"]["value"]
            assert "page focus" in " ".join(formula_lines(h))
        for path, value in focus.items():
            assert value == pytest.approx(_focus(index, tokens, path, 0.6), abs=1e-6), path
        assert max(focus.values()) > 0 and min(focus.values()) < max(focus.values())
        # the proof server page is the one about the question: most of its passages keep to its terms
        assert focus["docs/guides/proof-server.md"] == max(focus.values())
    finally:
        index.reload_policy(None)


def test_a_problem_report_lifts_a_section_named_for_problems_and_only_then(index):
    index.reload_policy(FOCUS_ON)
    try:
        question = "the proof server fails to start with an error, why?"
        r = index.search(question, k=10)
        assert check(r, FOCUS_ON) == []
        for h in r["hits"]:
            named = names_problem_section(h["provenance"]["heading_path"], h["provenance"]["path"])
            assert h["ranking_terms"]["page"]["problem_section"]["value"] == (1.0 if named else 0.0)
    finally:
        index.reload_policy(None)
