"""Docusaurus versioned docs → which documentation version a page belongs to.

Layout (Docusaurus "Versioning" docs): the current version lives in the docs
plugin's ``path`` (``docs/`` by default); a released version ``X`` lives in
``versioned_docs/version-X/`` (plugin id ``default``) or
``<id>_versioned_docs/version-X/``, listed newest first in ``versions.json`` /
``<id>_versions.json``.  Labels and banners come from the plugin's
``versions`` option in ``docusaurus.config.(js|ts)``.  The config is
JavaScript from a repository we do not control: it is never executed, only
scanned (comments stripped, braces matched, string literals read); a value that
is not a plain string literal is reported, not guessed.

Legacy rule: a version is legacy when its label says so ("Legacy",
"deprecated", "archived", "unmaintained"), when its banner is ``unmaintained``,
or, with no explicit banner, when Docusaurus's default gives it the
unmaintained banner: every version older than ``lastVersion`` (by default the
first entry of versions.json; ``lastVersion: "current"`` makes every released
version older).  ``banner: "none"`` switches the default off.  A version left
out of ``onlyIncludeVersions`` is not built at all, so its pages are legacy too.

Names: the current docs are version ``current``; a released version is named
by its folder; each version's label and, for ``lastVersion``, ``latest`` are
aliases (schemas.docs_versions).  Every docs plugin of the config counts (the
classic preset's ``docs`` and each ``@docusaurus/plugin-content-docs``), each
with its own versions file: ``versions.json`` for the plugin id ``default``,
``<id>_versions.json`` otherwise.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from trustindex.extractors.base import Deprecation, VersionTarget
from trustindex.extractors.js_config import entries, object_at, string_list, string_literal, strip_comments
from trustindex.schemas.docs_versions import COMPONENT, CURRENT, LATEST, LEGACY_MARKER, SUPERSEDED_BY, label_json

DOCS_CONFIG_RE = re.compile(r"^(?P<root>(?:.*/)?)docusaurus\.config\.(?:js|ts|mjs|cjs|mts|cts)$")
_VERSIONS_RE = re.compile(r"^(?P<root>(?:.*/)?)(?:(?P<id>[^/]+)_)?versions\.json$")
_VERSIONED_RE = re.compile(r"^(?P<root>(?:.*/)?)(?:(?P<id>[^/]+)_)?versioned_docs/version-(?P<ver>[^/]+)/")
_LEGACY_WORDS = re.compile(r"legacy|deprecated|archived|unmaintained", re.I)


@dataclass(frozen=True)
class DocsVersion:
    label: str
    version: str  # the folder's version name, or "current"
    legacy: bool
    reason: str
    aliases: tuple[str, ...] = ()  # other names that select it: its label, "latest" for lastVersion
    banner: str | None = None  # as configured (None: Docusaurus's default)
    url_path: str | None = None  # the configured route segment (per-version ``path`` option)


@dataclass
class _Plugin:
    id: str
    root: str  # the site directory (where docusaurus.config lives), "" or "website/"
    path: str | None = None  # the current version's docs folder, relative to root
    versions: list[str] = field(default_factory=list)  # versions.json, newest first
    listed: bool = False  # a versions.json was read
    labels: dict[str, str] = field(default_factory=dict)
    banners: dict[str, str] = field(default_factory=dict)
    url_paths: dict[str, str] = field(default_factory=dict)
    only_include: list[str] | None = None  # onlyIncludeVersions: the versions Docusaurus builds
    last_version: str | None = None
    configured: bool = False
    folders: bool = False  # version-X folders exist


def content_plugin_options(src: str, plugin: str = "docs") -> list[str]:
    """Option objects of every Docusaurus content plugin of one kind (``docs``, ``blog``):
    ``["@docusaurus/plugin-content-<plugin>", {...}]`` and the classic preset's ``<plugin>: {...}``."""
    found = []
    for m in re.finditer(rf"([\"'])@docusaurus/plugin-content-{plugin}\1\s*,", src):
        obj = object_at(src, m.end())
        if obj:
            found.append(obj)
    for preset in classic_presets(src):
        value = entries(preset).get(plugin, "")
        if value.startswith("{"):
            found.append(object_at(value, 0) or "")
    return [f for f in found if f]


def classic_presets(src: str) -> list[str]:
    """The option objects of the classic preset (``classic`` or ``@docusaurus/preset-classic``)."""
    found = []
    for m in re.finditer(r"([\"'])(?:classic|@docusaurus/preset-classic)\1\s*,", src):
        preset = object_at(src, m.end())
        if preset:
            found.append(preset)
    return found


def _docs_options(src: str) -> list[str]:
    return content_plugin_options(src, "docs")


docs_plugin_options = _docs_options  # the docs routes (extractors/docs_routes.py) read the same plugins


def _read_config(text: str, root: str, plugins: dict, warnings: list[str], where: str) -> None:
    src = strip_comments(text)
    for obj in _docs_options(src):
        opts = entries(obj)
        pid = string_literal(opts.get("id")) or "default"
        p = plugins.setdefault((root, pid), _Plugin(pid, root))
        p.configured = True
        path = string_literal(opts["path"]) if "path" in opts else "docs"  # Docusaurus's default path
        if path is None:
            warnings.append(f"{where}: plugin {pid!r}: path is not a string literal; its current docs are not labelled")
        else:
            path = posixpath.normpath(path).lstrip("/")
            p.path = "" if path == "." else path
        if "lastVersion" in opts:
            p.last_version = string_literal(opts["lastVersion"])
        if "onlyIncludeVersions" in opts:
            p.only_include = string_list(opts["onlyIncludeVersions"])
            if p.only_include is None:
                warnings.append(f"{where}: plugin {pid!r}: onlyIncludeVersions is not a list of string literals")
        versions = object_at(opts.get("versions", ""), 0)
        for name, body in (entries(versions) if versions else {}).items():
            vopts = entries(object_at(body, 0) or "{}")
            for key, store in (("label", p.labels), ("banner", p.banners), ("path", p.url_paths)):
                if key in vopts:
                    value = string_literal(vopts[key])
                    if value is None:
                        warnings.append(f"{where}: {pid} version {name!r}: {key} is not a string literal; not read")
                    else:
                        store[name] = value


# ---------------------------------------------------------------- the model
class DocsVersions:
    def __init__(self, plugins: list[_Plugin], warnings: list[str], paths: Iterable[str] = ()):
        self.plugins, self.warnings = plugins, warnings
        self.paths = frozenset(paths)

    def version_of(self, path: str) -> DocsVersion | None:
        """The docs version of a repository path, or None for paths outside every versioned docs plugin."""
        m = _VERSIONED_RE.match(path)
        if m:
            p = next((p for p in self.plugins if p.root == m["root"] and p.id == (m["id"] or "default")), None)
            if p is not None:
                return self._named(p, self._released(p, m["ver"]))
        p = self._current_plugin(path)
        if p is None:
            return None
        label = p.labels.get(CURRENT, CURRENT)
        legacy = bool(_LEGACY_WORDS.search(label)) and label != CURRENT
        reason = f"current docs of plugin {p.id!r}" + ("" if CURRENT in p.labels else " (no label configured)")
        if p.only_include is not None and CURRENT not in p.only_include:
            legacy, reason = True, f"{reason}; not built (left out of onlyIncludeVersions)"
        elif legacy:
            reason += f"; label {label!r} says legacy"
        return self._named(p, DocsVersion(label, CURRENT, legacy, reason))

    def superseded_by(self, path: str) -> str | None:
        """The current page with the same slug (same path below the docs folder, .md or .mdx) of a released
        version's page, when it exists."""
        m = _VERSIONED_RE.match(path)
        if not m:
            return None
        p = next((p for p in self.plugins if p.root == m["root"] and p.id == (m["id"] or "default")), None)
        if p is None or p.path is None:
            return None
        rel = path[m.end() :]
        stem = rel.rsplit(".", 1)[0] if rel.endswith((".md", ".mdx")) else rel
        base = f"{p.root}{p.path}/" if p.path else p.root
        for candidate in (rel, f"{stem}.mdx", f"{stem}.md"):
            if base + candidate in self.paths:
                return base + candidate
        return None

    def _current_plugin(self, path: str) -> _Plugin | None:
        for p in self.plugins:
            if p.path is not None and path.startswith(f"{p.root}{p.path}/" if p.path else p.root):
                return p
        return None

    @staticmethod
    def _latest(p: _Plugin) -> str:
        return p.last_version or (p.versions[0] if p.listed and p.versions else CURRENT)

    def _named(self, p: _Plugin, dv: DocsVersion) -> DocsVersion:
        """Aliases, banner and route path of a version; the legacy reason says which version is current."""
        aliases = [dv.label] if dv.label != dv.version else []
        if self._latest(p) == dv.version:
            aliases.append(LATEST)
        reason = dv.reason
        if dv.legacy:
            latest = self._latest(p)
            current_label = p.labels.get(latest, latest)
            reason = f"{dv.label}: unmaintained docs version; current is {current_label} ({dv.reason})"
        return DocsVersion(
            dv.label,
            dv.version,
            dv.legacy,
            reason,
            tuple(aliases),
            p.banners.get(dv.version),
            p.url_paths.get(dv.version),
        )

    @staticmethod
    def _released(p: _Plugin, ver: str) -> DocsVersion:
        label = p.labels.get(ver, ver)
        banner = p.banners.get(ver)
        where = f"version {ver} of plugin {p.id!r}"
        if p.only_include is not None and ver not in p.only_include:
            return DocsVersion(label, ver, True, f"{where}: not built (left out of onlyIncludeVersions)")
        if _LEGACY_WORDS.search(label):
            return DocsVersion(label, ver, True, f"{where}: label {label!r} says legacy")
        if banner is not None:
            return DocsVersion(label, ver, banner == "unmaintained", f"{where}: banner {banner!r}")
        if not p.listed or ver not in p.versions:
            file = "versions.json" if p.id == "default" else f"{p.id}_versions.json"
            why = f"no {file}" if not p.listed else f"folder not listed in {file} (unpublished)"
            return DocsVersion(label, ver, False, f"{where}: {why}; legacy status unknown")
        last = p.last_version or p.versions[0]
        assumed = "" if p.configured else " (no docusaurus config: Docusaurus defaults assumed)"
        if last == CURRENT or (last in p.versions and p.versions.index(ver) > p.versions.index(last)):
            return DocsVersion(
                label,
                ver,
                True,
                f"{where}: older than lastVersion {last!r}, Docusaurus's default banner is 'unmaintained'{assumed}",
            )
        return DocsVersion(label, ver, False, f"{where}: not older than lastVersion {last!r}{assumed}")


def is_docs_config(path: str) -> bool:
    """A docusaurus config or a docs plugin's versions file (read as evidence even when not indexed)."""
    return bool(DOCS_CONFIG_RE.match(path) or _VERSIONS_RE.match(path))


def docs_config_files(paths: Iterable[str]) -> list[str]:
    """The files :func:`load_docs_versions` wants the bytes of: docusaurus configs and versions.json files."""
    return sorted(p for p in paths if is_docs_config(p))


def load_docs_versions(paths: Iterable[str], files: Mapping[str, bytes]) -> DocsVersions:
    """Build the docs-version model from the repository's file list and the bytes of the
    :func:`docs_config_files` (missing or unreadable ones become warnings)."""
    paths = list(paths)
    plugins: dict[tuple[str, str], _Plugin] = {}
    warnings: list[str] = []
    for path in paths:
        m = _VERSIONED_RE.match(path)
        if m:
            plugins.setdefault(
                (m["root"], m["id"] or "default"), _Plugin(m["id"] or "default", m["root"])
            ).folders = True
    for path in docs_config_files(paths):
        data = files.get(path)
        if data is None:
            warnings.append(f"{path}: not read")
            continue
        text = data.decode("utf-8", "replace")
        cm, vm = DOCS_CONFIG_RE.match(path), _VERSIONS_RE.match(path)
        if cm:
            _read_config(text, cm["root"], plugins, warnings, path)
            continue
        pid = vm["id"] or "default"
        try:
            versions = json.loads(text)
            if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
                raise ValueError("not a list of strings")
        except ValueError as exc:
            warnings.append(f"{path}: not a Docusaurus versions list ({exc}); ignored")
            continue
        p = plugins.setdefault((vm["root"], pid), _Plugin(pid, vm["root"]))
        p.versions, p.listed = versions, True
    versioned = []
    for p in plugins.values():
        if not (p.listed or p.labels or p.folders):
            continue  # an unversioned docs plugin (api-reference, sdks): its pages carry no docs version
        if not p.configured:
            if p.id == "default":
                p.path = "docs"  # Docusaurus's default path
            warnings.append(
                f"plugin {p.id!r}: no docusaurus config read; labels default to version names"
                + ("" if p.path else " and its current docs are not labelled")
            )
        versioned.append(p)
    return DocsVersions(versioned, warnings, paths)


def docs_version_targets(path: str, versions: DocsVersions) -> list[VersionTarget]:
    """The ``docs`` target of a page: its version's name (``current``, ``0.0.0``) with its label and ``latest``
    as aliases."""
    dv = versions.version_of(path)
    if dv is None:
        return []
    return [
        VersionTarget(
            component=COMPONENT,
            constraint=dv.version,
            origin="docs_folder",
            intervals=label_json(dv.version, dv.aliases),
            detail=f"label {dv.label!r}: {dv.reason}",
        )
    ]


def docs_version_deprecations(path: str, versions: DocsVersions) -> list[Deprecation]:
    """A document-scoped deprecation (marker ``docs_version``) for pages of a legacy docs version, naming the
    current page with the same slug when there is one."""
    dv = versions.version_of(path)
    if dv is None or not dv.legacy:
        return []
    newer = versions.superseded_by(path)
    reason = dv.reason + (SUPERSEDED_BY.format(path=newer) if newer else "")
    return [Deprecation(scope="document", reason=reason, marker=LEGACY_MARKER)]
