"""The site's links as evidence (issue 43 item 1), on the demo corpus refreshed through the real flow: the links
table and the page_links/ index of the snapshot, the anchor-text and authority terms every hit shows with their
policy weights, the order explained from the response alone with them on, and an older snapshot without them."""

from __future__ import annotations

import copy
import json
import shutil

import numpy as np
import pyarrow.parquet as pq
import pytest

from trustindex.query.explain import check, formula_lines
from trustindex.query.index import Index
from trustindex.schemas.links import BY_DOC_ID, BY_ROUTE, BY_SITE_URL, PAGE
from trustindex.schemas.policy import Policy
from trustindex.schemas.response import validate_response
from trustindex.schemas.snapshot import MANIFEST, PAGE_LINKS_DIR, TABLE_FILES, Manifest, snapshot_id_from_files

PROOF = "docs/guides/proof-server.md"
LINKS_ON = Policy.from_dict(
    {"fusion": {"anchor_weight": 0.1, "anchor_half": 2.0, "authority_weight": 0.05, "authority_k": 3.0}}
)


def _anchor_texts(d, path: str) -> list[str]:
    doc = d.docs.table["doc_id"][d.docs.table.column("path").to_pylist().index(path)].as_py()
    links = pq.read_table(d.dir / TABLE_FILES["links"]).to_pylist()
    return [r["text"] for r in links if r["status"] == PAGE and r["target_doc_id"] == doc]


def test_the_snapshot_holds_the_links_and_what_they_say_of_each_page(index):
    d = index.data
    links = pq.read_table(d.dir / TABLE_FILES["links"]).to_pylist()
    by = {(r["source"], r["path"], r["text"]): r for r in links}
    # another repository's link to the docs site's URL, a route written in JSX, a sidebar label
    sdk = by[("partner-sdk", "docs/getting-started.md", "running a local proof server")]
    assert (sdk["target_source"], sdk["target_path"], sdk["resolved_by"]) == ("midnight-docs", PROOF, BY_SITE_URL)
    jsx = by[("midnight-docs", "docs/getting-started/hello-world.mdx", "install the toolchain")]
    assert (jsx["target_path"], jsx["resolved_by"]) == ("docs/getting-started/installation.md", BY_ROUTE)
    label = by[("midnight-docs", "sidebars.js", "Run a proof server")]
    assert (label["doc_id"], label["target_path"], label["resolved_by"]) == (None, PROOF, BY_DOC_ID)
    assert d.manifest.files.get(f"{PAGE_LINKS_DIR}/inbound.npy")  # listed and checksummed like any file
    assert d.page_links is not None and d.page_links.anchors.n_docs == len(d.docs)
    paths = d.docs.table.column("path").to_pylist()
    inbound = dict(zip(paths, d.page_links.inbound.tolist(), strict=True))
    # intro.md links the proof server and the installation page; hello-world.mdx sits beside installation.md
    assert inbound[PROOF] == 1 and inbound["docs/getting-started/installation.md"] == 1
    assert inbound["docs/intro.md"] == 0
    # the docs' intro, the sidebar and the partner SDK's guide (the legacy intro links the legacy page)
    assert sorted(_anchor_texts(d, PROOF)) == [
        "Run a proof server",
        "running a local proof server",
        "running a local proof server",
    ]


def test_every_hit_shows_the_link_terms_with_the_policy_s_weights(index):
    r = index.search("How do I run a proof server?", k=10)
    validate_response(r)
    assert check(r, index.policy) == []
    for h in r["hits"]:
        page = h["ranking_terms"]["page"]
        assert page["anchor"]["weight"] == index.policy.fusion.anchor_weight
        assert page["authority"]["weight"] == index.policy.fusion.authority_weight
        assert page["authority"]["value"] == pytest.approx(
            page["authority"]["inbound"] / (page["authority"]["inbound"] + index.policy.fusion.authority_k), abs=1e-6
        )
    proof = [h for h in r["hits"] if h["provenance"]["path"] == PROOF]
    assert proof and proof[0]["ranking_terms"]["page"]["anchor"]["value"] > 0  # others call it "proof server"
    assert proof[0]["ranking_terms"]["page"]["authority"]["inbound"] == 1


def test_with_the_terms_on_the_order_is_reproduced_and_the_named_page_rises(index):
    query = "Run a proof server"
    base = index.search(query, k=20)
    index.reload_policy(LINKS_ON)
    try:
        on = index.search(query, k=20)
        for q in ("Your first contract", "core concepts", "How do I install the Compact compiler?"):
            r = index.search(q, k=10)
            validate_response(r)
            assert check(r, LINKS_ON) == [], (q, check(r, LINKS_ON))
    finally:
        index.reload_policy(None)
    assert check(on, LINKS_ON) == []

    anchors = {h["provenance"]["path"]: h["ranking_terms"]["page"]["anchor"]["value"] for h in on["hits"]}
    assert anchors[PROOF] > 0.3  # "proof server" in all three of its anchor texts
    assert min(anchors.values()) == 0.0  # a page nobody calls that
    assert base["hits"][0]["provenance"]["path"] == on["hits"][0]["provenance"]["path"] == PROOF
    terms = next(h for h in on["hits"] if h["provenance"]["path"] == PROOF)["ranking_terms"]["page"]
    assert terms["anchor"]["weight"] == 0.1 and terms["authority"]["weight"] == 0.05
    assert terms["normaliser"] == pytest.approx(1 + 0.3 + 0.1 + 0.075 + 0.1 + 0.05)
    assert "anchor text" in formula_lines(next(h for h in on["hits"] if h["provenance"]["path"] == PROOF))[1]
    wrong = copy.deepcopy(on)
    wrong["hits"][0]["ranking_terms"]["page"]["anchor"]["weight"] = 0.3
    assert any("anchor weight" in p for p in check(wrong, LINKS_ON))


def test_an_older_snapshot_without_links_loads_and_its_hits_show_no_link_terms(index, tmp_path):
    src = index.data.dir
    old = tmp_path / "old"
    shutil.copytree(src, old)
    shutil.rmtree(old / PAGE_LINKS_DIR)
    (old / TABLE_FILES["links"]).unlink()
    m = Manifest.from_json((old / MANIFEST).read_text(), str(old))
    m.files = {n: f for n, f in m.files.items() if not n.startswith(PAGE_LINKS_DIR) and n != TABLE_FILES["links"]}
    m.row_counts.pop("links", None)
    m.snapshot_id = snapshot_id_from_files(m.files)
    (old / MANIFEST).write_text(m.to_json())
    older = Index.open(old)
    assert older.data.page_links is None
    r = older.search("How do I run a proof server?", k=5)
    validate_response(r)
    assert r["hits"] and all("anchor" not in h["ranking_terms"]["page"] for h in r["hits"])
    assert check(r, older.policy) == []
    assert "anchor text" not in formula_lines(r["hits"][0])[1]
    # its order is the new snapshot's with the terms at weight 0 (the default): the same hits, the same scores
    new = index.search("How do I run a proof server?", k=5)
    assert [h["chunk_id"] for h in r["hits"]] == [h["chunk_id"] for h in new["hits"]]
    assert np.allclose([h["ranking_score"] for h in r["hits"]], [h["ranking_score"] for h in new["hits"]])
    assert json.dumps(r["hits"][0]["factors"]) == json.dumps(new["hits"][0]["factors"])


def test_stats_count_the_links_each_source_writes_by_what_they_name(refreshed, capsys):
    from trustindex.cli.main import main

    assert main(["stats", "--data", str(refreshed["data"]), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    # the docs' links and sidebar labels (two name nothing: a tutorial the legacy intro links, the blog index)
    assert stats["midnight-docs"]["links_per_status"] == {"page": 13, "unresolved": 2}
    assert stats["partner-sdk"]["links_per_status"] == {"page": 1}  # its link to the docs site
    assert "links_per_status" not in stats["community-contracts"]
