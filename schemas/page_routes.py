"""Whether the docs site serves a page, as evidence: the vocabulary of ``documents.route`` and the rule a search reads.

``extractors/docs_routes.py`` names each document's route status at build time from the site's Docusaurus config
(or Docusaurus's defaults where a repository has none): a page the site publishes is ``routed``; a page inside the
site's content folders that the site does not publish (under a path segment starting with ``_``, front matter
``draft: true``, a versioned folder the versions file does not list) is ``unrouted``; anything outside them (code,
a README at the root, a repository without a site) is ``off_site`` and is cited at its hosting URL.  A file that a
routed page renders through an MDX import is shown on that page: ``documents.part_of`` names the page, and the
passage is ``included`` (cited at the page's URL) whatever its own status.

A search places every unrouted passage below every served one (query/routes.py): a reader cannot open it.
"""

from __future__ import annotations

ROUTED = "routed"  # the site publishes the page at its route
UNROUTED = "unrouted"  # in the site's content folders, but the site serves no page for it (drafts, partials)
OFF_SITE = "off_site"  # not a page of a docs site: cited at its hosting URL
INCLUDED = "included"  # rendered inside a routed page that imports it (documents.part_of names the page)
ROUTE_STATUSES = (ROUTED, UNROUTED, OFF_SITE, INCLUDED)


def unpublished_path(path: str) -> bool:
    """Whether a repository path has a folder or file name that starts with ``_``: Docusaurus (the docs, blog and
    pages plugins' default ``exclude``) serves no page for it (partials, drafts, hidden sections).  The whole rule
    for a snapshot built before documents had a route status."""
    return any(part.startswith("_") for part in path.split("/"))


def effective_route(route: str | None, part_of: str | None, path: str) -> str:
    """A document's status as a search reads it: ``included`` when a routed page renders it; the stored status
    otherwise; for a snapshot without route columns, unrouted by the ``_`` path rule, else off-site."""
    if part_of:
        return INCLUDED
    if route in ROUTE_STATUSES:
        return route
    return UNROUTED if unpublished_path(path) else OFF_SITE
