"""How a documentation version is stored and named (contract between extractors/ and query/).

A page's ``docs`` target stores the version's *name* as Docusaurus names it (``current`` for the current
docs, ``0.0.0`` for ``versioned_docs/version-0.0.0/``) as its constraint, and its other names in the
label set's JSON: ``{"label": "current", "aliases": ["v1", "latest"]}`` (its configured label, ``latest`` for
the version Docusaurus serves by default).  A query for ``docs=v1``, ``docs=latest`` or ``docs=current``
resolves to the same name.  A legacy page's deprecation reason ends with :data:`SUPERSEDED_BY` naming the
current page with the same slug, when there is one.
"""

from __future__ import annotations

import json
import re

COMPONENT = "docs"
LEGACY_MARKER = "docs_version"  # the deprecation marker of a legacy docs version's page
CURRENT = "current"
LATEST = "latest"
SUPERSEDED_BY = " (superseded by {path})"
_SUPERSEDED_RE = re.compile(r" \(superseded by (?P<path>[^()]+)\)$")
# A released version's folder (Docusaurus: ``versioned_docs/version-X/``, ``<id>_versioned_docs/version-X/``).
_VERSION_FOLDER_RE = re.compile(r"^(?P<folder>(?:.*/)?(?:[^/]+_)?versioned_docs/version-[^/]+)/")


def label_json(name: str, aliases: list[str] | tuple[str, ...] = ()) -> str:
    """The stored label set of a docs version: its name, and the other names that select it."""
    data: dict = {"label": name}
    others = [a for a in dict.fromkeys(aliases) if a and a != name]
    if others:
        data["aliases"] = others
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def names_of(intervals_json: str) -> tuple[str, list[str]] | None:
    """(name, aliases) from a stored label set; None for a semver set or unreadable text."""
    try:
        data = json.loads(intervals_json)
    except (TypeError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("label"), str):
        return None
    aliases = data.get("aliases") or []
    return data["label"], [a for a in aliases if isinstance(a, str)]


def superseded_by(reason: str) -> str | None:
    """The current page a legacy page's deprecation reason points to, if any."""
    m = _SUPERSEDED_RE.search(reason or "")
    return m["path"] if m else None


def folder_version_key(folder: str) -> tuple[str, tuple[int, ...], str]:
    """How a version folder sorts among its plugin's (``main_versioned_docs/version-0.0.0``): by its plugin's
    folder, then its version's numbers (larger is newer), then the text; a version named without numbers sorts
    below every numbered one."""
    plugin, _, version = folder.rpartition("/version-")
    return plugin, tuple(int(n) for n in re.findall(r"\d+", version)), version


def version_folder(path: str) -> str | None:
    """The released docs version folder a repository path lies in (``main_versioned_docs/version-0.0.0``), if any.

    A page there that no docs config labels (the config and versions file were not indexed) is still a frozen
    copy of an earlier release: query/trust_factors/deprecation.py gives it the policy's
    ``version_folder_multiplier``."""
    m = _VERSION_FOLDER_RE.match(path)
    return m["folder"] if m else None
