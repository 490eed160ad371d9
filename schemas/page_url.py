"""The citable URL of a passage: its page on the published site, with the anchor of its heading.

Docusaurus gives each heading the id github-slugger makes of its text (lower case, punctuation dropped, spaces
to hyphens) unless the heading sets one (``## Install {#setup}``).  Used at query time (query/response.py).
"""

from __future__ import annotations

import re

_CUSTOM_ID = re.compile(r"\s*\{#([^}\s]+)\}\s*$")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKUP = re.compile(r"[`*~]|<[^>]+>")
# github-slugger keeps letters, numbers, marks, connector punctuation (_), hyphens and spaces
_DROP = re.compile(r"[^\w\- ]", re.UNICODE)


def heading_anchor(heading: str) -> str:
    m = _CUSTOM_ID.search(heading)
    if m:
        return m.group(1)
    text = _MARKUP.sub("", _LINK.sub(r"\1", heading)).strip().lower()
    return _DROP.sub("", text).replace(" ", "-")


def passage_page_url(page_url: str, heading_path: list[str], titled: bool = True) -> str:
    """``page_url`` with the anchor of the passage's own section: none for the page's title (the first heading)
    or a passage before any section.  ``titled`` False: the passage is a partial rendered inside the page
    (query/response.py), whose first heading is a section of that page, not its title."""
    if len(heading_path) < (2 if titled else 1):
        return page_url
    anchor = heading_anchor(heading_path[-1])
    return f"{page_url}#{anchor}" if anchor else page_url
