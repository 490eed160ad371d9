"""Routed before unrouted: a passage of a page the docs site does not serve ranks below every served candidate.

Docusaurus publishes no page under a path segment starting with ``_`` (drafts such as ``docs/_develop/``, partials),
for front matter ``draft: true`` or for a versioned folder its versions file does not list (schemas/page_routes.py;
the build names each document's status, extractors/docs_routes.py).  Its text is still in the index, where it
competes with pages a reader can open; a citation of it is a link nobody can follow.  So, unless the policy turns it
off (``fusion.unrouted_yields``), an unrouted candidate's ordering score is its own × the lowest ordering score (as
shown) among the pool's served candidates (routed, included in a routed page, or off-site): it ranks below every
one of them, keeps its order among the unrouted, and a reader sees the rule in the hit's ``ranking_terms.route``
(``served_floor``; the arithmetic is query/score.py ``yield_unrouted``).  A partial that a routed page imports is
``included``: served as part of that page.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from trustindex.schemas.hit_parts import Route, shown_number
from trustindex.schemas.page_routes import OFF_SITE, ROUTE_STATUSES, UNROUTED, effective_route

UNROUTED_CODE = ROUTE_STATUSES.index(UNROUTED)


def route_codes(documents: pa.Table, chunk_doc_row: np.ndarray) -> np.ndarray:
    """Per passage, the index in ROUTE_STATUSES of its document's effective route (a passage without a document:
    off-site); a snapshot built before documents had a route reads the ``_`` path rule."""
    cols = documents.column_names
    paths = documents.column("path").to_pylist()
    routes = documents.column("route").to_pylist() if "route" in cols else [None] * len(paths)
    part_of = documents.column("part_of").to_pylist() if "part_of" in cols else [None] * len(paths)
    statuses = (effective_route(r, p, path) for r, p, path in zip(routes, part_of, paths, strict=True))
    per_doc = [ROUTE_STATUSES.index(s) for s in statuses]
    codes = np.array([*per_doc, ROUTE_STATUSES.index(OFF_SITE)], dtype=np.int8)[chunk_doc_row]
    codes.flags.writeable = False
    return codes


def route_term(code: int, floor: float | None) -> Route:
    """The hit's ``ranking_terms.route``: its page's status and, for an unrouted page that yields, the floor."""
    status = ROUTE_STATUSES[code]
    if status == UNROUTED and floor is not None:
        return Route(status, shown_number(floor))
    return Route(status)
