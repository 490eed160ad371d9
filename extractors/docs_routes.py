"""Where a Docusaurus docs page is published: its route on the site, read from the config (never executed); an
MkDocs, VitePress or Sphinx site's pages by its own config (extractors/static_sites.py).

A person cites the page they can open, not the Markdown file.  Docusaurus routes a docs page as
``<routeBasePath>/<version path>/<doc path>``:

- ``routeBasePath``: the docs plugin's option (default ``docs``; ``/`` serves the docs at the site root);
- version path: empty for ``lastVersion`` (by default the newest entry of versions.json, or the current docs
  when there is none), ``next`` for the current docs otherwise, the version's name for a released one, or the
  ``path`` the plugin's ``versions`` option sets;
- doc path: the file's path in its version folder without the extension and without number prefixes
  (``01-intro.md`` → ``intro``); front matter ``id`` renames the last segment, ``slug`` replaces it (relative)
  or the whole doc path (starting with ``/``); ``index``, ``README`` and a file named as its folder are the
  folder's index page.

A blog post is published at ``<routeBasePath>/<slug>``: front matter ``slug``, else the file's path in the blog
folder, a date in its name becoming ``YYYY/MM/DD/`` (``2025-08-01-tools.mdx`` → ``blog/2025/08/01/tools``), as
Docusaurus's ``parseBlogFileName`` reads it.  Blog plugins are the classic preset's ``blog`` (at ``blog/`` unless it
says ``blog: false``), ``@docusaurus/plugin-content-blog`` and a site's own plugin that wraps it (known by options
only a blog takes).

Whether the site serves a page at all (``resolve``, schemas/page_routes.py): the docs and blog plugins skip every
file matched by their ``exclude`` option, by default every path segment starting with ``_`` (``docs/_develop/``,
``tutorials/_beginner/_index.mdx``: drafts and partials, not only ``_name.md`` files) and test folders; a page with
front matter ``draft: true`` is built in development only; a versioned folder the plugin's versions file does not
list is not built.  Such a page is ``unrouted`` and gets no site URL.  Anything outside the plugins' folders (src/pages,
a README at the root, code) is ``off_site`` here: cited at its hosting URL.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

from trustindex.extractors.docs_versions import (
    DOCS_CONFIG_RE,
    classic_presets,
    content_plugin_options,
    docs_plugin_options,
)
from trustindex.extractors.globs import first_match
from trustindex.extractors.js_config import entries, object_at, string_list, string_literal, strip_comments
from trustindex.extractors.static_sites import StaticSite, is_site_config, static_sites
from trustindex.schemas.docs_versions import CURRENT
from trustindex.schemas.page_routes import OFF_SITE, ROUTED, UNROUTED
from trustindex.schemas.page_url import DOCUSAURUS

_VERSIONS_RE = re.compile(r"^(?P<root>(?:.*/)?)(?:(?P<id>[^/]+)_)?versions\.json$")
_VERSIONED_RE = re.compile(r"^(?P<root>(?:.*/)?)(?:(?P<id>[^/]+)_)?versioned_docs/version-(?P<ver>[^/]+)/(?P<rel>.+)$")
_NUMBER_PREFIX = re.compile(r"^\d+\s*[-_.]\s*(?=.)")
_DOC_EXT = (".md", ".mdx")
# Docusaurus's parseBlogFileName: a date anywhere in the post's path, the text after it is the slug
_BLOG_DATE = re.compile(r"^(?P<folder>.*)(?P<date>\d{4}[-/]\d{1,2}[-/]\d{1,2})[-/]?(?P<text>.*?)(?:/index)?\.mdx?$")
_BLOG_INDEX = re.compile(r"(?:/index)?\.mdx?$")
_BRACES = re.compile(r"\{([^{}]*)\}")
# what a URL path keeps as written (RFC 3986 pchar and "/"); anything else (spaces, non-ASCII) is percent-encoded
_URL_SAFE = "/!$&'()*+,;=:@-._~%"
# sidebarPath: "./sidebars.js" or require.resolve("./sidebars.js") (the form Docusaurus's templates write)
_SIDEBAR_PATH = re.compile(r"(?:require\.resolve\(\s*)?([\"'])(?P<path>[^\"'\n]+)\1\s*\)?")


@dataclass
class _Plugin:
    id: str
    root: str
    path: str = "docs"  # the current version's folder, relative to root
    route_base: str = "docs"
    versions: list[str] = field(default_factory=list)  # versions.json, newest first
    last_version: str | None = None
    version_paths: dict[str, str] = field(default_factory=dict)
    exclude: tuple[str, ...] | None = None  # the plugin's exclude option; None: Docusaurus's default
    sidebar: str | None = None  # the sidebars file (``sidebarPath``), relative to the repository

    def folder(self, version: str = CURRENT) -> str:
        """The folder holding this plugin's pages of ``version``, relative to the repository ("" or ending in /)."""
        if version != CURRENT:
            return f"{self.root}{'' if self.id == 'default' else self.id + '_'}versioned_docs/version-{version}/"
        return f"{self.root}{self.path}/" if self.path else self.root

    def version_segment(self, version: str) -> str:
        if version in self.version_paths:
            return self.version_paths[version].strip("/")
        last = self.last_version or (self.versions[0] if self.versions else CURRENT)
        if version == last:
            return ""
        return "next" if version == CURRENT else version

    @property
    def versions_file(self) -> str:
        return f"{self.root}{'' if self.id == 'default' else self.id + '_'}versions.json"


@dataclass(frozen=True)
class _Blog:
    root: str
    path: str = "blog"  # the posts' folder, relative to root
    route_base: str = "blog"
    exclude: tuple[str, ...] | None = None

    @property
    def folder(self) -> str:
        return f"{self.root}{self.path}/" if self.path else self.root


@dataclass(frozen=True)
class Route:
    """Whether and where the site serves a file: ``status`` (schemas/page_routes.py), the rule that said so, and
    the page's path on the site when it is routed (no leading slash; "" is the site root)."""

    status: str
    reason: str
    route: str | None = None


def doc_route(rel: str, front_matter: Mapping) -> str:
    """The doc path of a page at ``rel`` (relative to its version folder)."""
    stem = rel.rsplit(".", 1)[0]
    parts = [_NUMBER_PREFIX.sub("", p) for p in stem.split("/")]
    slug = front_matter.get("slug")
    if isinstance(slug, str) and slug.strip():
        slug = slug.strip()
        if slug.startswith("/"):
            return slug.strip("/")
        return "/".join([*parts[:-1], slug.strip("/")]).strip("/")
    doc_id = front_matter.get("id")
    if isinstance(doc_id, str) and doc_id.strip() and "/" not in doc_id:
        parts[-1] = doc_id.strip()
    elif parts[-1].lower() in ("index", "readme") or (len(parts) > 1 and parts[-1].lower() == parts[-2].lower()):
        parts = parts[:-1]
    return "/".join(parts)


def doc_id(rel: str, front_matter: Mapping) -> str:
    """The doc id a sidebar names a page at ``rel`` (relative to its version folder) by: its path without the
    extension and number prefixes, front matter ``id`` renaming the last segment (``index`` stays ``index``)."""
    parts = [_NUMBER_PREFIX.sub("", p) for p in rel.rsplit(".", 1)[0].split("/")]
    own = front_matter.get("id")
    if isinstance(own, str) and own.strip() and "/" not in own:
        parts[-1] = own.strip()
    return "/".join(parts)


def _blog_route(blog: _Blog, rel: str, front_matter: Mapping) -> str:
    """A post's path on the site: the blog's route base, then its slug (front matter, else from the file name)."""
    slug = front_matter.get("slug")
    if not (isinstance(slug, str) and slug.strip()):
        m = _BLOG_DATE.match(rel)
        slug = f"{m['date'].replace('-', '/')}/{m['folder']}{m['text']}" if m else _BLOG_INDEX.sub("", rel)
    return "/".join(s for s in (blog.route_base, *slug.strip().split("/")) if s)


def _hidden(rel: str, exclude: tuple[str, ...] | None) -> str | None:
    """Why a content plugin skips the file at ``rel`` (relative to its folder), or None when it reads it."""
    if exclude is None:  # Docusaurus's default: "**/_*.{md,mdx,...}", "**/_*/**", tests
        part = next((p for p in rel.split("/") if p.startswith("_")), None)
        return f"{part!r} starts with _ (Docusaurus serves no page under it)" if part else None
    hit = first_match(rel, [g for pattern in exclude for g in _expand(pattern)])
    return f"excluded by the plugin's exclude {hit!r}" if hit else None


def _expand(pattern: str) -> list[str]:
    """``**/_*.{md,mdx}`` → ``**/_*.md``, ``**/_*.mdx`` (the brace sets Docusaurus's globs use)."""
    m = _BRACES.search(pattern)
    if not m:
        return [pattern]
    return [x for alt in m[1].split(",") for x in _expand(pattern[: m.start()] + alt + pattern[m.end() :])]


def _unserved(rel: str, exclude: tuple[str, ...] | None, fm: Mapping) -> Route | None:
    """Why a content plugin publishes no page for the file at ``rel`` (relative to its folder), or None."""
    hidden = _hidden(rel, exclude)
    if hidden:
        return Route(UNROUTED, hidden)
    if fm.get("draft") is True:
        return Route(UNROUTED, "front matter draft: true (built in development only)")
    return None


def _docs_page(plugin: _Plugin, version: str, rel: str, fm: Mapping) -> Route:
    unserved = _unserved(rel, plugin.exclude, fm)
    if unserved is not None:
        return unserved
    if version != CURRENT and version not in plugin.versions:
        return Route(UNROUTED, f"version {version} is not listed in {plugin.versions_file}")
    route = "/".join(s for s in (plugin.route_base, plugin.version_segment(version), doc_route(rel, fm)) if s)
    return Route(ROUTED, f"a page of the docs plugin {plugin.id!r}", route)


class DocsRoutes:
    def __init__(
        self,
        plugins: list[_Plugin],
        blogs: Iterable[_Blog] = (),
        configured: bool = True,
        sites: Iterable[StaticSite] = (),
    ):
        # the longest folder first, so that a plugin nested in another's folder wins
        self.plugins = sorted(plugins, key=lambda p: -len(p.root + p.path))
        self.blogs = sorted(blogs, key=lambda b: -len(b.folder))
        # False: no Docusaurus, MkDocs, VitePress or Sphinx config was found, the plugin is Docusaurus's default
        self.configured = configured
        # MkDocs, VitePress and Sphinx sites (extractors/static_sites.py), the deepest pages first
        self.sites = sorted(sites, key=lambda site: -len(site.folder))

    @property
    def blog_folders(self) -> tuple[str, ...]:
        return tuple(b.folder for b in self.blogs)

    def resolve(self, path: str, front_matter: Mapping | None = None) -> Route:
        """Whether the site serves the file at ``path`` and at which route (see the module's docstring)."""
        fm = front_matter or {}
        site = self._site_of(path)
        if site is not None:
            rel = path[len(site.folder) :]
            if not site.is_page(rel):
                return Route(OFF_SITE, f"not a page of its site ({site.label})")
            unserved = site.unserved(rel)
            return Route(UNROUTED, unserved) if unserved else Route(ROUTED, site.label, site.route(rel))
        if not path.endswith(_DOC_EXT):
            return Route(OFF_SITE, "not a Markdown page")
        docs = self.locate(path)
        if docs is not None:
            return _docs_page(*docs, fm)
        blog = next((b for b in self.blogs if path.startswith(b.folder)), None)
        if blog is not None:
            rel = path[len(blog.folder) :]
            return _unserved(rel, blog.exclude, fm) or Route(
                ROUTED, f"a post of the blog at {blog.folder}", _blog_route(blog, rel, fm)
            )
        return Route(OFF_SITE, "outside the site's docs and blog folders")

    def locate(self, path: str) -> tuple[_Plugin, str, str] | None:
        """The docs plugin holding ``path``, the docs version and the path relative to that version's folder."""
        m = _VERSIONED_RE.match(path)
        if m:
            plugin = next((p for p in self.plugins if p.root == m["root"] and p.id == (m["id"] or "default")), None)
            return (plugin, m["ver"], m["rel"]) if plugin else None
        for p in self.plugins:
            base = p.folder()
            if path.startswith(base):
                return p, CURRENT, path[len(base) :]
        return None

    def _site_of(self, path: str) -> StaticSite | None:
        return next((site for site in self.sites if path.startswith(site.folder)), None)

    def site_root(self, path: str) -> str:
        """The folder of the site (where its docusaurus config lives) whose docs or blog hold ``path``: what an
        ``@site/`` import means there ("" when no plugin holds it)."""
        site = self._site_of(path)
        if site is not None:
            return site.root
        docs = self.locate(path)
        if docs is not None:
            return docs[0].root
        return next((b.root for b in self.blogs if path.startswith(b.folder)), "")

    def generator(self, path: str) -> str:
        """The generator whose slugs id the headings of the page at ``path`` (schemas/page_url.py): its MkDocs,
        VitePress or Sphinx site's, else Docusaurus's (github-slugger)."""
        site = self._site_of(path)
        return site.generator if site is not None else DOCUSAURUS

    def route(self, path: str, front_matter: Mapping | None = None) -> str | None:
        """The page's path on the site (no leading slash; "" is the site root), or None when the site serves none."""
        return self.resolve(path, front_matter).route

    def page_url(self, site_url: str, path: str, front_matter: Mapping | None = None) -> str | None:
        route = self.route(path, front_matter)
        if route is None or not site_url:
            return None
        return site_url.rstrip("/") + "/" + quote(route, safe=_URL_SAFE)


def load_docs_routes(paths: Iterable[str], files: Mapping[str, bytes]) -> DocsRoutes:
    """Every docs and blog plugin of the docusaurus configs among ``files`` (with their versions files); with no
    config, Docusaurus's defaults (``docs/`` served under ``/docs``, ``blog/`` under ``/blog``)."""
    plugins: dict[tuple[str, str], _Plugin] = {}
    blogs: list[_Blog] = []
    versions: dict[tuple[str, str], list[str]] = {}
    configs = 0
    site_configs: dict[str, str] = {}
    for path in sorted(set(paths) | set(files)):
        data = files.get(path)
        if data is None:
            continue
        cm, vm = DOCS_CONFIG_RE.match(path), _VERSIONS_RE.match(path)
        text = data.decode("utf-8", "replace")
        if is_site_config(path):
            site_configs[path] = text
        elif cm:
            configs += 1
            src = strip_comments(text)
            for obj in docs_plugin_options(src):
                _read_plugin(obj, cm["root"], plugins)
            blogs += blog_plugins(src, cm["root"])
        elif vm:
            try:
                listed = json.loads(text)
            except ValueError:
                continue
            if isinstance(listed, list) and all(isinstance(v, str) for v in listed):
                versions[(vm["root"], vm["id"] or "default")] = listed
    sites = static_sites(site_configs)
    if not configs and not sites:
        plugins[("", "default")] = _Plugin("default", "")
        blogs.append(_Blog(""))
    for key, listed in versions.items():
        if key in plugins:
            plugins[key].versions = listed
    return DocsRoutes(list(plugins.values()), blogs, configured=bool(configs or sites), sites=sites)


def _read_plugin(obj: str, root: str, plugins: dict[tuple[str, str], _Plugin]) -> None:
    opts = entries(obj)
    pid = string_literal(opts.get("id")) or "default"
    p = plugins.setdefault((root, pid), _Plugin(pid, root))
    if "path" in opts and (path := string_literal(opts["path"])) is not None:
        path = posixpath.normpath(path).lstrip("/")
        p.path = "" if path == "." else path
    if "routeBasePath" in opts and (base := string_literal(opts["routeBasePath"])) is not None:
        p.route_base = base.strip("/")
    if "lastVersion" in opts:
        p.last_version = string_literal(opts["lastVersion"])
    if (exclude := string_list(opts.get("exclude"))) is not None:
        p.exclude = tuple(exclude)
    sidebar = _SIDEBAR_PATH.fullmatch(opts.get("sidebarPath", "").strip())
    if sidebar:
        p.sidebar = posixpath.normpath(posixpath.join(root or ".", sidebar["path"]))
    configured = object_at(opts.get("versions", ""), 0)
    for name, body in (entries(configured) if configured else {}).items():
        vpath = entries(object_at(body, 0) or "{}").get("path")
        if vpath is not None and (value := string_literal(vpath)) is not None:
            p.version_paths[string_literal(name) or name] = value


# options only the blog plugin takes: a site's own plugin that wraps it (Docusaurus's way to extend the blog, e.g.
# ["./plugins/blog-plugin.js", {blogTitle: ..., path: "./blog"}] in the Midnight docs) is a blog plugin too
BLOG_ONLY_OPTIONS = frozenset({"blogTitle", "blogDescription", "blogSidebarTitle", "blogListComponent", "postsPerPage"})
_PLUGIN_ENTRY = re.compile(r"\[\s*([\"'])([^\"'\n]+)\1\s*,")


def blog_plugins(src: str, root: str) -> list[_Blog]:
    """The blog plugins a Docusaurus config (comments stripped) declares: the classic preset's blog at ``blog/``
    unless it says ``blog: false``, ``@docusaurus/plugin-content-blog``, and a plugin of the site's own whose
    options only a blog takes."""
    wrapped = []
    for m in _PLUGIN_ENTRY.finditer(src):
        obj = object_at(src, m.end()) if m[2] != "@docusaurus/plugin-content-blog" else None
        if obj and BLOG_ONLY_OPTIONS & set(entries(obj)):
            wrapped.append(obj)
    out = []
    for obj in [*content_plugin_options(src, "blog"), *wrapped]:
        opts = entries(obj)
        folder = string_literal(opts["path"]) if "path" in opts else "blog"
        if not folder:
            continue
        base = string_literal(opts["routeBasePath"]) if "routeBasePath" in opts else "blog"
        exclude = string_list(opts.get("exclude"))
        path = posixpath.normpath(folder).strip("/")
        out.append(
            _Blog(root, "" if path == "." else path, (base or "").strip("/"), tuple(exclude) if exclude else None)
        )
    presets = classic_presets(src)
    if presets and not any("blog" in entries(p) for p in presets):
        out.append(_Blog(root))
    return out
