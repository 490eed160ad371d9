"""Partials cited as part of the page that renders them (issue 43): a source-wide pass once every page is read.

A file the site publishes no page for (a ``_`` partial) or that lies outside the site's folders, rendered by a routed
page of the same source through an MDX import (extractors/mdx_includes.py) or a reStructuredText ``.. include::``
(extractors/rst_includes.py, Flask's changelog on its Changes page), is indexed with its own path and lines
(where its text is written) and cited at that page: ``part_of`` names the page, ``page_url`` is the page's.  A
search reads it as ``included``, a served page (schemas/page_routes.py).  Several pages may render one partial: the
first by path is named.  A partial rendered by a partial is part of the routed page at the top of the chain.

The pass starts from each row's own status every time (an incremental refresh carries rows forward whose importer
may have changed), so a partial no page renders any more loses its ``part_of``.
"""

from __future__ import annotations

from trustindex.extractors.docs_routes import DocsRoutes
from trustindex.extractors.mdx_includes import SITE_ALIAS
from trustindex.ingest.rows import Row
from trustindex.schemas.page_routes import ROUTED
from trustindex.schemas.page_url import heading_anchor

MAX_CHAIN = 8  # partials rendered by partials: deeper chains (or cycles) stop here


def attach_partials(documents: list[Row], routes: DocsRoutes) -> None:
    """Set ``part_of`` and ``page_url`` of every document that a routed page of these ``documents`` renders."""
    by_path = {r["path"]: r for r in documents}
    for r in documents:
        if r["route"] != ROUTED:  # an unrouted or off-site file has no page of its own
            r["part_of"], r["page_url"] = "", ""
    importers = sorted((r for r in documents if r.get("includes")), key=lambda r: r["path"])
    for _ in range(MAX_CHAIN):
        changed = False
        for r in importers:
            page = r["path"] if r["route"] == ROUTED else r["part_of"]
            if not page:
                continue
            for target in (by_path.get(_resolved(inc, r["path"], routes)) for inc in r["includes"]):
                if target is None or target["route"] == ROUTED or target["part_of"]:
                    continue
                target["part_of"], target["page_url"] = page, by_path[page]["page_url"]
                changed = True
        if not changed:
            return


def _resolved(include: str, importer: str, routes: DocsRoutes) -> str:
    """An ``@site/`` import against the importing page's site root (a Sphinx include from ``/``: its source
    folder); a repository path as it is."""
    if include.startswith(SITE_ALIAS):
        return routes.site_root(importer) + include[len(SITE_ALIAS) :]
    return include


def reanchor_partials(documents: list[Row], chunks: list[Row], routes: DocsRoutes) -> None:
    """A partial's sections as the page that renders it ids them: a passage's anchor was its own file's generator's
    slug (ingest/rows.py), and Flask's CHANGES.rst, off the site, is rendered by a Sphinx page (``Version 2.3.1`` is
    ``#version-2-3-1`` there, not github-slugger's ``#version-231``).  An id the heading set itself stays."""
    pages = {r["doc_id"]: (r["path"], r["part_of"]) for r in documents if r.get("part_of")}
    for c in chunks:
        if c["doc_id"] not in pages or not c["heading_path"]:
            continue
        path, page = pages[c["doc_id"]]
        own, rendered = routes.generator(path), routes.generator(page)
        heading = c["heading_path"][-1]
        if own != rendered and c["anchor"] == heading_anchor(heading, own):
            c["anchor"] = heading_anchor(heading, rendered)
