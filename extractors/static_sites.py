"""The sites whose pages are one folder published at the site's root: MkDocs (extractors/mkdocs_routes.py) and
VitePress (extractors/vitepress_routes.py), behind one face for extractors/docs_routes.py."""

from __future__ import annotations

from typing import Protocol

from trustindex.extractors import mkdocs_routes, vitepress_routes

MKDOCS_CONFIG_RE = mkdocs_routes.CONFIG_RE
VITEPRESS_CONFIG_RE = vitepress_routes.CONFIG_RE


class StaticSite(Protocol):
    """A site's config folder (``root``), its pages' folder (``folder``, "" or ending in /), the rule that routes
    its pages (``label``), a page's path on the site and why a file under ``folder`` is no page."""

    @property
    def root(self) -> str: ...

    @property
    def folder(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def generator(self) -> str: ...  # how it ids a heading: a name of schemas/page_url.py SLUGS

    def route(self, rel: str) -> str: ...

    def unserved(self, rel: str) -> str | None: ...


def static_site(path: str, text: str) -> StaticSite | None:
    """The site an ``mkdocs.yml`` or a ``.vitepress/config.*`` at ``path`` describes, or None."""
    if MKDOCS_CONFIG_RE.match(path):
        return mkdocs_routes.read_mkdocs_config(path, text)
    return vitepress_routes.read_vitepress_config(path, text)
