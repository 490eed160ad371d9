"""A Sphinx project's pages in a suffix of its own (Django's ``source_suffix = ".txt"``) are read as
reStructuredText where the source reads its ``.rst`` pages, minus its ``exclude_patterns``; ``conf.py`` is parsed,
never run (extractors/sphinx_conf.py)."""

from __future__ import annotations

import pytest

from tests.kits.gitutil import ingest_files
from trustindex.extractors.sphinx_conf import SphinxSources, read_sphinx_conf

CONF = """import os
import sys

sys.path.insert(0, os.path.abspath("_ext"))  # never run: the crawl parses this file and executes nothing
extensions = ["djangodocs", "sphinx.ext.intersphinx"]
source_suffix = ".txt"
exclude_patterns = ["_build", "_theme", "requirements.txt"]
version = get_version()  # computed when Sphinx runs: not known here, and not needed
"""
MODELS = """======
Models
======

A model is the single source of information about your data.

Field options
=============

``null``: if ``True``, the database stores empty values as ``NULL``.
"""
FILES = {
    "README.rst": "Web framework\n=============\n\nFor perfectionists.\n",
    "docs/conf.py": CONF,
    "docs/index.txt": "Documentation\n=============\n\nStart with the tutorial.\n",
    "docs/topics/db/models.txt": MODELS,
    "docs/requirements.txt": "sphinx>=8\npyenchant\n",  # Sphinx excludes it: no page
    "docs/_build/html/models.txt": "Models\n======\n\nA built copy.\n",
    "app/conf.py": "DEBUG = True\n",  # no Sphinx configuration: its folder's .txt files stay plain
    "app/notes.txt": "notes\n",
}


def _ingest(tmp_path, include: str = "") -> dict:
    run = ingest_files(tmp_path, FILES, "web", include)
    return {name: t.to_pylist() for name, t in run.tables.items()}


def test_conf_py_is_read_as_literals_never_run():
    conf = read_sphinx_conf("docs/conf.py", CONF)
    assert conf is not None and (conf.root, conf.suffixes) == ("docs/", (".txt",))
    assert conf.exclude == ("_build", "_theme", "requirements.txt")
    assert read_sphinx_conf("app/conf.py", "DEBUG = True\n") is None  # no Sphinx setting
    assert read_sphinx_conf("conf.py", "def broken(:\n") is None
    both = read_sphinx_conf("conf.py", 'source_suffix = {".rst": "restructuredtext", ".md": "markdown", ".txt": None}')
    assert both is not None and (both.root, both.suffixes) == ("", (".rst", ".txt"))  # MyST Markdown stays Markdown
    assert read_sphinx_conf("d/conf.py", "html_theme = 'alabaster'\n").suffixes == (".rst",)  # Sphinx's default
    sources = SphinxSources.of([conf])
    assert sources.widen(("src/**/*.md",), ()) == (("src/**/*.md",), ())  # reads none of the project's pages


@pytest.mark.parametrize("include", ["", 'include = ["docs/**/*.txt", "**/*.rst"]\n'], ids=["default", "explicit"])
def test_a_sphinx_projects_txt_pages_are_read_as_restructuredtext(tmp_path, include):
    tables = _ingest(tmp_path, include)
    report = {r["path"]: (r["status"], r["rule"]) for r in tables["ingest_report"]}
    assert report["docs/topics/db/models.txt"] == ("ingested", "")
    assert report["docs/index.txt"] == ("ingested", "")
    assert report["docs/requirements.txt"][0] == "skipped"
    assert report["docs/_build/html/models.txt"][0] == "skipped"
    assert report["app/notes.txt"] == ("skipped", "not_included")
    kinds = {r["path"]: r["kind"] for r in tables["documents"]}
    assert kinds["docs/topics/db/models.txt"] == "restructuredtext" and kinds["README.rst"] == "restructuredtext"
    headings = {tuple(r["heading_path"]) for r in tables["chunks"] if r["path"] == "docs/topics/db/models.txt"}
    assert ("Models", "Field options") in headings  # cut by its section titles, not into plain line windows
