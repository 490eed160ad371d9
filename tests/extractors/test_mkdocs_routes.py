"""An MkDocs site's pages are cited where it publishes them (extractors/mkdocs_routes.py): the pages of its
``docs_dir`` at the site's root as folders, its excluded and draft pages unrouted, the rest off the site;
``mkdocs.yml``'s Python and environment tags read as nothing (never imported)."""

from __future__ import annotations

from tests.kits.gitutil import ingest_files
from trustindex.extractors.docs_routes import load_docs_routes
from trustindex.extractors.mkdocs_routes import read_mkdocs_config

CONFIG = """site_name: Web API
site_url: https://elsewhere.example/  # the operator's site_url decides, not this
exclude_docs: |
  drafts/
  /internal.md
draft_docs: |
  upcoming.md
markdown_extensions:
  - pymdownx.superfences:
      custom_fences:
        - name: mermaid
          class: mermaid
          format: !!python/name:pymdownx.superfences.fence_code_format
  - toc:
      permalink: !ENV [PERMALINK, true]
"""
CORS = "# CORS { #cors }\n\n## Allow an origin { #allow-an-origin }\n\nAdd the middleware and list the origins.\n"
FILES = {
    "mkdocs.yml": CONFIG,
    "docs/index.md": "# Web API\n\nA web framework.\n",
    "docs/tutorial/cors.md": CORS,
    "docs/tutorial/index.md": "# Tutorial\n\nStep by step.\n",
    "docs/drafts/plan.md": "# Plan\n\nNot yet.\n",
    "docs/internal.md": "# Internal\n\nFor maintainers.\n",
    "docs/upcoming.md": "# Upcoming\n\nSoon.\n",
    "docs/.overrides/main.md": "# Theme\n",
    "README.md": "# Web API\n\nSee the docs.\n",
}


def test_routes_of_an_mkdocs_site():
    routes = load_docs_routes(list(FILES), {"mkdocs.yml": CONFIG.encode()})
    got = {p: (r.status, r.route) for p in FILES if p.endswith(".md") for r in [routes.resolve(p)]}
    assert got == {
        "docs/index.md": ("routed", ""),
        "docs/tutorial/cors.md": ("routed", "tutorial/cors/"),
        "docs/tutorial/index.md": ("routed", "tutorial/"),
        "docs/drafts/plan.md": ("unrouted", None),
        "docs/internal.md": ("unrouted", None),
        "docs/upcoming.md": ("unrouted", None),
        "docs/.overrides/main.md": ("unrouted", None),
        "README.md": ("off_site", None),
    }
    flat = read_mkdocs_config("site/mkdocs.yml", "docs_dir: pages\nuse_directory_urls: false\n")
    assert flat is not None and (flat.root, flat.docs, flat.directory_urls) == ("site/", "site/pages/", False)
    flat_routes = load_docs_routes(
        ["site/mkdocs.yml"], {"site/mkdocs.yml": b"docs_dir: pages\nuse_directory_urls: false\n"}
    )
    assert (
        flat_routes.route("site/pages/a/b.md") == "a/b.html"
        and flat_routes.route("site/pages/a/index.md") == "a/index.html"
    )
    assert read_mkdocs_config("mkdocs.yml", "docs_dir: ../../elsewhere\n") is None  # outside the repository
    assert read_mkdocs_config("mkdocs.yml", "- a list\n") is None


def test_an_mkdocs_page_is_cited_at_its_published_url(tmp_path):
    run = ingest_files(tmp_path, FILES, "api", 'site_url = "https://api.example.com"\n')
    docs = {r["path"]: (r["route"], r["page_url"]) for r in run.tables["documents"].to_pylist()}
    assert docs["docs/tutorial/cors.md"] == ("routed", "https://api.example.com/tutorial/cors/")
    assert docs["docs/drafts/plan.md"] == ("unrouted", "")
    assert docs["README.md"] == ("off_site", "")
    report = {r["path"]: (r["status"], r["rule"]) for r in run.tables["ingest_report"].to_pylist()}
    assert report["mkdocs.yml"] == ("skipped", "not_included")  # read as evidence only
