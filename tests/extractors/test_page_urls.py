"""Citable page URLs (issue 18 item 2): a source's site_url and its Docusaurus routing give each docs hit the page
a person opens, with the anchor of its section; without site_url, the hosting URL as before."""

from __future__ import annotations

import pytest

from trustindex.extractors.base import approx_token_count
from trustindex.extractors.docs_routes import load_docs_routes
from trustindex.ingest.source import ingest_source
from trustindex.schemas.config import Identities, Source, load_sources
from trustindex.schemas.errors import ConfigError
from trustindex.schemas.page_url import heading_anchor, passage_page_url
from trustindex.schemas.policy import Policy

SITE = "https://docs.example.org"
CONFIG = b"""// a site whose docs live under /learn, with a legacy version and a renamed current version path
module.exports = {
  url: 'https://docs.example.org',
  presets: [['classic', ({
    docs: {
      routeBasePath: '/learn',
      lastVersion: '2.0',
      versions: { current: { label: 'Next', path: 'upcoming' }, '1.0': { label: 'v1 (Legacy)' } },
    },
  })]],
  plugins: [['@docusaurus/plugin-content-docs', { id: 'api', path: 'api-docs', routeBasePath: 'api' }]],
};
"""
FILES = {"docusaurus.config.js": CONFIG, "versions.json": b'["2.0", "1.0"]'}
PATHS = [
    "docs/intro.md",
    "docs/guides/01-setup.md",
    "versioned_docs/version-2.0/guides/install.md",
    "versioned_docs/version-2.0/guides/index.md",
    "versioned_docs/version-2.0/tokens/tokens.mdx",
    "versioned_docs/version-1.0/guides/install.md",
    "api-docs/README.md",
    "api-docs/classes/Wallet.md",
    "blog/2025-01-01-hello.md",
    "docs/_partials/_ports.md",
    "README.md",
]


@pytest.fixture(scope="module")
def routes():
    return load_docs_routes(PATHS, FILES)


@pytest.mark.parametrize(
    ("path", "front_matter", "url"),
    [
        # the current docs are not lastVersion: their configured version path
        ("docs/intro.md", {}, f"{SITE}/learn/upcoming/intro"),
        ("docs/guides/01-setup.md", {}, f"{SITE}/learn/upcoming/guides/setup"),
        # lastVersion is served without a version segment; index pages are their folder's page
        ("versioned_docs/version-2.0/guides/install.md", {}, f"{SITE}/learn/guides/install"),
        ("versioned_docs/version-2.0/guides/index.md", {}, f"{SITE}/learn/guides"),
        ("versioned_docs/version-2.0/tokens/tokens.mdx", {}, f"{SITE}/learn/tokens"),
        # a legacy version under its name
        ("versioned_docs/version-1.0/guides/install.md", {}, f"{SITE}/learn/1.0/guides/install"),
        # slug front matter: relative replaces the file name, absolute the doc path; id renames the file
        (
            "versioned_docs/version-2.0/guides/install.md",
            {"slug": "getting-set-up"},
            f"{SITE}/learn/guides/getting-set-up",
        ),
        ("versioned_docs/version-1.0/guides/install.md", {"slug": "/start"}, f"{SITE}/learn/1.0/start"),
        ("versioned_docs/version-2.0/guides/install.md", {"id": "installing"}, f"{SITE}/learn/guides/installing"),
        # a second docs plugin with its own route base path and no versions
        ("api-docs/README.md", {}, f"{SITE}/api"),
        ("api-docs/classes/Wallet.md", {}, f"{SITE}/api/classes/Wallet"),
        # the classic preset's blog (issue 43): the date in the file name becomes the post's path
        ("blog/2025-01-01-hello.md", {}, f"{SITE}/blog/2025/01/01/hello"),
        # outside every docs and blog plugin, and partials: no page
        ("docs/_partials/_ports.md", {}, None),
        ("README.md", {}, None),
    ],
)
def test_docusaurus_routing(routes, path, front_matter, url):
    assert routes.page_url(SITE + "/", path, front_matter) == url


def test_without_a_config_the_docusaurus_defaults_route():
    r = load_docs_routes(["docs/a/b.md"], {})
    assert r.page_url(SITE, "docs/a/b.md") == f"{SITE}/docs/a/b"


def test_heading_anchors_follow_the_slugger_and_custom_ids():
    assert heading_anchor("Install the `compact` compiler (v0.23)!") == "install-the-compact-compiler-v023"
    assert heading_anchor("Proof server {#proof-server-setup}") == "proof-server-setup"
    assert heading_anchor("See [the SDK](https://x.example) docs") == "see-the-sdk-docs"
    assert passage_page_url("https://s/p", ["Title"]) == "https://s/p"
    assert passage_page_url("https://s/p", ["Title", "Set up a node"]) == "https://s/p#set-up-a-node"


def test_site_url_must_be_an_http_url(tmp_path):
    f = tmp_path / "sources.toml"
    f.write_text('[[source]]\nname = "d"\nurl = "x"\npublisher = "p"\nsite_url = "docs.example.org"\n')
    with pytest.raises(ConfigError, match=r"source\[d\]\.site_url: expected an http\(s\) URL"):
        load_sources(f)


def test_ingest_stores_page_urls_and_no_site_url_keeps_the_hosting_url(tmp_path):
    from tests.kits.gitutil import RepoBuilder

    rb = RepoBuilder(tmp_path / "repo")
    rb.commit(
        {
            **{k: v.decode() for k, v in FILES.items()},
            "versioned_docs/version-1.0/guides/install.md": "---\nslug: /start\n---\n# Install\n\n## Old way\n\nx\n",
            "docs/intro.md": "# Intro\n\nHello.\n",
        },
        "docs",
    )
    include = ("**/*.md", "docusaurus.config.js", "versions.json")
    with_site = Source("d", str(rb.path), "main", "p", include=include, site_url=SITE)
    out = ingest_source(with_site, tmp_path / "data", Identities(), [], Policy.default(), approx_token_count)
    pages = {r["path"]: r["page_url"] for r in out.tables["documents"].to_pylist()}
    assert pages["versioned_docs/version-1.0/guides/install.md"] == f"{SITE}/learn/1.0/start"
    assert pages["docs/intro.md"] == f"{SITE}/learn/upcoming/intro"
    assert pages["docusaurus.config.js"] == ""
    plain = Source("d", str(rb.path), "main", "p", include=include)
    assert plain.config_sha256 != with_site.config_sha256
    out = ingest_source(plain, tmp_path / "data2", Identities(), [], Policy.default(), approx_token_count)
    assert {r["page_url"] for r in out.tables["documents"].to_pylist()} == {""}


def test_demo_docs_hits_cite_their_published_page(index):
    r = index.search("How do I run the proof server?", k=10)
    by_path = {h["provenance"]["path"]: h["provenance"] for h in r["hits"]}
    docs = [p for p in by_path.values() if p["source"] == "midnight-docs"]
    assert len(docs) >= 2, "too few midnight-docs hits"
    for p in docs:
        assert p["page_url"].startswith("https://docs.midnight.example/")
        if len(p["heading_path"]) > 1 and not p.get("part_of"):  # its own section's anchor, as the build recorded it
            assert p["page_url"].endswith("#" + heading_anchor(p["heading_path"][-1])), p
        if "/_partials/" in p["path"]:  # never published alone: cited at the page that renders it (issue 43)
            assert p["part_of"] == "docs/guides/proof-server.md"
            assert p["page_url"].startswith("https://docs.midnight.example/guides/proof-server")
    legacy = by_path.get("versioned_docs/version-0.1.0/guides/proof-server.md")
    current = by_path.get("docs/guides/proof-server.md")
    assert current and current["page_url"].split("#")[0] == "https://docs.midnight.example/guides/proof-server"
    if legacy:  # the legacy copy may collapse into also_in or rank out of the top 10
        assert legacy["page_url"].split("#")[0] == "https://docs.midnight.example/0.1.0/guides/proof-server"
    community = [p for p in by_path.values() if p["source"] == "community-contracts"]
    for p in community:  # no site_url: the hosting URL, as url (a local demo repository has none)
        assert p["page_url"] == p["url"]
