"""The site's links, across sources, turned into the snapshot's ``page_links/`` index.

Each source's ingest resolved its own links (ingest/links.py); here, with every source's pages known, a link left
``external`` whose URL is a page of an indexed source's published site (a documents row's ``page_url``: the
source's ``site_url`` and the site's routing) is resolved to that page, so another repository's
``https://docs.example/guides/x`` counts as a link to the page.  Then, per page (a documents row):

- its anchor texts: the text of every link to it from another page or from its site's navigation (a sidebar or
  ``_category_`` label), each distinct (linking file, text) pair once, as one text, BM25-indexed with the pages as
  documents (``ANCHORS_DIR``): what other authors call the page, a lexical field of its own;
- its inbound links: the number of other pages of its own source, outside its own folder, that link to it
  (``INBOUND``): how much the rest of its site points readers at it.  A folder's own pages linking to each other and
  to their index are its navigation (generated API references link every page back to their README: ~250 links
  each on the real docs), not the site's judgement, so they do not count (real docs, dev half: nDCG@10 0.8798 with
  them, 0.8831 without; docs/benchmarks.md).  Only its own source counts, so another repository's links lend
  words, never standing, and the query side saturates the count (query/page_links.py), so no number of links
  lifts a page far.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa

from trustindex.schemas.links import BY_SITE_URL, EXTERNAL, PAGE, site_key, split_target
from trustindex.schemas.snapshot import ANCHORS_DIR, INBOUND
from trustindex.schemas.tables import table_from_rows
from trustindex.warehouse.bm25 import build_bm25


def resolve_site_urls(links: pa.Table, documents: pa.Table) -> pa.Table:
    """``links`` with every ``external`` URL that names a page of an indexed source's published site resolved to
    that page (``resolved_by`` ``site_url``); the rows stay in their order."""
    by_url: dict[str, tuple[str, str, str]] = {}
    # a partial cites the page that renders it (ingest/includes.py): that URL names the page, not the partial
    part_of = documents.column("part_of").to_pylist() if "part_of" in documents.column_names else []
    for i, (doc_id, source, path, url) in enumerate(
        zip(*(documents.column(c).to_pylist() for c in ("doc_id", "source", "path", "page_url")), strict=True)
    ):
        key = site_key(url) if url and not (part_of and part_of[i]) else None
        if key is not None:
            by_url.setdefault(key, (source, path, doc_id))
    status = links.column("status").to_pylist()
    if not by_url or EXTERNAL not in status:
        return links
    rows = links.to_pylist()
    for row in rows:
        if row["status"] != EXTERNAL:
            continue
        head, fragment = split_target(row["target"])
        key = site_key(head)
        found = by_url.get(key) if key is not None else None
        if found is not None:
            row.update(
                status=PAGE,
                target_source=found[0],
                target_path=found[1],
                target_doc_id=found[2],
                fragment=fragment,
                resolved_by=BY_SITE_URL,
            )
    return table_from_rows("links", rows)


def page_link_evidence(links: pa.Table, documents: pa.Table) -> tuple[list[str], np.ndarray]:
    """Per documents row: its anchor texts as one text (one line each) and its inbound links from other pages of
    its own source outside its own folder."""
    row_of = {d: i for i, d in enumerate(documents.column("doc_id").to_pylist())}
    source_of = documents.column("source").to_pylist()
    folder_of = [posixpath.dirname(p) + "/" for p in documents.column("path").to_pylist()]
    texts: dict[int, dict[tuple[str, str], None]] = defaultdict(dict)
    linking: dict[int, set[str]] = defaultdict(set)
    cols = ("status", "target_doc_id", "doc_id", "source", "path", "text")
    for status, target, doc, source, path, text in zip(*(links.column(c).to_pylist() for c in cols), strict=True):
        at = row_of.get(target) if status == PAGE else None
        if at is None or doc == target:  # a page's links to itself are its own words
            continue
        if text:
            texts[at].setdefault((doc or path, text), None)
        if doc is not None and source == source_of[at] and not path.startswith(folder_of[at]):
            linking[at].add(doc)
    n = documents.num_rows
    anchor_texts = ["\n".join(t for _by, t in texts[i]) if i in texts else "" for i in range(n)]
    inbound = np.zeros(n, dtype=np.int32)
    for at, docs in linking.items():
        inbound[at] = len(docs)
    return anchor_texts, inbound


def write_page_links(build_dir: Path, links: pa.Table, documents: pa.Table) -> dict[str, int]:
    """The ``page_links/`` index of a build; what it holds, counted."""
    texts, inbound = page_link_evidence(links, documents)
    build_bm25(texts, Path(build_dir) / ANCHORS_DIR)
    with open(Path(build_dir) / INBOUND, "wb") as f:
        np.save(f, inbound, allow_pickle=False)
    return {"pages_with_anchor_text": sum(1 for t in texts if t), "pages_linked": int((inbound > 0).sum())}
