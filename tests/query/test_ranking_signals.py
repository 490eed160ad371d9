"""Field-aware lexical scoring and exact identifiers (issue 16 item 2), on small generated passages indexed by the
build's own BM25 writer: the page whose title names a term outranks a passage that only mentions it, and a query's
identifier ranks the page that defines it above pages that share its word pieces."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest

from trustindex.query.lexical import LexicalIndex
from trustindex.query.lexical_signals import lexical_signals
from trustindex.query.relevance import relevance
from trustindex.query.search_query import Words
from trustindex.schemas.embedded_text import embedding_input
from trustindex.schemas.lexical import identifier_tokens
from trustindex.schemas.policy import Policy
from trustindex.schemas.snapshot import BM25_DIR, BM25_FIELDS_DIR
from trustindex.warehouse.bm25 import build_bm25
from trustindex.warehouse.build import field_input, file_words

FILLER = "the network keeps blocks and peers in sync across nodes and validators every few seconds"
PASSAGES = [
    # (path, heading path, text)
    ("docs/witnesses.md", ["Witnesses"], f"A contract asks its DApp for private inputs. {FILLER}"),
    (
        "docs/overview.md",
        ["Overview", "Privacy"],
        "Witnesses, witnesses everywhere: the witnesses of a circuit and witnesses in TypeScript are mentioned "
        "here in passing, witnesses again.",
    ),
    ("api/functions/deployContract.md", ["deployContract"], f"Deploys a compiled contract and returns it. {FILLER}"),
    (
        "docs/deploy-guide.md",
        ["Deploying"],
        "Deploy a contract: deploy the contract, contract deploy steps, deploy contract twice, contract work.",
    ),
    ("docs/errors.md", ["Errors", "1010 Invalid Transaction"], f"The node rejected the transaction. {FILLER}"),
    ("docs/fees.md", ["Fees"], "An invalid transaction pays no fee; invalid transaction errors are common." * 2),
]


def chunks_table() -> pa.Table:
    return pa.table(
        {
            "path": [p for p, _h, _t in PASSAGES],
            "heading_path": [h for _p, h, _t in PASSAGES],
            "symbol_path": [None] * len(PASSAGES),
            "text": [t for _p, _h, t in PASSAGES],
        }
    )


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("signals")
    chunks = chunks_table()
    build_bm25(embedding_input(chunks), d / BM25_DIR)
    build_bm25(field_input(chunks), d / BM25_FIELDS_DIR)
    # the two indexes a search reads lexical signals from (query.reader.SnapshotData holds the same pair)
    return SimpleNamespace(lexical=LexicalIndex(d / BM25_DIR), field_lexical=LexicalIndex(d / BM25_FIELDS_DIR))


def ranked(data, query: str, **relevance_keys) -> list[str]:
    """Paths by relevance with every passage at the same cosine, so the lexical signals alone decide."""
    policy = Policy.from_dict({"relevance": relevance_keys})
    lex = lexical_signals(data, Words.of(query), policy)
    rel = relevance(np.full(len(PASSAGES), 0.5), lex.scores, policy, lex.nterms > 0, lex.identifier)
    return [PASSAGES[i][0] for i in np.argsort(-rel, kind="stable")]


def test_identifier_tokens_are_the_names_a_user_types_whole():
    assert identifier_tokens("CallTxFailedError thrown when calling circuit") == ["calltxfailederror"]
    assert identifier_tokens("ERR_UNSUPPORTED_DIR_IMPORT on import") == ["err_unsupported_dir_import"]
    assert identifier_tokens("1010 invalid transaction") == ["1010"]
    assert identifier_tokens("how does deployContract work") == ["deploycontract"]
    # plain words, capitalised words and shouted words are not identifiers
    assert identifier_tokens("How do I install the Compact compiler? NIGHT and DUST") == []


def test_file_words_name_the_page():
    assert file_words("docs/compact/reference/explicit-disclosure.mdx") == "explicit disclosure"
    assert file_words("docs/tutorials/counter/index.mdx") == "counter index"


def test_a_title_match_outranks_a_body_mention_only_with_field_weight(data):
    assert ranked(data, "witnesses", field_weight=0.0)[0] == "docs/overview.md"
    assert ranked(data, "witnesses", field_weight=1.0)[0] == "docs/witnesses.md"


def test_an_identifier_ranks_the_page_defining_it_first(data):
    q = "how does deployContract work"
    assert ranked(data, q)[0] == "docs/deploy-guide.md"  # its pieces deploy + contract dominate plain BM25
    assert ranked(data, q, identifier_weight=0.5)[0] == "api/functions/deployContract.md"


def test_an_error_code_is_its_own_signal(data):
    policy = Policy.from_dict({"relevance": {"identifier_weight": 0.5}})
    lex = lexical_signals(data, Words.of("1010 invalid transaction"), policy)
    assert lex.identifier is not None
    # only the page naming the code scores on the identifier signal
    assert [PASSAGES[i][0] for i in np.flatnonzero(lex.identifier > 0)] == ["docs/errors.md"]


def test_no_identifier_and_no_field_index_leave_plain_bm25(data):
    policy = Policy.from_dict({"relevance": {"field_weight": 1.0, "identifier_weight": 0.5}})
    plain = SimpleNamespace(lexical=data.lexical, field_lexical=None)  # a snapshot built before the field index
    lex = lexical_signals(plain, Words.of("witnesses in a circuit"), policy)
    expected, n = data.lexical.scores("witnesses in a circuit")
    assert lex.identifier is None and lex.nterms == n
    np.testing.assert_array_equal(lex.scores, expected)


def test_a_page_with_several_strong_passages_outranks_a_single_mention():
    from trustindex.query.score import support

    page = np.array([0, 0, 0, 1])  # three passages of a guide, one mention elsewhere
    own = np.array([0.50, 0.45, 0.40, 0.55])
    trust = np.ones(4)
    sup, lenders = support(own, trust, page, np.ones(4, dtype=bool), 2)
    keys = own + 0.5 * sup
    assert int(np.argmax(own)) == 3
    assert np.argsort(-keys).tolist()[:3] == [0, 1, 2]
    # the page's best passage counts its next two; the single mention borrows nothing
    assert sup[0] == pytest.approx(0.45 + 0.40) and lenders[0] == [1, 2]
    assert sup[2] == pytest.approx(0.50 + 0.45) and lenders[2] == [0, 1]
    assert sup[3] == 0.0 and lenders[3] == []


def test_support_cannot_launder_trust():
    from trustindex.query.score import support

    # a page whose best passage is flagged (it may not lend) and whose other mate has a third of the trust
    page = np.array([0, 0, 0])
    rel = np.array([0.9, 0.1, 0.6])
    trust = np.array([0.1, 0.6, 0.2])
    lender = np.array([False, True, True])
    sup, lenders = support(rel, trust, page, lender, 1)
    assert lenders[1] == [2] and sup[1] == pytest.approx(0.6 * 0.2 / 0.6)  # a low-trust lender lends its share
    assert lenders[2] == [1] and sup[2] == pytest.approx(0.1)  # a more trusted lender lends in full
    assert lenders[0] == [2] and sup[0] == pytest.approx(0.6)  # the flagged passage may borrow, never lend
    # had the flagged passage been eligible (and as trusted as its mate), it would have lent its 0.9
    assert support(rel, np.array([0.6, 0.6, 0.2]), page, np.ones(3, dtype=bool), 1)[0][1] == pytest.approx(0.9)
    assert support(rel, np.array([0.6, 0.6, 0.2]), page, lender, 1)[0][1] == pytest.approx(0.2 / 0.6 * 0.6)


def test_support_is_the_scalar_sum_of_each_candidates_largest_loans():
    from trustindex.query.score import support

    rng = np.random.default_rng(7)
    for passages in (1, 2, 3):
        page = rng.integers(0, 12, 200)
        rel = np.round(rng.random(200), 2)  # ties within a page on purpose
        trust = np.round(rng.random(200), 2) + 0.01
        lender = rng.random(200) > 0.2
        sup, lenders = support(rel, trust, page, lender, passages)
        for j in range(200):
            loans = sorted(
                (
                    rel[i] * min(1.0, trust[i] / trust[j])
                    for i in range(200)
                    if page[i] == page[j] and i != j and lender[i] and rel[i] > 0
                ),
                reverse=True,
            )
            assert sup[j] == pytest.approx(sum(loans[:passages]), abs=1e-12)
            assert len(lenders[j]) == min(passages, len(loans))


def test_a_per_page_cap_lets_more_pages_into_a_channel_and_keeps_its_order():
    from trustindex.query.fusion import per_page_capped

    # rows 0-5 on page 7 (a long page), then rows 6-9 on pages 1-4, ranked best first
    page_of = np.array([7, 7, 7, 7, 7, 7, 1, 2, 3, 4])
    ranking = np.arange(10)
    assert per_page_capped(ranking, page_of, 0, 4).tolist() == [0, 1, 2, 3]
    assert per_page_capped(ranking, page_of, 2, 4).tolist() == [0, 1, 6, 7]
    assert per_page_capped(ranking, page_of, 2, 100).tolist() == [0, 1, 6, 7, 8, 9]
    assert per_page_capped(ranking[::-1], page_of, 1, 3).tolist() == [9, 8, 7]


def test_a_released_version_folder_is_named_only_for_docusaurus_version_folders():
    from trustindex.schemas.docs_versions import version_folder

    assert version_folder("main_versioned_docs/version-0.0.0/develop/faq.mdx") == "main_versioned_docs/version-0.0.0"
    assert version_folder("website/versioned_docs/version-2.1/intro.md") == "website/versioned_docs/version-2.1"
    assert version_folder("docs/troubleshoot/faq.mdx") is None
    assert version_folder("docs/versioned_docs_guide.md") is None


def test_an_unlabelled_version_folder_page_takes_a_milder_doubt_than_legacy_lifted_by_a_docs_target():
    from trustindex.query.trust import deprecation_factor
    from trustindex.schemas.docs_versions import LEGACY_MARKER

    policy = Policy.from_dict({})
    dp = policy.deprecation
    folder = "main_versioned_docs/version-0.0.0"
    older = deprecation_factor([], policy, folder=folder)
    assert older.multiplier == dp.version_folder_multiplier < 1.0
    assert older.status == "unlabelled_docs_version" and older.evidence.version_folder == folder
    # a labelled legacy page is never trusted more than an unlabelled old folder's (the same doubt, by default)
    assert dp.legacy_docs_multiplier <= dp.version_folder_multiplier
    targeted = deprecation_factor([], policy, docs_targeted=True, folder=folder)
    assert targeted.multiplier == 1.0 and targeted.status == "unlabelled_docs_version_targeted"
    # a legacy marker already says more than the folder: the legacy multiplier alone applies
    legacy = [{"scope": "document", "reason": "0.0.0: unmaintained docs version", "marker": LEGACY_MARKER}]
    assert deprecation_factor(legacy, policy, folder=folder).multiplier == dp.legacy_docs_multiplier
    assert deprecation_factor([], policy).status == "not_deprecated"


def test_page_term_coverage_counts_each_query_term_once_per_page_by_idf(data):
    from trustindex.query.pages import page_term_coverage
    from trustindex.schemas.lexical import tokenize

    # pages: 0 = witnesses.md + overview.md, 1 = the deploy pages, 2 = errors.md + fees.md
    passage_page = np.array([0, 0, 1, 1, 2, 2], dtype=np.int64)
    cover = page_term_coverage(data.lexical, tokenize("deploy contract witnesses"), passage_page, 3)
    known = [t for t in dict.fromkeys(tokenize("deploy contract witnesses")) if t in data.lexical.vocab]
    assert len(known) >= 2
    # the deploy page holds "deploy" and "contract", page 0 "witnesses" and "contract"; the errors page none
    assert cover[2] == 0.0 and 0.0 < cover[0] < 1.0 and 0.0 < cover[1] < 1.0
    assert page_term_coverage(data.lexical, tokenize("deploy contract"), passage_page, 3)[1] == pytest.approx(1.0)
    assert not page_term_coverage(data.lexical, ["zzzunknown"], passage_page, 3).any()


def test_pool_term_coverage_reads_the_same_values_from_the_candidates_pages(data):
    from trustindex.query.pages import page_term_coverage, pool_term_coverage, stored_page_by_page
    from trustindex.schemas.lexical import postings_ascending, tokenize

    passage_page = np.array([0, 0, 1, 1, 2, 2], dtype=np.int64)  # stored page by page, as every build writes
    assert stored_page_by_page(passage_page) and postings_ascending(data.lexical.indices, data.lexical.indptr)
    for query in ("deploy contract witnesses", "fees errors contract", "zzzunknown"):
        tokens = tokenize(query)
        whole = page_term_coverage(data.lexical, tokens, passage_page, 3)
        for pages in ([2, 0, 0, 1], [1], [2, 2]):
            got = pool_term_coverage(data.lexical, tokens, passage_page, np.array(pages))
            assert got.tolist() == whole[pages].tolist()  # the same floats, not only close ones
    # passages not grouped by page, or a passage without a page: the whole-corpus path must be used
    assert not stored_page_by_page(np.array([0, 1, 0, 1, 2, 2]))
    assert not stored_page_by_page(np.array([-1, 0, 1, 1, 2, 2]))
    # the BM25 files' contract, checked across term boundaries but not inside a term
    assert postings_ascending(np.array([0, 3, 5, 1, 2, 0, 4]), [0, 3, 5, 7])
    assert not postings_ascending(np.array([0, 3, 5, 2, 1, 0, 4]), [0, 3, 5, 7])
    # the same across block edges (the index is read a block at a time)
    assert postings_ascending(np.array([0, 3, 5, 1, 2, 0, 4]), [0, 3, 5, 7], block=2)
    assert not postings_ascending(np.array([0, 3, 5, 2, 1, 0, 4]), [0, 3, 5, 7], block=2)
