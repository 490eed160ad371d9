"""One source's ``links`` rows: each page's links as extracted, its site's navigation, each resolved to its page
(a reStructuredText page's ``:ref:`` and object roles against the names the source's pages define).

A page's links are extracted with the page (``page_link_rows``) and carried forward with it by an incremental
refresh; what they name depends on the whole tree (a page added since makes an old link resolve), so every row is
resolved again at the end of each ingest, over the source's pages as they now are (``resolve_links``).  The
navigation files (sidebars, ``_category_`` labels) are read every run, like the Docusaurus config, whatever the
include globs say: they are evidence about pages, not pages.
"""

from __future__ import annotations

import bisect
import json
import logging

from trustindex.crawl.git import read_blob
from trustindex.extractors.docs_routes import DocsRoutes
from trustindex.extractors.globs import first_match
from trustindex.extractors.link_targets import Resolution, SiteLinks, SphinxNames
from trustindex.extractors.links import PageLink, page_links
from trustindex.extractors.restructuredtext import KIND as RST_KIND
from trustindex.extractors.rst_links import rst_links
from trustindex.extractors.site_nav import MAX_NAV_BYTES, is_navigation_file, navigation_links
from trustindex.schemas.links import NAME, NAME_KINDS, OBJECT_ROLE, PAGE, REF_ROLE

log = logging.getLogger(__name__)
Row = dict
MARKDOWN_KIND = "markdown"
LINKED_KINDS = (MARKDOWN_KIND, RST_KIND)  # the documents' kinds whose pages' links are read


def page_link_rows(
    doc_id: str, source: str, path: str, text: str, chunks: list[Row], kind: str = MARKDOWN_KIND
) -> list[Row]:
    """The links of one Markdown/MDX or reStructuredText page, each in the passage whose lines hold it, not yet
    resolved; a reStructuredText page's names (labels, documented objects) as rows of their own."""
    if kind == RST_KIND:
        links, names = rst_links(text)
        links += [PageLink(n.kind, n.name, "", n.line) for n in names]
    else:
        links = page_links(text)
    starts = [c["start_line"] for c in chunks]
    out = []
    for link in links:
        at = bisect.bisect_right(starts, link.line) - 1
        chunk = chunks[at] if at >= 0 and link.line <= chunks[at]["end_line"] else None
        out.append(_row(doc_id, chunk["chunk_id"] if chunk else None, source, path, link))
    return out


def _row(doc_id: str | None, chunk_id: str | None, source: str, path: str, link: PageLink) -> Row:
    return {
        "doc_id": doc_id,
        "chunk_id": chunk_id,
        "source": source,
        "path": path,
        "line": link.line,
        "kind": link.kind,
        "text": link.text,
        "target": link.target,
    }


def navigation_files(repo, entries, source, max_bytes: int = MAX_NAV_BYTES) -> dict[str, bytes]:
    """The bytes of the source's sidebars and ``_category_`` files (an explicit exclude is respected; a file
    that cannot be read is no evidence)."""
    out: dict[str, bytes] = {}
    for e in entries:
        if not is_navigation_file(e.path) or e.is_symlink or e.is_submodule or e.invalid or e.missing:
            continue
        if e.size > max_bytes or first_match(e.path, source.exclude):
            continue
        try:
            out[e.path] = read_blob(repo, e.sha)
        except Exception:  # a missing object: as if absent
            continue
    return out


def navigation_rows(source: str, files: dict[str, bytes]) -> list[Row]:
    """The site's navigation labels as link rows (no page holds them: no doc_id, no chunk_id).  A file that cannot
    be read is no evidence and fails nothing."""
    rows = []
    for path, data in sorted(files.items()):
        try:
            links = navigation_links(path, data)
        except Exception as exc:  # a reader's bug on hostile input: that file alone is left out
            log.warning("navigation file %s not read: %s: %s", path, type(exc).__name__, exc)
            continue
        rows += [_row(None, None, source, path, link) for link in links]
    return rows


def resolve_links(
    source: str, link_rows: list[Row], documents: list[Row], tree_paths: list[str], routes: DocsRoutes
) -> list[Row]:
    """Every link row with what it names in this source (``status``, ``target_*``, ``fragment``,
    ``resolved_by``); a URL is left ``external`` for the build to match against the sources' published sites."""
    pages = {d["path"]: _front_matter(d) for d in documents if d["kind"] in LINKED_KINDS}
    doc_ids = {d["path"]: d["doc_id"] for d in documents}
    site = SiteLinks(pages, tree_paths, routes)
    names = SphinxNames.of(row for row in link_rows if row["kind"] in NAME_KINDS and row["path"] in pages)
    out = []
    for row in link_rows:
        kind = row["kind"]
        if kind in NAME_KINDS:
            r = Resolution(NAME, row["path"], row["text"])
        elif kind in (REF_ROLE, OBJECT_ROLE):
            r = names.resolve(kind, row["target"])
        else:
            r = site.resolve(row["path"], kind, row["target"])
        page = r.status == PAGE
        out.append(
            {
                **row,
                "status": r.status,
                "target_source": source if r.path else "",
                "target_path": r.path,
                "target_doc_id": doc_ids.get(r.path, "") if page else "",
                "fragment": r.fragment,
                "resolved_by": r.by,
            }
        )
    return out


def _front_matter(document: Row) -> dict:
    try:
        fm = json.loads(document.get("front_matter") or "{}")
    except ValueError:
        return {}
    return fm if isinstance(fm, dict) else {}
