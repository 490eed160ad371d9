"""Whether the docs site serves a page (issue 43 item 2a): Docusaurus publishes no page under any path segment
starting with ``_`` (drafts such as ``docs/_develop/``, not only ``_name.md`` partials), for ``draft: true`` or for a
version its versions file does not list; blog posts get the blog's URL; a partial a routed page imports is cited
as part of that page.  Configs shaped like the Midnight docs' (docs at the site root, a site plugin wrapping the
blog), written here."""

from __future__ import annotations

import pytest

from tests.kits.gitutil import RepoBuilder
from trustindex.extractors.base import FileContext, approx_token_count
from trustindex.extractors.docs_routes import load_docs_routes
from trustindex.extractors.markdown import extract_markdown
from trustindex.extractors.mdx_includes import rendered_includes
from trustindex.ingest.incremental import Previous
from trustindex.ingest.source import IngestRun, ingest_source
from trustindex.schemas.config import Identities, Source
from trustindex.schemas.page_routes import OFF_SITE, ROUTED, UNROUTED
from trustindex.schemas.policy import Policy

SITE = "https://docs.example.org"
CONFIG = """// docs at the site root, an API plugin, the blog through the site's own wrapper of Docusaurus's blog plugin
module.exports = {
  presets: [['classic', { docs: false, blog: false }]],
  plugins: [
    ['@docusaurus/plugin-content-docs', { id: 'main', path: 'docs', routeBasePath: '/', lastVersion: 'current',
      versions: { current: { label: 'v1' }, '0.0.0': { label: 'v0 (Legacy)' } } }],
    ['@docusaurus/plugin-content-docs', { id: 'apis', path: 'api-reference', routeBasePath: 'api-reference' }],
    ['@docusaurus/plugin-content-docs', { id: 'notes', path: 'notes', exclude: ['**/wip/**'] }],
    ['./plugins/blog-plugin.js', { id: 'default', blogTitle: 'Dev Diaries', routeBasePath: 'blog', path: './blog' }],
  ],
};
"""
FILES = {"docusaurus.config.js": CONFIG.encode(), "main_versions.json": b'["0.0.0"]'}


@pytest.fixture(scope="module")
def routes():
    return load_docs_routes(list(FILES), FILES)


@pytest.mark.parametrize(
    ("path", "front_matter", "status", "url"),
    [
        ("docs/getting-started/installation.mdx", {}, ROUTED, f"{SITE}/getting-started/installation"),
        # a draft folder anywhere below the plugin's folder, not only a "_" file name
        ("docs/_develop/tutorial/using/proof-server.mdx", {}, UNROUTED, None),
        ("docs/tutorials/_beginner/_index.mdx", {}, UNROUTED, None),
        ("docs/tutorials/_beginner/first-contract.mdx", {}, UNROUTED, None),
        ("docs/concepts/_circuit_example.mdx", {}, UNROUTED, None),
        ("api-reference/dapp-connector/_media/SPECIFICATION.md", {}, UNROUTED, None),
        ("docs/guides/wallet.mdx", {"draft": True}, UNROUTED, None),
        ("docs/guides/wallet.mdx", {"draft": "no"}, ROUTED, f"{SITE}/guides/wallet"),
        # a listed legacy version, and a folder its versions file does not list
        ("main_versioned_docs/version-0.0.0/develop/intro.mdx", {}, ROUTED, f"{SITE}/0.0.0/develop/intro"),
        ("main_versioned_docs/version-9.9.9/develop/intro.mdx", {}, UNROUTED, None),
        # a plugin's own exclude replaces Docusaurus's default: its "_" files are served, its wip/ folder is not
        ("notes/_scratch.md", {}, ROUTED, f"{SITE}/docs/_scratch"),
        ("notes/wip/idea.md", {}, UNROUTED, None),
        # blog posts: front matter slug (relative or absolute) under the blog's route, else the file's date and name
        (
            "blog/2025-08-01-compact-developer-tools.mdx",
            {"slug": "compact-developer-tools"},
            ROUTED,
            f"{SITE}/blog/compact-developer-tools",
        ),
        ("blog/2025-04-03-indexer.mdx", {"slug": "/indexer"}, ROUTED, f"{SITE}/blog/indexer"),
        ("blog/2025-08-20-token contract copy.mdx", {}, ROUTED, f"{SITE}/blog/2025/08/20/token%20contract%20copy"),
        ("blog/2025-09-15-hub/index.md", {}, ROUTED, f"{SITE}/blog/2025/09/15/hub"),
        ("blog/intro-to-web3.mdx", {}, ROUTED, f"{SITE}/blog/intro-to-web3"),
        ("blog/_2026-01-02-dust-architecture.mdx", {"slug": "dust-architecture"}, UNROUTED, None),
        # outside every plugin: no site page, cited at the hosting URL
        ("README.md", {}, OFF_SITE, None),
        ("src/pages/index.js", {}, OFF_SITE, None),
    ],
)
def test_the_site_serves_a_page_or_says_why_not(routes, path, front_matter, status, url):
    r = routes.resolve(path, front_matter)
    assert r.status == status, r.reason
    assert routes.page_url(SITE, path, front_matter) == url
    assert (r.route is not None) == (status == ROUTED)


def test_the_reasons_name_the_rule():
    r = load_docs_routes(list(FILES), FILES)
    assert r.resolve("docs/_develop/x.mdx").reason == "'_develop' starts with _ (Docusaurus serves no page under it)"
    assert r.resolve("notes/wip/x.md").reason == "excluded by the plugin's exclude '**/wip/**'"
    assert (
        r.resolve("main_versioned_docs/version-9.9.9/x.md").reason
        == "version 9.9.9 is not listed in main_versions.json"
    )
    assert r.resolve("docs/x.md", {"draft": True}).reason.startswith("front matter draft: true")


def test_the_draft_page_kind_follows_the_route_rule():
    from trustindex.extractors.page_kind import load_page_kinds
    from trustindex.schemas.page_kinds import DRAFT

    pages = ["notes/_scratch.md", "notes/wip/idea.md", "main_versioned_docs/version-9.9.9/a.md", "misc/_old/x.md"]
    kinds = load_page_kinds(pages, FILES, load_docs_routes(pages, FILES))
    got = {p: kinds.of(p, "markdown") for p in pages}
    assert got["notes/_scratch.md"].kind != DRAFT  # its plugin's own exclude serves it
    assert got["notes/wip/idea.md"].reason == "unpublished: excluded by the plugin's exclude '**/wip/**'"
    assert got["main_versioned_docs/version-9.9.9/a.md"].kind == DRAFT
    assert got["misc/_old/x.md"].reason == "unpublished: '_old' starts with _ (the site serves no page for it)"
    assert kinds.of("docs/a.md", "markdown", {"draft": True}).reason == "front matter draft: true"


def test_without_a_config_the_defaults_hide_drafts_and_route_the_blog():
    r = load_docs_routes(["docs/a.md"], {})
    assert r.resolve("docs/_develop/a.md").status == UNROUTED
    assert r.page_url(SITE, "blog/2025-01-01-hello.md") == f"{SITE}/blog/2025/01/01/hello"
    assert r.resolve("blog/_draft.md").status == UNROUTED
    assert r.resolve("sdks/_rate-limits.mdx").status == OFF_SITE  # no plugin holds it without a config


def test_a_page_renders_the_partials_it_imports_and_uses():
    text = (
        "---\ntitle: Smart contracts\n---\n\n"
        "import PrivateExample from './_private_example.mdx';\n"
        "import Unused from './_unused.mdx';\n"
        "import Shared from '@site/snippets/_ports.md'\n"
        "import Tabs from '@theme/Tabs';\n"
        "import Outside from '../../../../etc/passwd.mdx';\n\n"
        "# Smart contracts\n\n<PrivateExample />\n\n<Shared/>\n<Outside>x</Outside>\n\n"
        "```mdx\nimport Fenced from './_fenced.mdx';\n<Fenced />\n```\n"
    )
    got = rendered_includes(text, "docs/concepts/how-midnight-works/smart-contracts.mdx")
    assert got == ["docs/concepts/how-midnight-works/_private_example.mdx", "@site/snippets/_ports.md"]
    ex = extract_markdown(text.encode(), FileContext("s", "docs/concepts/how-midnight-works/smart-contracts.mdx"))
    assert ex.includes == got
    assert all("import PrivateExample" not in c.text for c in ex.chunks)  # ESM is still dropped from the passages


SITE_FILES = {
    "docusaurus.config.js": CONFIG,
    "main_versions.json": '["0.0.0"]',
    "docs/concepts/smart-contracts.mdx": (
        "import Example from './_example.mdx';\n\n# Smart contracts\n\nA contract has a ledger.\n\n<Example />\n"
    ),
    "docs/concepts/_example.mdx": "## Example\n\nexport ledger counter: Counter;\n",
    "docs/concepts/_orphan.mdx": "## Orphan\n\nNo page imports this.\n",
    "docs/_develop/_nested.mdx": "## Nested\n\nA partial of a partial.\n",
    "docs/_develop/draft.mdx": "import N from './_nested.mdx';\n\n# Draft\n\n<N />\n",
    "docs/guides/setup.mdx": "import P from '@site/snippets/_ports.md';\n\n# Setup\n\n<P />\n",
    "snippets/_ports.md": "The proof server listens on port 6300.\n",
    "blog/2025-04-03-midnight-indexer.mdx": "---\nslug: midnight-indexer\n---\n# The indexer\n\nNews.\n",
    "README.md": "# The docs repository\n",
}


def test_ingest_cites_a_partial_at_the_page_that_renders_it(tmp_path):
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit(SITE_FILES, "a docs site with partials, a draft and a blog")
    src = Source("d", str(rb.path), "main", "p", include=("**/*.md", "**/*.mdx"), site_url=SITE)
    out = ingest_source(src, tmp_path / "data", Identities(), [], Policy.default(), approx_token_count)
    rows = {r["path"]: r for r in out.tables["documents"].to_pylist()}
    page = rows["docs/concepts/smart-contracts.mdx"]
    assert (page["route"], page["page_url"], page["part_of"]) == (ROUTED, f"{SITE}/concepts/smart-contracts", "")
    part = rows["docs/concepts/_example.mdx"]
    assert part["route"] == UNROUTED and part["part_of"] == "docs/concepts/smart-contracts.mdx"
    assert part["page_url"] == page["page_url"]
    assert rows["snippets/_ports.md"]["route"] == OFF_SITE  # outside the docs: an @site import names it
    assert rows["snippets/_ports.md"]["part_of"] == "docs/guides/setup.mdx"
    assert (rows["docs/concepts/_orphan.mdx"]["part_of"], rows["docs/concepts/_orphan.mdx"]["page_url"]) == ("", "")
    # a draft's partial stays unpublished: the page that renders it is not served either
    assert rows["docs/_develop/_nested.mdx"]["part_of"] == "" and rows["docs/_develop/draft.mdx"]["page_url"] == ""
    assert rows["blog/2025-04-03-midnight-indexer.mdx"]["page_url"] == f"{SITE}/blog/midnight-indexer"
    assert rows["README.md"]["route"] == OFF_SITE and rows["README.md"]["route_reason"]
    assert rows["README.md"]["created"] == page["created"]

    # the page stops importing it: an incremental refresh carries the partial's row, which loses its page
    rb.commit({"docs/concepts/smart-contracts.mdx": "# Smart contracts\n\nA contract has a ledger.\n"}, "inline")
    again = ingest_source(
        src,
        tmp_path / "data",
        Identities(),
        [],
        Policy.default(),
        approx_token_count,
        IngestRun(previous=Previous(out.commit, out.tables)),
    )
    assert again.note.startswith("incremental"), again.note
    rows = {r["path"]: r for r in again.tables["documents"].to_pylist()}
    assert (rows["docs/concepts/_example.mdx"]["part_of"], rows["docs/concepts/_example.mdx"]["page_url"]) == ("", "")
