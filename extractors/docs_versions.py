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
version older).  ``banner: "none"`` switches the default off.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from trustindex.extractors.base import Deprecation, VersionTarget
from trustindex.schemas.versions import ConstraintSet

_CONFIG_RE = re.compile(r"^(?P<root>(?:.*/)?)docusaurus\.config\.(?:js|ts|mjs|cjs|mts|cts)$")
_VERSIONS_RE = re.compile(r"^(?P<root>(?:.*/)?)(?:(?P<id>[^/]+)_)?versions\.json$")
_VERSIONED_RE = re.compile(r"^(?P<root>(?:.*/)?)(?:(?P<id>[^/]+)_)?versioned_docs/version-(?P<ver>[^/]+)/")
_LEGACY_WORDS = re.compile(r"legacy|deprecated|archived|unmaintained", re.I)


@dataclass(frozen=True)
class DocsVersion:
    label: str
    version: str  # the folder's version name, or "current"
    legacy: bool
    reason: str


@dataclass
class _Plugin:
    id: str
    root: str  # the site directory (where docusaurus.config lives), "" or "website/"
    path: str | None = None  # the current version's docs folder, relative to root
    versions: list[str] = field(default_factory=list)  # versions.json, newest first
    listed: bool = False  # a versions.json was read
    labels: dict[str, str] = field(default_factory=dict)
    banners: dict[str, str] = field(default_factory=dict)
    last_version: str | None = None
    configured: bool = False
    folders: bool = False  # version-X folders exist


# ---------------------------------------------------------------- reading JS without running it
def _skip_string(src: str, i: int) -> int:
    quote, i = src[i], i + 1
    while i < len(src) and src[i] != quote:
        i += 2 if src[i] == "\\" else 1
    return i + 1


def _strip_comments(src: str) -> str:
    out, i = [], 0
    while i < len(src):
        c = src[i]
        if c in "\"'`":
            j = _skip_string(src, i)
            out.append(src[i:j])
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = len(src) if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            i = len(src) if j < 0 else j + 2
            out.append(" ")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _segments(obj: str) -> list[str]:
    """The top-level comma-separated members of an object literal ``{...}``."""
    parts, depth, start, i = [], 0, 1, 1
    while i < len(obj) - 1:
        c = obj[i]
        if c in "\"'`":
            i = _skip_string(obj, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(obj[start:i])
            start = i + 1
        i += 1
    parts.append(obj[start : len(obj) - 1])
    return parts


_KEY = re.compile(r"\s*(?:([\"'])(.*?)\1|([A-Za-z_$][\w$]*))\s*:\s*(.*)$", re.S)


def _entries(obj: str) -> dict[str, str]:
    """``key → value source`` for the plain ``key: value`` members (methods and spreads are skipped)."""
    out = {}
    for seg in _segments(obj):
        m = _KEY.match(seg)
        if m:
            out[m[2] if m[1] else m[3]] = m[4].strip()
    return out


def _object_at(src: str, i: int) -> str | None:
    """The balanced ``{...}`` starting at the first non-space character at or after ``i``.

    Opening parentheses are skipped: Docusaurus configs commonly wrap preset
    options in a JSDoc type cast, ``/** @type {...} */ ({ docs: {...} })``.
    """
    while i < len(src) and (src[i].isspace() or src[i] == "("):
        i += 1
    if i >= len(src) or src[i] != "{":
        return None
    depth, j = 0, i
    while j < len(src):
        c = src[j]
        if c in "\"'`":
            j = _skip_string(src, j)
            continue
        depth += c == "{"
        depth -= c == "}"
        j += 1
        if depth == 0:
            return src[i:j]
    return None


def _string(value: str | None) -> str | None:
    m = re.fullmatch(r"([\"'`])((?:\\.|(?!\1).)*)\1\s*", value or "", re.S)
    if not m or (m[1] == "`" and "${" in m[2]):
        return None
    return re.sub(r"\\(.)", r"\1", m[2])


def _docs_options(src: str) -> list[str]:
    """Option objects of every docs plugin: ``["@docusaurus/plugin-content-docs", {...}]`` and the classic
    preset's ``docs: {...}``."""
    found = []
    for m in re.finditer(r"([\"'])@docusaurus/plugin-content-docs\1\s*,", src):
        obj = _object_at(src, m.end())
        if obj:
            found.append(obj)
    for m in re.finditer(r"([\"'])(?:classic|@docusaurus/preset-classic)\1\s*,", src):
        preset = _object_at(src, m.end())
        docs = _entries(preset).get("docs", "") if preset else ""
        if docs.startswith("{"):
            found.append(_object_at(docs, 0) or "")
    return [f for f in found if f]


def _read_config(text: str, root: str, plugins: dict, warnings: list[str], where: str) -> None:
    src = _strip_comments(text)
    for obj in _docs_options(src):
        opts = _entries(obj)
        pid = _string(opts.get("id")) or "default"
        p = plugins.setdefault((root, pid), _Plugin(pid, root))
        p.configured = True
        path = _string(opts["path"]) if "path" in opts else "docs"  # Docusaurus's default path
        if path is None:
            warnings.append(f"{where}: plugin {pid!r}: path is not a string literal; its current docs are not labelled")
        else:
            path = posixpath.normpath(path).lstrip("/")
            p.path = "" if path == "." else path
        if "lastVersion" in opts:
            p.last_version = _string(opts["lastVersion"])
        versions = _object_at(opts.get("versions", ""), 0)
        for name, body in (_entries(versions) if versions else {}).items():
            vopts = _entries(_object_at(body, 0) or "{}")
            for key, store in (("label", p.labels), ("banner", p.banners)):
                if key in vopts:
                    value = _string(vopts[key])
                    if value is None:
                        warnings.append(f"{where}: {pid} version {name!r}: {key} is not a string literal; not read")
                    else:
                        store[name] = value


# ---------------------------------------------------------------- the model
class DocsVersions:
    def __init__(self, plugins: list[_Plugin], warnings: list[str]):
        self.plugins, self.warnings = plugins, warnings

    def version_of(self, path: str) -> DocsVersion | None:
        """The docs version of a repository path, or None for paths outside every versioned docs plugin."""
        m = _VERSIONED_RE.match(path)
        if m:
            p = next((p for p in self.plugins if p.root == m["root"] and p.id == (m["id"] or "default")), None)
            if p is not None:
                return self._released(p, m["ver"])
        for p in self.plugins:
            if p.path is not None and path.startswith(f"{p.root}{p.path}/" if p.path else p.root):
                label = p.labels.get("current", "current")
                legacy = bool(_LEGACY_WORDS.search(label)) and label != "current"
                reason = f"current docs of plugin {p.id!r}" + (
                    "" if "current" in p.labels else " (no label configured)"
                )
                return DocsVersion(
                    label, "current", legacy, reason + (f"; label {label!r} says legacy" if legacy else "")
                )
        return None

    @staticmethod
    def _released(p: _Plugin, ver: str) -> DocsVersion:
        label = p.labels.get(ver, ver)
        banner = p.banners.get(ver)
        where = f"version {ver} of plugin {p.id!r}"
        if _LEGACY_WORDS.search(label):
            return DocsVersion(label, ver, True, f"{where}: label {label!r} says legacy")
        if banner is not None:
            return DocsVersion(label, ver, banner == "unmaintained", f"{where}: banner {banner!r}")
        if not p.listed or ver not in p.versions:
            why = "no versions.json" if not p.listed else "folder not listed in versions.json (unpublished)"
            return DocsVersion(label, ver, False, f"{where}: {why}; legacy status unknown")
        last = p.last_version or p.versions[0]
        assumed = "" if p.configured else " (no docusaurus config: Docusaurus defaults assumed)"
        if last == "current" or (last in p.versions and p.versions.index(ver) > p.versions.index(last)):
            return DocsVersion(
                label,
                ver,
                True,
                f"{where}: older than lastVersion {last!r}, Docusaurus's default banner is 'unmaintained'{assumed}",
            )
        return DocsVersion(label, ver, False, f"{where}: not older than lastVersion {last!r}{assumed}")


def docs_config_files(paths: Iterable[str]) -> list[str]:
    """The files :func:`load_docs_versions` wants the bytes of: docusaurus configs and versions.json files."""
    return sorted(p for p in paths if _CONFIG_RE.match(p) or _VERSIONS_RE.match(p))


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
        cm, vm = _CONFIG_RE.match(path), _VERSIONS_RE.match(path)
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
    return DocsVersions(versioned, warnings)


def docs_version_targets(path: str, versions: DocsVersions) -> list[VersionTarget]:
    """The ``docs`` target of a page: the version folder's name (``0.0.0``) or the current version's label."""
    dv = versions.version_of(path)
    if dv is None:
        return []
    name = dv.label if dv.version == "current" else dv.version
    return [
        VersionTarget(
            component="docs",
            constraint=name,
            origin="docs_folder",
            intervals=ConstraintSet.label(name).to_json(),
            detail=f"label {dv.label!r}: {dv.reason}",
        )
    ]


def docs_version_deprecations(path: str, versions: DocsVersions) -> list[Deprecation]:
    """A document-scoped deprecation (marker ``docs_version``) for pages of a legacy docs version."""
    dv = versions.version_of(path)
    if dv is None or not dv.legacy:
        return []
    return [
        Deprecation(scope="document", reason=f"legacy docs version {dv.label!r}: {dv.reason}", marker="docs_version")
    ]
