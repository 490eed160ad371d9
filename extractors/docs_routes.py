"""Where a Docusaurus docs page is published: its route on the site, read from the config (never executed).

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

Pages outside every docs plugin (blog, src/pages, a README at the root) have no route here.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from trustindex.extractors.docs_versions import DOCS_CONFIG_RE, docs_plugin_options
from trustindex.extractors.js_config import entries, object_at, string_literal, strip_comments
from trustindex.schemas.docs_versions import CURRENT

_VERSIONS_RE = re.compile(r"^(?P<root>(?:.*/)?)(?:(?P<id>[^/]+)_)?versions\.json$")
_VERSIONED_RE = re.compile(r"^(?P<root>(?:.*/)?)(?:(?P<id>[^/]+)_)?versioned_docs/version-(?P<ver>[^/]+)/(?P<rel>.+)$")
_NUMBER_PREFIX = re.compile(r"^\d+\s*[-_.]\s*(?=.)")
_DOC_EXT = (".md", ".mdx")
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


class DocsRoutes:
    def __init__(self, plugins: list[_Plugin], configured: bool = True):
        # the longest folder first, so that a plugin nested in another's folder wins
        self.plugins = sorted(plugins, key=lambda p: -len(p.root + p.path))
        self.configured = configured  # False: no Docusaurus config was found, the plugin is Docusaurus's default

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

    def route(self, path: str, front_matter: Mapping | None = None) -> str | None:
        """The page's path on the site (no leading slash; "" is the site root), or None outside the docs."""
        if not path.endswith(_DOC_EXT) or posixpath.basename(path).startswith("_"):
            return None  # a partial (``_name.md``) is included into pages, never published alone
        found = self.locate(path)
        if found is None:
            return None
        plugin, version, rel = found
        segments = [plugin.route_base, plugin.version_segment(version), doc_route(rel, front_matter or {})]
        return "/".join(s for s in segments if s)

    def page_url(self, site_url: str, path: str, front_matter: Mapping | None = None) -> str | None:
        route = self.route(path, front_matter)
        if route is None or not site_url:
            return None
        return site_url.rstrip("/") + "/" + route


def load_docs_routes(paths: Iterable[str], files: Mapping[str, bytes]) -> DocsRoutes:
    """Every docs plugin of the docusaurus configs among ``files`` (with their versions files); with no config,
    Docusaurus's defaults (``docs/`` served under ``/docs``)."""
    plugins: dict[tuple[str, str], _Plugin] = {}
    versions: dict[tuple[str, str], list[str]] = {}
    configs = 0
    for path in sorted(set(paths) | set(files)):
        data = files.get(path)
        if data is None:
            continue
        cm, vm = DOCS_CONFIG_RE.match(path), _VERSIONS_RE.match(path)
        text = data.decode("utf-8", "replace")
        if cm:
            configs += 1
            for obj in docs_plugin_options(strip_comments(text)):
                _read_plugin(obj, cm["root"], plugins)
        elif vm:
            try:
                listed = json.loads(text)
            except ValueError:
                continue
            if isinstance(listed, list) and all(isinstance(v, str) for v in listed):
                versions[(vm["root"], vm["id"] or "default")] = listed
    if not configs:
        plugins[("", "default")] = _Plugin("default", "")
    for key, listed in versions.items():
        if key in plugins:
            plugins[key].versions = listed
    return DocsRoutes(list(plugins.values()), configured=bool(configs))


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
    sidebar = _SIDEBAR_PATH.fullmatch(opts.get("sidebarPath", "").strip())
    if sidebar:
        p.sidebar = posixpath.normpath(posixpath.join(root or ".", sidebar["path"]))
    configured = object_at(opts.get("versions", ""), 0)
    for name, body in (entries(configured) if configured else {}).items():
        vpath = entries(object_at(body, 0) or "{}").get("path")
        if vpath is not None and (value := string_literal(vpath)) is not None:
            p.version_paths[string_literal(name) or name] = value
