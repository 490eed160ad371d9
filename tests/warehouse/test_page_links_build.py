"""The build turns every source's links into the snapshot's page_links/ index (issue 43 item 1): another
repository's link to a docs site's URL names that page; each page's anchor texts are what others call it; its
inbound links count only other pages of its own site, outside its own folder."""

from __future__ import annotations

import numpy as np

from trustindex.query.page_links import Cites, PageLinks, authority
from trustindex.schemas.links import BY_SITE_URL, EXTERNAL, MARKDOWN, PAGE, SIDEBAR
from trustindex.schemas.tables import doc_id_of, table_from_rows
from trustindex.warehouse.page_links import page_link_evidence, resolve_site_urls, write_page_links

SITE = "https://docs.example.org"
PAGES = [
    ("docs", "docs/intro.md", ""),
    ("docs", "docs/guides/proof-server.md", f"{SITE}/guides/proof-server"),
    ("docs", "docs/guides/wallet.md", f"{SITE}/guides/wallet"),
    ("docs", "docs/concepts/tokens.md", f"{SITE}/concepts/tokens"),
    ("sdk", "README.md", ""),
]


def _documents():
    return table_from_rows(
        "documents",
        [{"doc_id": doc_id_of(s, p), "source": s, "path": p, "page_url": u} for s, p, u in PAGES],
    )


def _link(source, path, text, target, to=None, fragment="", kind=MARKDOWN, doc=True):
    return {
        "doc_id": doc_id_of(source, path) if doc else None,
        "source": source,
        "path": path,
        "kind": kind,
        "text": text,
        "target": target,
        "status": PAGE if to else EXTERNAL,
        "target_source": to[0] if to else "",
        "target_path": to[1] if to else "",
        "target_doc_id": doc_id_of(*to) if to else "",
        "fragment": fragment,
        "resolved_by": "path" if to else "",
    }


PROOF = ("docs", "docs/guides/proof-server.md")
LINKS = [
    _link("docs", "docs/intro.md", "run a proof server", "guides/proof-server.md", PROOF),
    _link("docs", "docs/intro.md", "run a proof server", "guides/proof-server.md#ports", PROOF, "ports"),
    _link("docs", "docs/concepts/tokens.md", "the prover", "../guides/proof-server.md", PROOF),
    _link("docs", "docs/guides/wallet.md", "proof server", "./proof-server.md", PROOF),  # its own folder
    _link("docs", "docs/guides/proof-server.md", "ports", "#ports", PROOF, "ports"),  # to itself
    _link("docs", "sidebars.js", "Run a proof server", "guides/proof-server", PROOF, kind=SIDEBAR, doc=False),
    _link("sdk", "README.md", "the Midnight prover", f"{SITE}/guides/proof-server/#start"),  # another repository
    _link("sdk", "README.md", "elsewhere", "https://example.com/guides/proof-server"),
]


def test_another_repository_s_link_to_the_docs_site_names_the_page():
    links = resolve_site_urls(table_from_rows("links", LINKS), _documents()).to_pylist()
    sdk = [r for r in links if r["source"] == "sdk"]
    assert (sdk[0]["status"], sdk[0]["target_path"], sdk[0]["fragment"], sdk[0]["resolved_by"]) == (
        PAGE,
        PROOF[1],
        "start",
        BY_SITE_URL,
    )
    assert sdk[1]["status"] == EXTERNAL  # another host: not the docs site


def test_anchor_texts_and_inbound_links_per_page():
    documents = _documents()
    links = resolve_site_urls(table_from_rows("links", LINKS), documents)
    texts, inbound = page_link_evidence(links, documents)
    proof = [p for _s, p, _u in PAGES].index(PROOF[1])
    # once per (linking file, text); not the page's own words; the navigation's label and another repository's
    assert texts[proof].splitlines() == [
        "run a proof server",
        "the prover",
        "proof server",
        "Run a proof server",
        "the Midnight prover",
    ]
    assert "ports" not in texts[proof]
    # other pages of its own site outside its folder: intro and tokens (not wallet.md beside it, not the sdk)
    assert int(inbound[proof]) == 2
    assert [int(n) for i, n in enumerate(inbound) if i != proof] == [0, 0, 0, 0]


def test_the_index_is_written_and_read_back_per_documents_row(tmp_path):
    documents = _documents()
    links = resolve_site_urls(table_from_rows("links", LINKS), documents)
    counts = write_page_links(tmp_path, links, documents)
    assert counts == {"pages_with_anchor_text": 1, "pages_linked": 1}
    index = PageLinks(tmp_path, documents.num_rows, "test", lambda: Cites.empty(0))
    rows = np.arange(documents.num_rows)
    anchor = index.anchor(["prover"], np.array([*rows, -1]), half=1.0)
    assert anchor[1] > 0 and not anchor[[0, 2, 3, 4, 5]].any()
    assert index.links_in(np.array([1, -1, 0])).tolist() == [2, 0, 0]
    assert authority(np.array([0, 3, 30]), 3.0).tolist() == [0.0, 0.5, 30 / 33]
