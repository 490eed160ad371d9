"""Where a VitePress page is published: its route on the site, read from ``.vitepress/config.*`` (never executed)
(issue 43).

Vue, Vite, Vitest, Pinia and VueUse publish with VitePress.  A project's config sits in ``<root>/.vitepress/``;
its pages are the Markdown files of its ``srcDir`` (default: the root), published at the site's root:

- ``x/y.md`` at ``x/y.html``, or at ``x/y`` with ``cleanUrls: true``; ``index.md`` is its folder's page (``x/``);
- what ``srcExclude`` names (globs relative to ``srcDir``: Vue's tutorial step descriptions, rendered inside the
  tutorial) and anything under ``node_modules`` are not pages: ``unrouted``;
- the rest of the repository (its README, the ``.vitepress`` folder itself) is ``off_site``.

The source's ``site_url`` is the site's root (``base`` is not read: the operator says where the site is), and
``rewrites`` (a page published at another path) are not followed.  The config is TypeScript or JavaScript that
VitePress runs; only literals of the object passed to ``defineConfig(...)`` (or ``defineConfigWithTheme``, or the
default export) are read (extractors/js_config.py), and a value computed at build time keeps its default.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from trustindex.extractors.globs import first_match
from trustindex.extractors.js_config import entries, literal, object_at, string_list, string_literal, strip_comments
from trustindex.schemas.page_url import VITEPRESS

CONFIG_RE = re.compile(r"^(?P<root>(?:.*/)?)\.vitepress/config\.(?:js|ts|mjs|mts|cjs|cts)$")
_DEFINE_CALL = re.compile(r"\bdefineConfig\w*\s*(?:<[^>()]*>)?\s*\(")
_DEFAULT_EXPORT = re.compile(r"\bexport\s+default\s+")


@dataclass(frozen=True)
class VitePressSite:
    """One VitePress project: its folder (``root``), its pages' folder relative to the repository (``src``, "" or
    ending in /), whether pages get clean URLs, and its ``srcExclude`` globs (relative to ``src``)."""

    root: str
    src: str
    clean_urls: bool = False
    exclude: tuple[str, ...] = ()
    config: str = ""  # the config file's path

    @property
    def folder(self) -> str:
        """The folder of its pages (extractors/static_sites.py ``StaticSite``)."""
        return self.src

    @property
    def label(self) -> str:
        return f"a page of the VitePress site of {self.config}"

    @property
    def generator(self) -> str:
        """How it ids a heading (schemas/page_url.py: VitePress's slugify)."""
        return VITEPRESS

    def is_page(self, rel: str) -> bool:
        return rel.endswith(".md")

    def route(self, rel: str) -> str:
        """The page's path on the site for the file at ``rel`` (relative to the pages' folder)."""
        stem = rel.rsplit(".", 1)[0]
        if posixpath.basename(stem) == "index":
            folder = posixpath.dirname(stem)
            return f"{folder}/" if folder else ""
        return stem if self.clean_urls else f"{stem}.html"

    def unserved(self, rel: str) -> str | None:
        """Why VitePress publishes no page for the file at ``rel`` (relative to the pages' folder), or None."""
        if "node_modules" in rel.split("/"):
            return "under node_modules (VitePress serves no page there)"
        hit = first_match(rel, list(self.exclude))
        return f"excluded by srcExclude {hit!r}" if hit else None


def read_vitepress_config(path: str, text: str) -> VitePressSite | None:
    """The site a ``.vitepress/config.*`` at ``path`` describes (VitePress's defaults where it says nothing)."""
    m = CONFIG_RE.match(path)
    if m is None:
        return None
    root = m["root"]
    src = strip_comments(text)
    call = _DEFINE_CALL.search(src) or _DEFAULT_EXPORT.search(src)  # the object passed to defineConfig, else exported
    opts = entries(object_at(src, call.end()) or "{}") if call else {}
    src_dir = string_literal(opts.get("srcDir")) if "srcDir" in opts else None
    folder = posixpath.normpath(posixpath.join(root or ".", (src_dir or ".").strip()))
    if folder.startswith("..") or folder.startswith("/"):
        return None  # pages outside the repository: nothing here is one
    clean = _truth(opts.get("cleanUrls"))
    exclude = tuple(string_list(opts.get("srcExclude")) or ())
    return VitePressSite(root, "" if folder == "." else folder + "/", clean, exclude, path)


def _truth(value: str | None) -> bool:
    if value is None:
        return False
    try:
        return literal(value.strip()) is True
    except Exception:  # computed when VitePress runs: its default stands
        return False
