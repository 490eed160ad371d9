"""A source that names no include reads every documentation markup trustindex extracts (schemas/config.py
DOCS_INCLUDE): a Sphinx project a new user adds without one is indexed by its reStructuredText pages, not only by its
README, and its code stays out, skipped by the named rule."""

from __future__ import annotations

from tests.kits.gitutil import ingest_files

GUIDE = """Handling errors
===============

Register an error handler for a status code.

Returning a 404 page
--------------------

Use ``errorhandler(404)`` on the application and return the page with the status.
"""


def test_a_source_without_include_indexes_its_sphinx_pages_and_skips_its_code(tmp_path):
    files = {
        "README.md": "# app\n\nA small web framework.\n",
        "docs/conf.py": "project = 'app'\n",
        "docs/errorhandling.rst": GUIDE,
        "src/app/__init__.py": "def errorhandler(code):\n    return code\n",
    }
    run = ingest_files(tmp_path, files)  # no include: the default
    report = {r["path"]: r for r in run.tables["ingest_report"].to_pylist()}
    assert report["docs/errorhandling.rst"]["status"] == "ingested"
    assert report["README.md"]["status"] == "ingested"
    assert (report["src/app/__init__.py"]["status"], report["src/app/__init__.py"]["rule"]) == (
        "skipped",
        "not_included",
    )
    # read as reStructuredText: cut by its section titles, not into plain line windows
    headings = {
        tuple(r["heading_path"]) for r in run.tables["chunks"].to_pylist() if r["path"] == "docs/errorhandling.rst"
    }
    assert ("Handling errors", "Returning a 404 page") in headings
