"""The sites whose pages are one folder published at the site's root: MkDocs (extractors/mkdocs_routes.py) and
VitePress (extractors/vitepress_routes.py), behind one face for extractors/docs_routes.py."""

from __future__ import annotations

from dataclasses import dataclass

from trustindex.extractors import mkdocs_routes, vitepress_routes

MKDOCS_CONFIG_RE = mkdocs_routes.CONFIG_RE
VITEPRESS_CONFIG_RE = vitepress_routes.CONFIG_RE


@dataclass(frozen=True)
class StaticSite:
    """A site's pages folder (``folder``, "" or ending in /), its config's folder (``root``), the rule that routes
    it (``label``), and its generator's config read (``config``)."""

    root: str
    folder: str
    label: str
    config: mkdocs_routes.MkDocsSite | vitepress_routes.VitePressSite

    def route(self, rel: str) -> str:
        """The page's path on the site for the file at ``rel`` (relative to ``folder``)."""
        if isinstance(self.config, mkdocs_routes.MkDocsSite):
            return mkdocs_routes.page_route(self.config, rel)
        return vitepress_routes.page_route(self.config, rel)

    def unserved(self, rel: str) -> str | None:
        """Why the site publishes no page for the file at ``rel``, or None."""
        if isinstance(self.config, mkdocs_routes.MkDocsSite):
            return mkdocs_routes.why_unserved(self.config, rel)
        return vitepress_routes.why_unserved(self.config, rel)


def static_site(path: str, text: str) -> StaticSite | None:
    """The site an ``mkdocs.yml`` or a ``.vitepress/config.*`` at ``path`` describes, or None."""
    if MKDOCS_CONFIG_RE.match(path):
        m = mkdocs_routes.read_mkdocs_config(path, text)
        return StaticSite(m.root, m.docs, f"a page of the MkDocs site of {m.root}mkdocs.yml", m) if m else None
    v = vitepress_routes.read_vitepress_config(path, text)
    return StaticSite(v.root, v.src, f"a page of the VitePress site of {path}", v) if v else None
