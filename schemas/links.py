"""The site's links as evidence: the vocabulary of the ``links`` table, and how a site's URL is compared.

A link is what another author called a page: its anchor text names the page in the words of someone who did not
write it, and a page many other pages link to is one the site itself points readers at.  extractors/links.py reads
a page's Markdown/MDX links, extractors/rst_links.py a reStructuredText page's (and the names it defines for Sphinx's
roles), extractors/site_nav.py a Docusaurus site's sidebars and ``_category_`` labels; extractors/link_targets.py
resolves each to a page of its source; warehouse/page_links.py resolves links to another source's published site and
turns them into the snapshot's ``page_links/`` index, which query/page_links.py reads.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

# An inline link or image as written, ``[words](target)`` or ``![alt](src)``, defined once: where the words of a
# heading, a sentence or a table cell are wanted, a link keeps its words (group 1) and loses its target.  Read by
# the slugger (schemas/page_url.py), the heading path (extractors/markdown.py), deprecation reasons and the cells of
# compatibility tables; extractors/links.py reads links as evidence with a parser of its own (nested brackets, titles).
INLINE_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


def link_words(text: str) -> str:
    """``text`` with every inline link or image replaced by its words (an image by its alt text)."""
    return INLINE_LINK.sub(r"\1", text)


# Where a link was written (the links table's ``kind``)
MARKDOWN = "markdown"  # [text](target)
REFERENCE = "reference"  # [text][label] with a [label]: target definition
AUTOLINK = "autolink"  # <https://...>
HTML = "html"  # <a href>, <Link to>, a JSX element with href= (MDX)
SIDEBAR = "sidebar"  # a sidebar's doc item (target: the doc id) or a category linked to a doc
SIDEBAR_HREF = "sidebar_href"  # a sidebar's link item (target: a URL or route)
CATEGORY = "category"  # a _category_ file's label (target: its folder)
# reStructuredText (Sphinx) roles: extractors/rst_links.py
DOC_ROLE = "doc_role"  # :doc:`target`: a page by its document name
REF_ROLE = "ref_role"  # :ref:`label`: the section a ``.. _label:`` target names
OBJECT_ROLE = "object_role"  # :func:`name`, :class:`name`, ...: the object a directive documents
# Names a reStructuredText page defines for other pages' roles (rows of status NAME; no link)
LABEL = "label"  # .. _label: before a section
OBJECT = "object"  # an object an .. auto*:: or .. py:*:: directive documents
LINK_KINDS = (MARKDOWN, REFERENCE, AUTOLINK, HTML, SIDEBAR, SIDEBAR_HREF, CATEGORY, DOC_ROLE, REF_ROLE, OBJECT_ROLE)
NAME_KINDS = (LABEL, OBJECT)
NAVIGATION_KINDS = (SIDEBAR, SIDEBAR_HREF, CATEGORY)  # written in the site's navigation, not on a page

# What a link points at (the links table's ``status``)
PAGE = "page"  # a page of the index (target_source, target_path, target_doc_id)
FILE = "file"  # a file of the repository that is no page of the index (an image, a script)
EXTERNAL = "external"  # a URL outside every indexed site
UNRESOLVED = "unresolved"  # nothing it could name: counted, never an error
NAME = "name"  # no link: a name the page defines for other pages' roles (a NAME_KINDS row, target_path its own)
LINK_STATUSES = (PAGE, FILE, EXTERNAL, UNRESOLVED, NAME)

# How a page was found (``resolved_by``)
BY_FRAGMENT = "fragment"  # "#section": the linking page itself
BY_PATH = "path"  # a file path, relative to the page or to a content folder
BY_ROUTE = "route"  # a route of the site (Docusaurus routing: slugs, ids, number prefixes, versions)
BY_DOC_ID = "doc_id"  # a sidebar's doc id
BY_FOLDER = "folder"  # a category's folder: its index page
BY_SITE_URL = "site_url"  # an absolute URL of a source's published site (the documents' page_url)
BY_LABEL = "label"  # a :ref: role's label, defined by a page of the source
BY_OBJECT = "object"  # a Python domain role's object (or the nearest enclosing one) a page of the source documents


def split_target(target: str) -> tuple[str, str]:
    """``target`` without its query and fragment, and the fragment ("" when none)."""
    head, _sep, fragment = target.partition("#")
    return head.partition("?")[0], fragment


def site_key(url: str) -> str | None:
    """An http(s) URL as a site's page is compared: host lower-cased, no scheme, query, fragment, ``index.html`` or
    ``.html`` and no trailing slash, percent-escapes decoded; None for anything that is not an http(s) URL."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    path = unquote(parts.path)
    for suffix in ("/index.html", ".html"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
    return f"{parts.netloc.lower()}/{path.strip('/')}".rstrip("/")
