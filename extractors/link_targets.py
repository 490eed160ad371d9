"""What a link of one source names: a page of the source, another file, or something outside (pure).

Built once per source from its pages (path and front matter), its tree's paths and its Docusaurus routing
(extractors/docs_routes.py), then asked link by link.  How a target is read, first match wins:

- ``#section`` alone: the linking page itself (the fragment is kept: it may name the passage);
- a URL with a scheme (``https:``, ``mailto:``): external here; the build resolves a URL of a source's published
  site against every source's pages (warehouse/page_links.py);
- a relative target (``../x.mdx``, ``./y``, ``y``): a file path from the linking file's folder, as is or with a
  page's extension or index file added; else a URL relative to the linking page's route (what a browser does);
- an absolute target (``/docs/...``): a route of the site (slugs, ids, number prefixes, versions: the routing's
  own rules), else a file path from a content folder (Docusaurus resolves ``/x.md`` in the plugin's folder), the
  repository root or one of the linking file's folders.  A site without a Docusaurus config is routed by
  Docusaurus's defaults (``/docs/...``); its routes are then also tried without that base, since such a copy
  usually lost a config that served the docs elsewhere (the real corpus copy links ``/concepts/...``);
- a sidebar's doc id: the page with that id in the sidebar's docs folder; a ``_category_`` label: its folder's
  index page (``index``, ``README`` or the folder's own name);
- a reStructuredText page's ``:doc:`` role: a document name, relative to the page's folder or, absolute, to the
  Sphinx source folder (the nearest folder above the page holding ``conf.py``), ``.rst`` added like a Markdown
  page's extension; its ``:ref:`` and Python domain roles name what the source's pages define (``SphinxNames``).

Nothing here fails: a target that names nothing is ``unresolved``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import unquote

from trustindex.extractors.docs_routes import DocsRoutes, doc_id, doc_route
from trustindex.extractors.site_nav import CATEGORY_RE, VERSIONED_SIDEBARS_RE
from trustindex.schemas.links import (
    BY_DOC_ID,
    BY_FOLDER,
    BY_FRAGMENT,
    BY_LABEL,
    BY_OBJECT,
    BY_PATH,
    BY_ROUTE,
    CATEGORY,
    EXTERNAL,
    FILE,
    LABEL,
    OBJECT_ROLE,
    PAGE,
    SIDEBAR,
    UNRESOLVED,
    split_target,
)

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
PAGE_EXTENSIONS = (".md", ".mdx", ".rst")
_INDEX_NAMES = ("index", "README", "readme")


@dataclass(frozen=True)
class Resolution:
    status: str  # schemas.links.LINK_STATUSES
    path: str = ""  # the page's (or file's) path in the source
    fragment: str = ""
    by: str = ""  # schemas.links BY_*


class SiteLinks:
    """One source's pages by every name a link may use: repository path, site route and docs id."""

    def __init__(self, pages: Mapping[str, Mapping], files: Iterable[str], routes: DocsRoutes):
        self.pages, self.files, self.routes = pages, set(files), routes
        # a page's name may omit its extension: Markdown's and reStructuredText's, and any other a page here has (a
        # Sphinx project's own suffix: Django's :doc:`topics/http/urls` is topics/http/urls.txt)
        own = {posixpath.splitext(p)[1] for p in pages} - {""} - set(PAGE_EXTENSIONS)
        self.extensions = PAGE_EXTENSIONS + tuple(sorted(own))
        self.by_route: dict[str, str] = {}
        self.by_lower_route: dict[str, str] = {}
        self.by_doc_id: dict[tuple[str, str], str] = {}
        self.page_route: dict[str, str] = {}
        for path in sorted(pages):
            fm = pages[path] or {}
            route = routes.route(path, fm)
            if route is not None:
                self.page_route[path] = route
                self.by_route.setdefault(route, path)
                self.by_lower_route.setdefault(route.lower(), path)
            found = routes.locate(path)
            if found is not None:
                plugin, version, rel = found
                self.by_doc_id.setdefault((plugin.folder(version), doc_id(rel, fm)), path)
        self.by_tail: dict[str, set[str]] | None = None  # built on first use (_unique_tail)
        if not routes.configured:  # a copy without its config: routes it may have had under another config
            self._guess_routes()
        # Sphinx source folders (a conf.py beside or above the pages), deepest first
        self.sphinx_roots = sorted(
            {posixpath.dirname(f) + "/" if "/" in f else "" for f in self.files if posixpath.basename(f) == "conf.py"},
            key=len,
            reverse=True,
        )
        self.sidebar_folder = {p.sidebar: p.folder() for p in routes.plugins if p.sidebar}
        for p in routes.plugins:  # Docusaurus's default sidebarPath when the config names none
            for name in ("sidebars.js", "sidebars.ts"):
                self.sidebar_folder.setdefault(f"{p.root}{name}", p.folder())

    def _guess_routes(self) -> None:
        """A site whose Docusaurus config is missing (a copy of its docs alone) is routed by the defaults, which may
        not be what its links were written for: each docs route is also tried without the default base
        (``/concepts/x`` for ``docs/concepts/x.md``), and a page outside the docs folder under its own path read as
        a docs plugin's (``/sdks/official/guide``: slugs, ids and number prefixes applied)."""
        for route, path in sorted(self.by_route.items()):
            for plugin in self.routes.plugins:
                base = plugin.route_base + "/"
                if plugin.route_base and route.startswith(base):
                    self.by_lower_route.setdefault(route[len(base) :].lower(), path)
        for path in sorted(self.pages):
            if path not in self.page_route and not posixpath.basename(path).startswith("_"):
                self.by_lower_route.setdefault(doc_route(path, self.pages[path] or {}).lower(), path)

    def resolve(self, from_path: str, kind: str, target: str) -> Resolution:
        if kind == CATEGORY:
            found = self._index_page(target.rstrip("/"))
            return Resolution(PAGE, found, "", BY_FOLDER) if found else Resolution(UNRESOLVED)
        head, fragment = split_target(target.strip())
        if kind == SIDEBAR:
            found = self._doc_by_id(from_path, head)
            return Resolution(PAGE, found, fragment, BY_DOC_ID) if found else Resolution(UNRESOLVED, "", fragment)
        if not head:
            if from_path in self.pages and target.strip().startswith("#"):
                return Resolution(PAGE, from_path, fragment, BY_FRAGMENT)
            return Resolution(UNRESOLVED, "", fragment)
        if _SCHEME.match(head) or head.startswith("//"):
            return Resolution(EXTERNAL, "", fragment)
        head = unquote(head)
        for path, by in self._candidates(from_path, head):
            if path in self.pages:
                return Resolution(PAGE, path, fragment, by)
        for path, _by in self._candidates(from_path, head):
            if path in self.files:
                return Resolution(FILE, path, fragment, BY_PATH)
        return Resolution(UNRESOLVED, "", fragment)

    def _candidates(self, from_path: str, head: str) -> Iterable[tuple[str, str]]:
        """Paths the target may name, most likely first."""
        if head.startswith("/"):
            for route in _route_keys(head):
                found = self.by_route.get(route) or self.by_lower_route.get(route.lower())
                if found:
                    yield found, BY_ROUTE
            rel = head.lstrip("/")
            for folder in self._content_roots(from_path):
                for path in _with_page_names(posixpath.normpath(folder + rel), self.extensions):
                    yield path, BY_PATH
            if not self.routes.configured:  # another generator's routes (react.dev: /learn/x is src/content/learn/x)
                found = self._unique_tail(_route_keys(head)[-1])
                if found:
                    yield found, BY_ROUTE
            return
        for path in _with_page_names(
            posixpath.normpath(posixpath.join(posixpath.dirname(from_path), head)), self.extensions
        ):
            yield path, BY_PATH
        own = self.page_route.get(from_path)
        if own is not None:  # a URL relative to the page's own address, as a browser reads it
            for base in dict.fromkeys((posixpath.dirname(own), own)):
                for route in _route_keys("/" + posixpath.join(base, head)):
                    found = self.by_route.get(route) or self.by_lower_route.get(route.lower())
                    if found:
                        yield found, BY_ROUTE

    def _unique_tail(self, route: str) -> str | None:
        """The one page whose path, read as a route (extension, index file and number prefixes dropped), ends with
        ``route``; None when no page or several do (a site whose routing is unknown: only an unambiguous match)."""
        if self.by_tail is None:
            self.by_tail = suffix_index(((doc_route(path, {}).lower(), path) for path in self.pages), "/")
        return only(self.by_tail.get(route.strip("/").lower(), set()) if route.strip("/") else set())

    def _content_roots(self, from_path: str) -> list[str]:
        """Folders an absolute file path may start from: the linking page's docs folder, every plugin's, the
        repository root, then the linking file's own folders (shallowest first)."""
        roots: list[str] = [r for r in self.sphinx_roots if from_path.startswith(r)][:1]
        found = self.routes.locate(from_path)
        if found is not None:
            roots.append(found[0].folder(found[1]))
        roots += [p.folder() for p in self.routes.plugins]
        parts = from_path.split("/")[:-1]
        roots += ["", *("/".join(parts[: i + 1]) + "/" for i in range(len(parts)))]
        return list(dict.fromkeys(roots))

    def _doc_by_id(self, nav_path: str, doc: str) -> str | None:
        """The page a sidebar (or a category's link) names by doc id, in the docs folder the file belongs to."""
        folder = self.sidebar_folder.get(nav_path)
        m = VERSIONED_SIDEBARS_RE.match(nav_path)
        if folder is None and m:
            plugin = next(
                (p for p in self.routes.plugins if p.root == m["root"] and p.id == (m["id"] or "default")), None
            )
            folder = plugin.folder(m["ver"]) if plugin else None
        if folder is None:
            located = self.routes.locate(nav_path)
            folder = located[0].folder(located[1]) if located else None
        if folder is None:
            return None
        doc = doc.strip("/")
        ids = [doc, doc_id(doc + ".md", {})]
        if CATEGORY_RE.match(nav_path) and nav_path.startswith(folder):  # a category names docs from its folder
            here = posixpath.dirname(nav_path[len(folder) :])
            ids = [posixpath.join(here, i) for i in ids] + ids
        return next((self.by_doc_id[(folder, i)] for i in ids if (folder, i) in self.by_doc_id), None)

    def _index_page(self, folder: str) -> str | None:
        name = posixpath.basename(folder)
        for stem in (*_INDEX_NAMES, name):
            for ext in PAGE_EXTENSIONS:
                path = f"{folder}/{stem}{ext}" if folder else f"{stem}{ext}"
                if path in self.pages:
                    return path
        return None


def suffix_index(named: Iterable[tuple[str, str]], sep: str) -> dict[str, set[str]]:
    """Every trailing run of each name's ``sep``-separated parts (the whole name included) -> the values so named."""
    out: dict[str, set[str]] = {}
    for name, value in named:
        parts = name.split(sep)
        for i in range(len(parts)):
            out.setdefault(sep.join(parts[i:]), set()).add(value)
    return out


def only(found: set[str]) -> str | None:
    """The one value found; None when none or several (a name only an unambiguous match resolves)."""
    return next(iter(found)) if len(found) == 1 else None


def _route_keys(head: str) -> list[str]:
    """A URL path as routes are stored: no leading or trailing slash, no ``.html``/``index.html``, and without a
    page's file extension (an author who wrote ``/docs/x.md`` meant the page)."""
    route = head.strip("/")
    keys = [route]
    for suffix in ("/index.html", ".html", *PAGE_EXTENSIONS):
        if route.endswith(suffix):
            keys.append(route[: -len(suffix)].strip("/"))
    return keys


def _with_page_names(path: str, extensions: tuple[str, ...] = PAGE_EXTENSIONS) -> list[str]:
    """A file path as written, then as a page (extension added) and as a folder's index page."""
    if path in ("", "."):
        return []
    if path.endswith(extensions):
        return [path]
    name = posixpath.basename(path)
    out = [path, *(path + ext for ext in extensions)]
    out += [f"{path}/{stem}{ext}" for stem in (*_INDEX_NAMES, name) for ext in extensions]
    return out


class SphinxNames:
    """The names a source's reStructuredText pages define: section labels (``.. _label:``, compared lower-cased as
    Sphinx does) and the objects their directives document, each with the page that defines it (the first page in
    path order when two do)."""

    def __init__(self, labels: dict[str, str], objects: dict[str, str]):
        self.labels, self.objects = labels, objects
        self._tails: dict[str, set[str]] | None = None

    @classmethod
    def of(cls, rows: Iterable[Mapping]) -> SphinxNames:
        labels: dict[str, str] = {}
        objects: dict[str, str] = {}
        for row in sorted(rows, key=lambda r: (r["path"], r["line"])):
            into = labels if row["kind"] == LABEL else objects
            into.setdefault(row["text"].lower() if row["kind"] == LABEL else row["text"], row["path"])
        return cls(labels, objects)

    def resolve(self, kind: str, target: str) -> Resolution:
        """A ``:ref:`` role's label, or a Python domain role's object: its own page, else (an object Sphinx documents
        with its class or module: ``:meth:`Flask.route``` under ``.. autoclass:: Flask``) the page of the nearest
        enclosing name; a name without its module (``Flask``, ``.route``) by the one defined name it ends."""
        if kind != OBJECT_ROLE:
            path = self.labels.get(target.strip().lower())
            return Resolution(PAGE, path, target.strip().lower(), BY_LABEL) if path else Resolution(UNRESOLVED)
        name = target.strip().lstrip(".")
        for candidate in self._enclosing(name):
            found = self.objects.get(candidate) or self._by_tail(candidate)
            if found:
                return Resolution(PAGE, found, name, BY_OBJECT)
        return Resolution(UNRESOLVED, "", name)

    @staticmethod
    def _enclosing(name: str) -> Iterator[str]:
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            yield ".".join(parts[:i])

    def _by_tail(self, name: str) -> str | None:
        """The page of the one defined object whose dotted name ends with ``name`` (None: none or several pages)."""
        if self._tails is None:  # a full name was looked up before this: only its tails are new here
            self._tails = suffix_index(self.objects.items(), ".")
        return only(self._tails.get(name, set()))
