"""The citable URL of a passage: its page on the published site, with the anchor of its heading.

A heading's anchor is the id its site generator gives it: the id the heading sets itself (Docusaurus and VitePress
``## Install {#setup}``, MkDocs's attribute list ``{ #setup }``, react.dev's ``{/*setup*/}``), else the generator's
slug of its text.  Each generator slugs alike in spirit and differently in detail (``app.mount()`` is
``appmount`` to github-slugger and ``app-mount`` to VitePress), so the build records each passage's anchor with
the generator of its page (``chunks.anchor``, ingest/rows.py) and the query cites it (query/response.py); a snapshot
written before that column reads the Docusaurus slug of the heading's text, as before.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from trustindex.schemas.links import link_words

_CUSTOM_ID = re.compile(r"\s*\{#([^}\s]+)\}\s*$")
_MARKUP = re.compile(r"[`*~]|<[^>]+>")
# github-slugger keeps letters, numbers, marks, connector punctuation (_), hyphens and spaces
_DROP = re.compile(r"[^\w\- ]", re.UNICODE)
# VitePress (@mdit-vue/shared slugify): control characters dropped, every run of these specials one hyphen
_VP_CONTROL = re.compile(r"[\u0000-\u001f]")
_VP_SPECIAL = re.compile(r"[\s~`!@#$%^&*()\-_+=\[\]{}|\\;:\"'“”‘’<>,.?/]+")
_COMBINING = re.compile(r"[\u0300-\u036f]")
# Python-Markdown's toc extension (MkDocs's default slugify): ASCII only, word characters, spaces and hyphens kept
_MD_DROP = re.compile(r"[^\w\s-]")
_MD_JOIN = re.compile(r"[-\s]+")

# docutils' make_id (Sphinx's section ids): ASCII lower case, each run of other characters one hyphen, no leading
# digits or hyphens, no trailing hyphen
_DU_OTHER = re.compile(r"[^a-z0-9]+")
_DU_ENDS = re.compile(r"^[-0-9]+|-+$")

# The generators whose slugs are known, by the name a site's routes give (extractors/docs_routes.py)
DOCUSAURUS, VITEPRESS, MKDOCS, SPHINX = "docusaurus", "vitepress", "mkdocs", "sphinx"


def _plain(heading: str) -> str:
    """The heading's text as the page renders it: link targets, tags and code marks out."""
    return _MARKUP.sub("", link_words(heading)).strip()


def github_slug(heading: str) -> str:
    """github-slugger, as Docusaurus ids a heading: lower case, punctuation dropped, spaces to hyphens."""
    return _DROP.sub("", _plain(heading).lower()).replace(" ", "-")


def vitepress_slug(heading: str) -> str:
    """VitePress's default slugify (@mdit-vue/shared): NFKD without combining marks, each run of punctuation
    and spaces one hyphen, none at the ends, a leading digit prefixed with ``_``, lower case."""
    s = _COMBINING.sub("", unicodedata.normalize("NFKD", _plain(heading)))
    s = _VP_SPECIAL.sub("-", _VP_CONTROL.sub("", s))
    s = re.sub(r"-{2,}", "-", s).strip("-")
    return re.sub(r"^(\d)", r"_\1", s).lower()


def mkdocs_slug(heading: str) -> str:
    """Python-Markdown's toc ``slugify`` (MkDocs's default): ASCII by NFKD, word characters, spaces and hyphens
    kept, lower case, each run of spaces and hyphens one hyphen."""
    s = unicodedata.normalize("NFKD", _plain(heading)).encode("ascii", "ignore").decode("ascii")
    return _MD_JOIN.sub("-", _MD_DROP.sub("", s).strip().lower())


def docutils_id(heading: str) -> str:
    """docutils' ``make_id``, the id Sphinx gives a section: ASCII by NFKD, lower case, each run of anything but
    letters and digits one hyphen, leading digits and hyphens dropped."""
    s = unicodedata.normalize("NFKD", " ".join(_plain(heading).lower().split()))
    return _DU_ENDS.sub("", _DU_OTHER.sub("-", s.encode("ascii", "ignore").decode("ascii")))


SLUGS: dict[str, Callable[[str], str]] = {
    DOCUSAURUS: github_slug,
    VITEPRESS: vitepress_slug,
    MKDOCS: mkdocs_slug,
    SPHINX: docutils_id,
}


def heading_anchor(heading: str, generator: str = DOCUSAURUS) -> str:
    """A heading's id on its page: the ``{#id}`` it sets (still in its text), else ``generator``'s slug of it."""
    m = _CUSTOM_ID.search(heading)
    if m:
        return m.group(1)
    return SLUGS.get(generator, github_slug)(heading)


def section_anchor(heading_path: list[str], explicit: str, generator: str) -> str:
    """The id of a passage's own section (the last of its headings): the id the heading sets (``explicit``, read by
    the extractor), else ``generator``'s slug of its text; "" for a passage under no heading."""
    if explicit:
        return explicit
    return heading_anchor(heading_path[-1], generator) if heading_path else ""


def passage_page_url(page_url: str, heading_path: list[str], titled: bool = True, anchor: str | None = None) -> str:
    """``page_url`` with the anchor of the passage's own section: none for the page's title (the first heading)
    or a passage before any section.  ``titled`` False: the passage is a partial rendered inside the page
    (query/response.py), whose first heading is a section of that page, not its title.  ``anchor``: the section's
    id as the build recorded it (``section_anchor``); None, a snapshot without it: the Docusaurus slug."""
    if len(heading_path) < (2 if titled else 1):
        return page_url
    if anchor is None:
        anchor = heading_anchor(heading_path[-1])
    return f"{page_url}#{anchor}" if anchor else page_url
