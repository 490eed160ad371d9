"""A source's links table (issue 43 item 1): every page's links and the site's navigation, each resolved over the
source as it is at that commit, also after an incremental refresh carried the linking page forward unread."""

from __future__ import annotations

from trustindex.extractors.base import approx_token_count
from trustindex.ingest.incremental import Previous
from trustindex.ingest.source import IngestRun, ingest_source
from trustindex.schemas.config import Identities, Source
from trustindex.schemas.links import (
    BY_DOC_ID,
    BY_FOLDER,
    BY_LABEL,
    BY_OBJECT,
    BY_PATH,
    BY_ROUTE,
    EXTERNAL,
    LABEL,
    NAME,
    OBJECT,
    PAGE,
    UNRESOLVED,
)
from trustindex.schemas.policy import Policy
from trustindex.schemas.tables import doc_id_of

CONFIG = """module.exports = { presets: [['classic', ({ docs: {
  routeBasePath: '/', sidebarPath: require.resolve('./sidebars.js'),
} })]] };
"""
SIDEBARS = """module.exports = { docs: [
  { type: 'doc', id: 'guides/proof-server', label: 'Run a proof server' },
  { type: 'doc', id: 'guides/not-yet', label: 'Coming soon' },
] };
"""
PADDING = "Midnight keeps private state on the user's device and proves what the ledger needs to know.\n" * 25
INTRO = f"""# Introduction

Start with the [installation guide](./getting-started/install.md#prerequisites).

{PADDING}

## Next

Then [run a proof server](/guides/proof-server) and read the [FAQ](faq.md).

{PADDING}
"""


def _ingest(repo, data, previous=None):
    src = Source("docs", str(repo), "main", "p", include=("**/*.md",))
    return ingest_source(
        src, data, Identities(), [], Policy.default(), approx_token_count, IngestRun(previous=previous)
    )


def test_links_are_resolved_over_the_source_as_it_now_is(tmp_path):
    from tests.kits.gitutil import RepoBuilder

    rb = RepoBuilder(tmp_path / "repo")
    rb.commit(
        {
            "docusaurus.config.js": CONFIG,
            "sidebars.js": SIDEBARS,  # not included: read as evidence all the same
            "docs/intro.md": INTRO,
            "docs/getting-started/install.md": "# Install\n\n## Prerequisites\n\nNode 20.\n",
            "docs/getting-started/_category_.json": '{"label": "Getting started"}',
            "docs/getting-started/index.md": "# Getting started\n\nRead [the intro](../intro.md).\n",
            "docs/guides/proof-server.md": "# Proof server\n\nIt proves.\n",
        },
        "docs",
    )
    first = _ingest(rb.path, tmp_path / "data")
    links = {(r["path"], r["text"]): r for r in first.tables["links"].to_pylist()}
    install = links[("docs/intro.md", "installation guide")]
    assert (install["status"], install["target_path"], install["fragment"], install["resolved_by"]) == (
        PAGE,
        "docs/getting-started/install.md",
        "prerequisites",
        BY_PATH,
    )
    assert install["target_doc_id"] == doc_id_of("docs", "docs/getting-started/install.md")
    assert install["doc_id"] == doc_id_of("docs", "docs/intro.md") and install["line"] == 3
    chunks = {r["chunk_id"]: r for r in first.tables["chunks"].to_pylist()}
    assert chunks[install["chunk_id"]]["heading_path"] == ["Introduction"]  # the passage that holds it
    proof = links[("docs/intro.md", "run a proof server")]
    assert (proof["status"], proof["resolved_by"]) == (PAGE, BY_ROUTE)
    assert chunks[proof["chunk_id"]]["heading_path"] == ["Introduction", "Next"]
    assert links[("docs/intro.md", "FAQ")]["status"] == UNRESOLVED  # counted, not an error
    label = links[("sidebars.js", "Run a proof server")]
    assert (label["doc_id"], label["status"], label["resolved_by"]) == (None, PAGE, BY_DOC_ID)
    assert links[("docs/getting-started/_category_.json", "Getting started")]["resolved_by"] == BY_FOLDER
    assert links[("sidebars.js", "Coming soon")]["status"] == UNRESOLVED

    # the FAQ and the sidebar's page appear; intro.md is carried forward unread, and its link now resolves
    head = rb.commit({"docs/faq.md": "# FAQ\n\nAsk.\n", "docs/guides/not-yet.md": "# Soon\n\nHere.\n"}, "more")
    second = _ingest(rb.path, tmp_path / "data", Previous(first.commit, first.tables))
    assert second.note.startswith("incremental") and second.commit == head
    links = {(r["path"], r["text"]): r for r in second.tables["links"].to_pylist()}
    assert links[("docs/intro.md", "FAQ")]["target_path"] == "docs/faq.md"
    assert links[("sidebars.js", "Coming soon")]["target_path"] == "docs/guides/not-yet.md"
    assert len(links) == len(second.tables["links"])  # the navigation's rows once, not carried and read again


SPHINX_GUIDE = """\
Using the app
=============

Start at :doc:`/api` or :doc:`../index`; the :ref:`factory pattern <app-factories>` builds one, and
:meth:`~flask.Flask.route`, :class:`Flask` and :func:`.url_for` do the work.  :class:`werkzeug.Response` is
another project's (intersphinx): it names no page here.  See `the RFC <https://www.rfc-editor.org/rfc/rfc9110>`_.
"""
SPHINX_API = """\
API
===

.. module:: flask

.. autoclass:: Flask
   :members:

.. autofunction:: url_for
"""
SPHINX_INDEX = """\
Welcome
=======

.. _app-factories:

Application factories
---------------------

Read :doc:`guide/using`.
"""


def test_a_sphinx_site_s_roles_resolve_to_the_pages_that_define_their_names(tmp_path):
    from tests.kits.gitutil import RepoBuilder

    rb = RepoBuilder(tmp_path / "repo")
    rb.commit(
        {
            "doc/source/conf.py": "project = 'app'\n",  # the Sphinx source folder: where /api starts
            "doc/source/index.rst": SPHINX_INDEX,
            "doc/source/guide/using.rst": SPHINX_GUIDE,
            "doc/source/api.rst": SPHINX_API,
        },
        "sphinx docs",
    )
    src = Source("app", str(rb.path), "main", "p", include=("**/*.rst",))
    run = ingest_source(src, tmp_path / "data", Identities(), [], Policy.default(), approx_token_count, IngestRun())
    rows = run.tables["links"].to_pylist()
    guide = {(r["kind"], r["target"]): r for r in rows if r["path"] == "doc/source/guide/using.rst"}
    api, index = "doc/source/api.rst", "doc/source/index.rst"
    assert guide[("doc_role", "/api")]["target_path"] == api  # from the folder holding conf.py
    assert guide[("doc_role", "../index")]["target_path"] == index
    factory = guide[("ref_role", "app-factories")]
    assert (factory["status"], factory["target_path"], factory["fragment"], factory["resolved_by"]) == (
        PAGE,
        index,
        "app-factories",
        BY_LABEL,
    )
    assert factory["text"] == "factory pattern"
    for target in ("flask.Flask.route", "Flask", ".url_for"):  # enclosing class, module-less name, leading dot
        row = guide[("object_role", target)]
        assert (row["status"], row["target_path"], row["resolved_by"]) == (PAGE, api, BY_OBJECT), target
        assert row["target_doc_id"] == doc_id_of("app", api)
    assert guide[("object_role", "werkzeug.Response")]["status"] == UNRESOLVED
    assert guide[("markdown", "https://www.rfc-editor.org/rfc/rfc9110")]["status"] == EXTERNAL
    names = {(r["kind"], r["text"]): r for r in rows if r["status"] == NAME}
    assert set(names) == {
        (LABEL, "app-factories"),
        (OBJECT, "flask"),
        (OBJECT, "Flask"),
        (OBJECT, "flask.Flask"),
        (OBJECT, "url_for"),
        (OBJECT, "flask.url_for"),
    }
    assert all(r["target_doc_id"] == "" and r["target_path"] == r["path"] for r in names.values())
    back = [r for r in rows if r["path"] == index and r["kind"] == "doc_role"]
    assert [(r["status"], r["target_path"]) for r in back] == [(PAGE, "doc/source/guide/using.rst")]


def test_a_sphinx_doc_role_names_a_page_in_the_project_s_own_suffix(tmp_path):
    # Django writes its pages as .txt (conf.py: source_suffix): :doc:`topics/http/urls` is topics/http/urls.txt
    from tests.kits.gitutil import ingest_files

    files = {
        "docs/conf.py": 'extensions = []\nsource_suffix = ".txt"\nexclude_patterns = ["requirements.txt"]\n',
        "docs/index.txt": "Django\n======\n\nStart with :doc:`topics/http/urls` and :doc:`/howto/deploy`.\n",
        "docs/topics/http/urls.txt": "URL dispatcher\n==============\n\nPatterns.\n",
        "docs/howto/deploy.txt": "Deploying\n=========\n\nServers.\n",
        "docs/requirements.txt": "sphinx\n",
    }
    run = ingest_files(tmp_path, files, "django")
    targets = {r["target"]: r["target_path"] for r in run.tables["links"].to_pylist() if r["kind"] == "doc_role"}
    assert targets == {"topics/http/urls": "docs/topics/http/urls.txt", "/howto/deploy": "docs/howto/deploy.txt"}
