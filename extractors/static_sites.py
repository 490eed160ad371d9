"""The sites whose pages are one folder published at the site's root: MkDocs (extractors/mkdocs_routes.py),
VitePress (extractors/vitepress_routes.py) and Sphinx (extractors/sphinx_routes.py), behind one face for
extractors/docs_routes.py."""

from __future__ import annotations

from typing import Protocol

from trustindex.extractors import mkdocs_routes, sphinx_routes, vitepress_routes

MKDOCS_CONFIG_RE = mkdocs_routes.CONFIG_RE
VITEPRESS_CONFIG_RE = vitepress_routes.CONFIG_RE
SPHINX_CONFIG_RE = sphinx_routes.CONFIG_RE
READTHEDOCS_RE = sphinx_routes.READTHEDOCS_RE


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

    def is_page(self, rel: str) -> bool: ...  # whether the file at ``rel`` is a source page (else off the site)

    def route(self, rel: str) -> str: ...

    def unserved(self, rel: str) -> str | None: ...


def is_site_config(path: str) -> bool:
    """Whether ``path`` may describe such a site: an ``mkdocs.yml``, a ``.vitepress/config.*``, a Sphinx
    ``conf.py`` or the ``.readthedocs.yaml`` that names a Sphinx site's builder."""
    return any(r.match(path) for r in (MKDOCS_CONFIG_RE, VITEPRESS_CONFIG_RE, SPHINX_CONFIG_RE, READTHEDOCS_RE))


def static_sites(files: dict[str, str]) -> list[StaticSite]:
    """The sites the configuration files among ``files`` (path → text) describe."""
    rtd = next((text for path, text in sorted(files.items()) if READTHEDOCS_RE.match(path)), "")
    builders = sphinx_routes.readthedocs_builders(rtd) if rtd else {}
    sites: list[StaticSite | None] = []
    for path, text in sorted(files.items()):
        if MKDOCS_CONFIG_RE.match(path):
            sites.append(mkdocs_routes.read_mkdocs_config(path, text))
        elif VITEPRESS_CONFIG_RE.match(path):
            sites.append(vitepress_routes.read_vitepress_config(path, text))
        elif SPHINX_CONFIG_RE.match(path):
            sites.append(sphinx_routes.read_sphinx_site(path, text, builders))
    return [s for s in sites if s is not None]
