"""Versions a page inherits from its docs version: the map (schemas/version_map.py) and the inferred rows.

The map of one docs version (per source), each entry with where it was read:

1. its compatibility pages' table rows (``relnotes/support-matrix.mdx``: "Midnight.js 4.1.1"), union over tabs;
2. its label, when the label names a component and version ("Compact 0.18");
3. for each of those, the release notes of that release (the same version, else the newest patch of the same
   major.minor below it: the matrix's toolchain 0.31.1 → the notes of 0.31.0) and the other components that
   release states ("Language version: 0.23.0");
4. for a release-notes folder of the docs version that 1–3 leave unstated, its newest release and what it states
   (the legacy docs' newest Compact release is compiler 0.26.0 with language 0.18.0).

Every page of the docs version that states nothing of its own for a component of the map (no document-scoped row)
gets a document-scoped row of origin ``inferred`` for it: the union of the map's versions, the detail naming the
pages it came from.  Release-notes and compatibility pages are the map's sources and inherit nothing; pages outside
every docs version (an unversioned API reference, a blog) have no map.  A chunk's own rows still replace the page's
for that chunk (query/evidence.py), and the page's own chunk-scoped rows ride along (``InferredRow.page``) so the
match can tell when the page itself contradicts what it inherits.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from trustindex.query.version_rows import InferredRow, VersionRow
from trustindex.schemas import versions as V
from trustindex.schemas.components import LABEL_COMPONENTS
from trustindex.schemas.docs_versions import COMPONENT as DOCS
from trustindex.schemas.docs_versions import names_of
from trustindex.schemas.version_map import (
    COMPAT_MATRIX,
    INFERRED,
    RELEASE_NOTES,
    RELEASE_ORIGINS,
    is_compatibility_page,
    relnotes_folder,
)
from trustindex.schemas.version_parsers import parse_npm

_LABEL_PAIR = re.compile(r"(?P<name>[A-Za-z][\w.\- ]*?)\s+v?(?P<version>\d+\.\d+(?:\.\d+)?)\b")
_SHOWN_SOURCES = 3


@dataclass(frozen=True)
class Page:
    """A document as the inference reads it."""

    doc_id: str
    source: str
    path: str
    docs_version: str | None  # its docs version's name (None: outside every versioned docs plugin)
    labels: tuple[str, ...] = ()  # the docs version's other names (its label)


@dataclass
class _Entry:
    """What a docs version's map says of one component."""

    constraints: dict[str, V.ConstraintSet] = field(default_factory=dict)  # as written → parsed
    sources: list[str] = field(default_factory=list)

    def add(self, constraint: str, cs: V.ConstraintSet, where: str) -> None:
        self.constraints.setdefault(constraint, cs)
        if where not in self.sources:
            self.sources.append(where)


@dataclass(frozen=True)
class _Release:
    page: Page
    stated: tuple[VersionRow, ...]  # the page's document-scoped release and stamp rows
    folder: str | None = None  # the component of the release-notes folder it lies in


def inferred_rows(
    pages: Iterable[Page],
    doc_rows: Mapping[str, list[VersionRow]],
    chunk_rows: Mapping[str, list[VersionRow]],
    folder_component: Callable[[str], str] = str,
) -> dict[str, list[InferredRow]]:
    """By document: the rows its docs version's map gives it (``chunk_rows``: each document's chunk-scoped rows;
    ``folder_component``: the component name a release-notes folder's rows are stored under)."""
    pages = list(pages)
    releases = _releases(pages, doc_rows, folder_component)
    keys = {key for p in pages if (key := _key(p)) is not None}
    maps = {key: _map(key, pages, doc_rows, chunk_rows, releases) for key in keys}
    said = {key: {c: _said(e, key) for c, e in entries.items()} for key, entries in maps.items()}  # once per map
    out: dict[str, list[InferredRow]] = {}
    for p in pages:
        key = _key(p)
        if key is None or not said.get(key) or _is_source(p):
            continue
        own = {r.component for r in doc_rows.get(p.doc_id, [])}
        page: dict[str, list[VersionRow]] = defaultdict(list)
        for r in chunk_rows.get(p.doc_id, []):
            page[r.component].append(r)
        made = [
            InferredRow(p.doc_id, None, comp, constraint, intervals, INFERRED, "parsed", detail, tuple(page[comp]))
            for comp, (constraint, intervals, detail) in sorted(said[key].items())
            if comp not in own
        ]
        if made:
            out[p.doc_id] = made
    return out


def _key(p: Page) -> tuple[str, str] | None:
    return (p.source, p.docs_version) if p.docs_version else None


def _is_source(p: Page) -> bool:
    return is_compatibility_page(p.path) or relnotes_folder(p.path)[0]


def _said(entry: _Entry, key: tuple[str, str]) -> tuple[str, str, str]:
    """What a map says of one component, as an inferred row carries it: the versions (as written, and their union
    as stored intervals) and where they were read."""
    union = V.ConstraintSet()
    for cs in entry.constraints.values():
        union = union.union(cs)
    shown = entry.sources[:_SHOWN_SOURCES]
    more = len(entry.sources) - len(shown)
    detail = f"inferred for docs version {key[1]!r} from " + "; ".join(shown) + (f"; {more} more" if more else "")
    return " || ".join(sorted(entry.constraints)), union.to_json(), detail


def _parsed(r: VersionRow) -> V.ConstraintSet | None:
    if r.status != "parsed" or not r.intervals or r.component in LABEL_COMPONENTS:
        return None
    try:
        cs = V.ConstraintSet.from_json(r.intervals)
    except Exception:  # a row of an older build: no evidence
        return None
    return None if cs.is_label or cs.is_empty else cs


def _releases(
    pages: list[Page], doc_rows: Mapping[str, list[VersionRow]], folder_component: Callable[[str], str]
) -> dict[str, list[_Release]]:
    """Pages that state a release, by source: release-notes pages, and pages whose lead stamps two components'
    versions together (a generated reference's "Compact language version 0.18.0, compiler version 0.26.0": which
    language that compiler compiles), each with what it states."""
    out: dict[str, list[_Release]] = defaultdict(list)
    for p in pages:
        rows = doc_rows.get(p.doc_id, [])
        stated = tuple(r for r in rows if r.origin in RELEASE_ORIGINS and _parsed(r) is not None)
        under, folder = relnotes_folder(p.path)
        notes = under and any(r.origin == RELEASE_NOTES for r in rows)
        if notes or len({r.component for r in stated}) >= 2:
            out[p.source].append(_Release(p, stated, folder_component(folder) if notes and folder else None))
    return out


def _map(key, pages, doc_rows, chunk_rows, releases) -> dict[str, _Entry]:
    source, version = key
    entries: dict[str, _Entry] = defaultdict(_Entry)
    mine = [p for p in pages if _key(p) == key]
    stated: list[tuple[str, str, V.ConstraintSet, str]] = []  # (component, constraint, parsed, where)
    for p in mine:
        if not is_compatibility_page(p.path):
            continue
        for r in [*doc_rows.get(p.doc_id, []), *chunk_rows.get(p.doc_id, [])]:
            cs = _parsed(r)
            if r.origin == COMPAT_MATRIX and cs is not None:
                stated.append((r.component, r.constraint, cs, p.path))
    for label in sorted({a for p in mine for a in p.labels}):
        for m in _LABEL_PAIR.finditer(label):
            cs = _label_version(m["version"])
            if cs is not None:
                stated.append((m["name"].strip(), m["version"], cs, f"docs version label {label!r}"))
    for comp, constraint, cs, where in stated:
        entries[comp].add(constraint, cs, where)
    own_releases = [r for r in releases.get(source, []) if _key(r.page) == key]
    for comp, release in _newest(own_releases).items():
        if comp in entries:
            continue
        why = f"{release.page.path}, the newest release notes of {comp} in docs version {version!r}"
        for r in release.stated:
            if r.component not in entries or r.component == comp:
                entries[r.component].add(r.constraint, _parsed(r) or V.ConstraintSet(), why)
    _chain_all(entries, releases.get(source, []))
    return dict(entries)


def _chain_all(entries: dict[str, _Entry], releases: list[_Release]) -> None:
    """Each stated release brings what its notes state, and so on (a release found this way can name another);
    never over a component already stated (what the docs version's own pages say comes first)."""
    done: set[tuple[str, str]] = set()
    for _round in range(3):
        todo = [(c, k, e.sources[0]) for c, e in entries.items() for k in e.constraints if (c, k) not in done]
        if not todo:
            return
        for comp, constraint, where in todo:
            done.add((comp, constraint))
            _chain(entries, releases, comp, constraint, where)


def _label_version(text: str) -> V.ConstraintSet | None:
    """A label's "0.18" is any 0.18.x, its "0.18.2" that release."""
    try:
        return parse_npm(text)
    except V.VersionSyntaxError:
        return None


def _version(text: str) -> V.Version | None:
    try:
        return V.parse_version(text.strip().removeprefix("v"))
    except V.VersionSyntaxError:
        return None


def _chain(entries: dict[str, _Entry], releases: list[_Release], comp: str, constraint: str, where: str) -> None:
    """The release ``comp`` ``constraint`` names: the pages stating it (the same version, else the newest lower
    patch of its major.minor) and every other component they state that the map does not state yet."""
    wanted = _version(constraint)
    if wanted is None:
        return
    found: list[tuple[V.Version, _Release]] = []
    for rel in releases:
        for r in rel.stated:
            got = _version(r.constraint) if r.component == comp else None
            if got is not None and got.release()[:2] == wanted.release()[:2] and not wanted < got:
                found.append((got, rel))
    if not found:
        return
    got = max(v for v, _rel in found)
    how = "" if got == wanted else f" (the notes of {got}, the newest of {wanted.release()[0]}.{wanted.release()[1]})"
    fresh = {c for c in entries}
    for _v, rel in sorted((f for f in found if f[0] == got), key=lambda f: f[1].page.path):
        why = f"{where} → {rel.page.path}{how}"
        for r in rel.stated:
            cs = _parsed(r)
            if r.component != comp and r.component not in fresh and cs is not None:
                entries[r.component].add(r.constraint, cs, why)


def _newest(releases: list[_Release]) -> dict[str, _Release]:
    """Per release-notes folder (``relnotes/<component>/``): its release with the highest version (a page of
    several releases, such as a testnet's notes, is no folder's; a release's other components are not its own)."""
    best: dict[str, tuple[V.Version, _Release]] = {}
    for rel in releases:
        for r in rel.stated:
            own = r.origin == RELEASE_NOTES and rel.folder is not None and r.component == rel.folder
            got = _version(r.constraint) if own else None
            if got is not None and (r.component not in best or best[r.component][0] < got):
                best[r.component] = (got, rel)
    return {c: rel for c, (_v, rel) in best.items()}


def pages_of(docs: Iterable[dict], doc_rows: Mapping[str, list[VersionRow]]) -> list[Page]:
    """The documents (rows of the documents table) with the docs version their ``docs`` row names."""
    out = []
    for d in docs:
        version: str | None = None
        labels: tuple[str, ...] = ()
        for r in doc_rows.get(d["doc_id"], []):
            if r.component == DOCS and r.status == "parsed":
                named = names_of(r.intervals or "")
                version, labels = (named[0], tuple(named[1])) if named else (r.constraint, ())
        out.append(Page(d["doc_id"], d["source"], d["path"], version, labels))
    return out
