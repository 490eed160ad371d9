"""Canonical pages end to end (issue 43 item 2): a real refresh of a docs site (shaped like the Midnight docs: docs
at the site root, a draft tutorial folder, a partial a page renders, a blog through the site's own plugin) and of a
second repository carrying a copy of one of its guides, then searches.

- a draft the site does not route ranks below every served page, whatever its relevance, and says why;
- a partial is cited at the page that renders it (``part_of``, that page's URL);
- the copy yields to the original: folded into the original's hit, ``copy_of`` naming it."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest

from tests.kits.gitutil import RepoBuilder
from trustindex.query.explain import check
from trustindex.schemas.page_routes import INCLUDED, ROUTED, UNROUTED

SITE = "https://docs.example.org"
CONFIG = """module.exports = {
  presets: [['classic', { docs: false, blog: false }]],
  plugins: [
    ['@docusaurus/plugin-content-docs', { id: 'main', path: 'docs', routeBasePath: '/' }],
    ['./plugins/blog-plugin.js', { id: 'default', blogTitle: 'Dev Diaries', routeBasePath: 'blog', path: './blog' }],
  ],
};
"""
INSTALL = """---
title: Installation
---

# Installation

## Install the toolchain

Download the installer script and run it. It places the `compact` command in `~/.compact/bin`; add that
folder to your PATH and open a new terminal. Check the result with `compact --version`.
"""
DRAFT = """# Beginner tutorial (draft)

## Install the Compact compiler

To install the Compact compiler, install the Compact compiler with the installer: the Compact compiler install
puts the compact compiler on your PATH. Install the Compact compiler first; then the Compact compiler is installed.
"""
COUNTERS = """import RoundCounter from './_round_counter.mdx';

# Counters

A counter is a ledger field that circuits increment and decrement.

<RoundCounter />
"""
PARTIAL = """## Example: the round counter

The tally circuit increments the round counter by one after every vote, and the round counter never decreases.
"""
PROOF_GUIDE = """# Run a proof server

## Start the proof server

Run the proof server locally with Docker before you deploy a contract. The wallet sends each transaction to the
proof server, which computes the zero knowledge proof on your machine so that private inputs never leave it.
Start it with docker run and map port 6300, then point the wallet's settings at the local address.
"""
COPY = """# Local proving

## Start the proof server

Run the proof server locally with Docker before you ship a contract. The wallet sends each transaction to the
proof server, which computes the zero knowledge proof on your machine so that private inputs never leave it.
Start it with docker run and map port 6300, then point the wallet's settings at the local address.
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory, prefect_harness) -> Path:
    from trustindex.cli.build import run_refresh
    from trustindex.schemas.config import load_build_config
    from trustindex.schemas.refresh_run import RefreshRequest

    root = tmp_path_factory.mktemp("canonical")
    docs = RepoBuilder(root / "docs")
    docs.commit(
        {
            "docusaurus.config.js": CONFIG,
            "docs/getting-started/installation.mdx": INSTALL,
            "docs/tutorials/_beginner/_index.mdx": DRAFT,
            "docs/concepts/counters.mdx": COUNTERS,
            "docs/concepts/_round_counter.mdx": PARTIAL,
            "docs/guides/proof-server.mdx": PROOF_GUIDE,
            "blog/2025-08-01-compact-developer-tools.mdx": "---\nslug: compact-developer-tools\n---\n# Tools\n\nNew.\n",
        },
        "the docs site",
        when=datetime(2024, 3, 1, tzinfo=UTC),
    )
    kit = RepoBuilder(root / "kit")  # a newer repository of an equal tier, carrying a copy of the guide
    kit.commit({"docs/local-proving.md": COPY}, "our own notes", when=datetime(2026, 1, 5, tzinfo=UTC))
    (root / "sources.toml").write_text(
        f'[[source]]\nname = "docs"\nurl = "docs"\nref = "main"\npublisher = "foundation"\nsite_url = "{SITE}"\n'
        'include = ["**/*.md", "**/*.mdx"]\nexclude = []\n\n'
        '[[source]]\nname = "kit"\nurl = "kit"\nref = "main"\npublisher = "foundation"\n'
        'include = ["**/*.md"]\nexclude = []\n'
    )
    (root / "identities.toml").write_text('[[publisher]]\nid = "foundation"\nname = "F"\ntier = "foundation"\n')
    run_refresh(load_build_config(str(root / "sources.toml")), RefreshRequest(str(root / "data")))
    return root / "data"


def _index(site: Path, tmp_path: Path | None = None, policy: str = ""):
    from trustindex.query.index import Index

    if not policy:
        return Index.open(data_dir=site)
    assert tmp_path is not None
    f = tmp_path / "policy.toml"
    f.write_text(policy)
    return Index.open(data_dir=site, policy=str(f))


INSTALL_QUERY = "How do I install the Compact compiler?"


def test_a_draft_ranks_below_every_served_page_and_says_why(site, tmp_path):
    evenly = _index(site, tmp_path, "[fusion]\nunrouted_yields = false\n").search(INSTALL_QUERY, k=10)
    assert evenly["hits"][0]["provenance"]["path"] == "docs/tutorials/_beginner/_index.mdx", "the fixture's draft"
    index = _index(site)
    r = index.search(INSTALL_QUERY, k=10)
    assert check(r, index.policy) == []
    statuses = [h["ranking_terms"]["route"]["status"] for h in r["hits"]]
    assert statuses[0] == ROUTED and r["hits"][0]["provenance"]["path"] == "docs/getting-started/installation.mdx"
    first_draft = statuses.index(UNROUTED)
    assert UNROUTED not in statuses[:first_draft] and set(statuses[first_draft:]) == {UNROUTED}
    draft = r["hits"][first_draft]
    floor = draft["ranking_terms"]["route"]["served_floor"]
    assert floor == min(h["ranking_score"] for h in r["hits"][:first_draft])  # every served candidate is shown here
    assert draft["ranking_score"] <= floor and draft["provenance"]["page_url"] is None
    assert draft["factors"]["page_kind"]["status"] == "draft"
    schema = json.loads((Path(__file__).parents[2] / "schemas" / "response.schema.json").read_text())
    jsonschema.validate(r, schema)
    # a response whose draft was moved above a served hit, or whose floor lies above a served score, is caught
    moved = copy.deepcopy(r)
    moved["hits"].insert(0, moved["hits"].pop(first_draft))
    for n, h in enumerate(moved["hits"], 1):
        h["rank_position"] = n
    assert any("is unrouted but ranks above served hit" in p for p in check(moved, index.policy))
    lifted = copy.deepcopy(r)
    lifted["hits"][first_draft]["ranking_terms"]["route"]["served_floor"] = 1.0
    assert any("served_floor 1.0 is above a served hit's ranking_score" in p for p in check(lifted, index.policy))


def test_the_breakdown_and_the_compact_text_name_the_rule(site):
    from trustindex.query.render import render_table
    from trustindex.serve.assistant_text import render_compact

    r = _index(site).search(INSTALL_QUERY, k=10)
    table = render_table(r, explain=True)
    assert "served floor" in table and "does not serve this page (unrouted)" in table
    assert "unpublished: the docs site serves no page for it" in render_compact(r, max_tokens=None)


def test_a_partial_is_cited_at_the_page_that_renders_it(site, capsys):
    from trustindex.cli.main import main
    from trustindex.query.render import render_table

    r = _index(site).search("tally circuit increments the round counter after every vote", k=5)
    hit = r["hits"][0]
    p = hit["provenance"]
    assert p["path"] == "docs/concepts/_round_counter.mdx" and p["start_line"] == 1  # the partial's own lines
    assert p["part_of"] == "docs/concepts/counters.mdx"
    assert p["page_url"] == f"{SITE}/concepts/counters#example-the-round-counter"
    assert hit["ranking_terms"]["route"] == {"status": INCLUDED}
    assert "part of docs/concepts/counters.mdx" in render_table(r, explain=True)
    # one hit per page: the page and the partial it renders are one page, the page's own passage folded under the hit
    assert [h["provenance"]["path"] for h in r["hits"]].count("docs/concepts/counters.mdx") == 0
    assert "docs/concepts/counters.mdx" in [f["path"] for f in hit["same_page"]]
    args = ["inspect", "--data", str(site), "--source", "docs", "--path", "docs/concepts/_round_counter.mdx", "--json"]
    assert main(args) == 0
    route = json.loads(capsys.readouterr().out)["route"]
    assert route["status"] == INCLUDED and route["part_of"] == "docs/concepts/counters.mdx"
    assert route["reason"] == "'_round_counter.mdx' starts with _ (Docusaurus serves no page under it)"
    assert (
        main(["inspect", "--data", str(site), "--source", "docs", "--path", "docs/tutorials/_beginner/_index.mdx"]) == 0
    )
    assert "  route: unrouted ('_beginner' starts with _" in capsys.readouterr().out


def test_a_copy_in_another_source_yields_to_the_original(site):
    from trustindex.query import search as S
    from trustindex.query.render import render_table
    from trustindex.query.search_query import Query
    from trustindex.serve.assistant_text import render_compact

    index = _index(site)
    query = "run the proof server locally with docker and map port 6300"
    st = index.state
    q = Query.make(st, query, 10, None, False, None)
    scored = S.score(st, q, S.gather(st, q))
    own = {st.data.chunks["path"][r]: scored.score[j] for j, r in enumerate(scored.pool.rows.tolist())}
    assert own["docs/local-proving.md"] > own["docs/guides/proof-server.mdx"], "the fixture's copy (fresher) outscores"
    r = index.search(query, k=10)
    assert check(r, index.policy) == []
    paths = [(h["provenance"]["source"], h["provenance"]["path"]) for h in r["hits"]]
    assert ("kit", "docs/local-proving.md") not in paths  # never a hit of its own while the original is one
    original = next(h for h in r["hits"] if h["provenance"]["path"] == "docs/guides/proof-server.mdx")
    assert original["provenance"]["copy_of"] is None
    copies = [a for a in original["also_in"] if a["source"] == "kit"]
    assert [(a["path"], a["copy_of"]) for a in copies] == [
        ("docs/local-proving.md", "docs/docs/guides/proof-server.mdx")
    ]
    assert "(copy of docs/docs/guides/proof-server.mdx, yields to it)" in render_table(r, explain=True)
    assert "copied in: kit/docs/local-proving.md" in render_compact(r, max_tokens=None)


def test_the_blog_post_cites_the_sites_blog(site):
    r = _index(site).search("Tools new", k=20)
    blog = next(h for h in r["hits"] if h["provenance"]["path"].startswith("blog/"))
    assert blog["provenance"]["page_url"] == f"{SITE}/blog/compact-developer-tools"
    assert blog["ranking_terms"]["route"] == {"status": ROUTED}
