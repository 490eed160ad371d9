"""A Sphinx project's pages are cited where its site publishes them (extractors/sphinx_routes.py): the source files
of a ``conf.py`` folder at the site's root, as the builder that ``.readthedocs.yaml`` names writes them (``html``
by default, ``dirhtml`` as Flask builds), its ``exclude_patterns`` unrouted, the rest off the site; each section
at the id docutils gives it."""

from __future__ import annotations

import pytest

from tests.kits.gitutil import ingest_files
from trustindex.extractors.docs_routes import load_docs_routes
from trustindex.extractors.rst_includes import included_files
from trustindex.extractors.sphinx_routes import readthedocs_builders
from trustindex.schemas.page_url import SPHINX, heading_anchor, passage_page_url

CONF = """# Sphinx runs this file; it is read here as literals only
import packaging.version
from pallets_sphinx_themes import get_version

project = "Flask"
release, version = get_version("Flask")
extensions = ["sphinx.ext.autodoc", "pallets_sphinx_themes"]
exclude_patterns = ["_build", "drafts"]
html_theme = "flask"
"""
DIRHTML = "version: 2\nbuild:\n  commands:\n    - uv run sphinx-build -W -b dirhtml docs $READTHEDOCS_OUTPUT/html\n"
BODY = "Its own words. " * 80  # a section long enough to be a passage of its own
PAGES = ["docs/index.rst", "docs/quickstart.rst", "docs/patterns/index.rst", "docs/patterns/celery.rst"]
FILES = {
    "docs/conf.py": CONF,
    **{p: f"Title\n=====\n\n{BODY}\n" for p in PAGES},
    "docs/drafts/idea.rst": "Idea\n====\n\nNot yet.\n",
    "docs/notes.md": "# Notes\n\nNo MyST here: Sphinx reads no Markdown.\n",
    "CHANGES.rst": "Version 3.1\n-----------\n\nReleased.\n",
    "docs/changes.rst": "Changes\n=======\n\n.. include:: ../CHANGES.rst\n",
}


def routes(files: dict[str, str]):
    return load_docs_routes(list(files), {p: t.encode() for p, t in files.items() if not p.endswith((".rst", ".md"))})


HTML_ROUTES = ["", "quickstart.html", "patterns/index.html", "patterns/celery.html"]
DIRHTML_ROUTES = ["", "quickstart/", "patterns/", "patterns/celery/"]


@pytest.mark.parametrize(
    ("rtd", "expected"),
    [
        (None, HTML_ROUTES),  # Sphinx's default builder
        (DIRHTML, DIRHTML_ROUTES),  # a sphinx-build command's -b
        ("version: 2\nsphinx:\n  configuration: docs/conf.py\n  builder: dirhtml\n", DIRHTML_ROUTES),
        ("version: 2\nsphinx:\n  configuration: other/conf.py\n  builder: dirhtml\n", HTML_ROUTES),  # not ours
    ],
)
def test_routes_follow_the_builder_read_the_docs_is_told(rtd, expected):
    r = routes({**FILES, **({".readthedocs.yaml": rtd} if rtd else {})})
    assert [r.resolve(p).route for p in PAGES] == expected
    status = {p: r.resolve(p).status for p in ("docs/drafts/idea.rst", "docs/notes.md", "CHANGES.rst")}
    assert status == {"docs/drafts/idea.rst": "unrouted", "docs/notes.md": "off_site", "CHANGES.rst": "off_site"}


def test_what_a_readthedocs_yaml_says_and_what_it_does_not():
    assert readthedocs_builders(DIRHTML) == {None: "dirhtml"}
    assert (
        readthedocs_builders("build:\n  commands:\n    - python -m sphinx -M html docs out\n") == {}
    )  # no sphinx-build
    assert readthedocs_builders("build:\n  commands:\n    - sphinx-build -M dirhtml docs out\n") == {None: "dirhtml"}
    assert readthedocs_builders("sphinx:\n  builder: singlehtml\n") == {}  # one page: no route per file
    assert readthedocs_builders("[not: yaml") == {} and readthedocs_builders("- a list") == {}
    padded = "build:\n  commands:\n    - sphinx-build " + "-W " * 2000 + "-b dirhtml docs out\n"
    assert readthedocs_builders(padded) == {}  # a command is read in its first 2,000 characters only
    assert readthedocs_builders("!!python/object/apply:os.system ['true']") == {}  # a safe loader runs nothing


def test_myst_markdown_is_a_page_where_the_project_reads_it():
    myst = {**FILES, "docs/conf.py": CONF.replace('"pallets_sphinx_themes"', '"myst_parser"')}
    assert routes(myst).resolve("docs/notes.md").route == "notes.html"


def test_a_sphinx_section_is_cited_at_the_id_docutils_gives_it(tmp_path):
    page = f"Quickstart\n==========\n\n{BODY}\n\nA Minimal Application\n---------------------\n\n{BODY}\n\n"
    page += f"2.0 Changes\n-----------\n\n{BODY}\n"
    files = {**FILES, ".readthedocs.yaml": DIRHTML, "docs/quickstart.rst": page}
    run = ingest_files(tmp_path, files, "flask", 'site_url = "https://flask.example/en/stable"\n')
    docs = {r["doc_id"]: (r["path"], r["route"], r["page_url"]) for r in run.tables["documents"].to_pylist()}
    by_path = {path: (route, url) for path, route, url in docs.values()}
    assert by_path["docs/quickstart.rst"] == ("routed", "https://flask.example/en/stable/quickstart/")
    assert by_path["docs/drafts/idea.rst"] == ("unrouted", "")
    # off the site, but included by its Changes page: cited there (as an MDX partial is)
    assert by_path["CHANGES.rst"] == ("off_site", "https://flask.example/en/stable/changes/")
    part_of = {r["path"]: r["part_of"] for r in run.tables["documents"].to_pylist()}
    assert part_of["CHANGES.rst"] == "docs/changes.rst" and part_of["docs/quickstart.rst"] == ""
    # its sections at the ids the Sphinx page gives them (github-slugger would say #version-31)
    (changes,) = [c for c in run.tables["chunks"].to_pylist() if docs[c["doc_id"]][0] == "CHANGES.rst"]
    cited_at = passage_page_url(by_path["CHANGES.rst"][1], changes["heading_path"], False, changes["anchor"])
    assert cited_at == "https://flask.example/en/stable/changes/#version-3-1"
    cited = {
        c["heading_path"][-1]: passage_page_url(docs[c["doc_id"]][2], c["heading_path"], anchor=c["anchor"])
        for c in run.tables["chunks"].to_pylist()
        if docs[c["doc_id"]][0] == "docs/quickstart.rst" and len(c["heading_path"]) > 1
    }
    assert cited == {
        "A Minimal Application": "https://flask.example/en/stable/quickstart/#a-minimal-application",
        "2.0 Changes": "https://flask.example/en/stable/quickstart/#changes",  # an id starts with no digit
    }
    assert heading_anchor("Using ``url_for``", SPHINX) == "using-url-for"


def test_the_files_a_page_includes():
    page = ".. include:: ../CHANGES.rst\n.. include:: /shared/note.rst\n.. include:: <isonum.txt>\n"
    page += "   .. include:: part.rst\n.. include:: ../../../outside.rst\n.. include:: ../CHANGES.rst\n"
    assert included_files(page, "docs/changes.rst") == ["CHANGES.rst", "@site/shared/note.rst", "docs/part.rst"]


def test_a_config_the_include_reads_itself_still_routes_the_site(tmp_path):
    files = {**FILES, ".readthedocs.yaml": DIRHTML}
    include = 'include = ["**/*.rst", "**/*.py", ".readthedocs.yaml"]\nsite_url = "https://flask.example"\n'
    run = ingest_files(tmp_path, files, "flask", include)
    pages = {r["path"]: r["page_url"] for r in run.tables["documents"].to_pylist()}
    assert pages["docs/patterns/celery.rst"] == "https://flask.example/patterns/celery/"
