"""A snapshot's component names merged into one name per component, and how a requested name resolves.

The sources spell one component many ways ("Compact compiler", "Compact Compiler", ``compact-compiler``;
``@midnight-ntwrk/compact-runtime`` and "Compact runtime").  Without a registry every spelling used to be a
component of its own, so a target named one way missed the evidence written another way.  ``ComponentNames``
merges the stored names that share a spelling key (schemas/components.py ``name_key``: case, separators and an npm
scope set aside), the names the docs themselves pair (a release-notes folder and its index page's title and
heading: ``relnotes/compact/`` is "Compact compiler" and "Compact toolchain"), and a name with its contraction
("Compactc" and "Compact compiler", "Compact devtools" and "Compact developer tools": ``is_contraction``).  Each
merged group is named once (a registry id when the group holds one, else its id form with the most words, then the
commonest); ``variants`` keeps what was merged, for list_versions and stats to show.
The registry wins where it speaks: the build already stored its aliases
under their canonical ids, and a name it knows is resolved by it first and never merged by spelling alone.

Resolving a requested name: the registry; the spelling key; a family glob's stem; then a scoped package name
(``@scope/x-y``) that extends a known name ``x`` is a member of that name's family; anything else is unknown, and
``suggest`` offers up to three close names (difflib).
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from copy import copy
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from trustindex.schemas.components import (
    LABEL_COMPONENTS,
    ComponentRegistry,
    family_stem,
    is_contraction,
    is_family_glob,
    kebab,
    name_key,
    unscoped,
)
from trustindex.schemas.version_map import relnotes_index_folder

SUGGESTIONS = 3
# difflib ratio from which a requested name is a misspelling of a known one rather than a package of its family
# ("compact-runtme" 0.97 of "compact-runtime"; "midnight-js-utils" only 0.79 of "midnight-js")
_CLOSE = 0.85


@dataclass(frozen=True)
class Named:
    """A requested component name resolved: the snapshot's name for it (None: unknown) and how."""

    component: str | None
    how: str


class ComponentNames:
    """Every stored component name → its merged name; ``variants``: merged name → the stored names it stands for
    (only where that is more than itself); ``resolve`` / ``suggest`` for requested names."""

    def __init__(
        self,
        counts: Mapping[str, int],
        registry: ComponentRegistry | None = None,
        pairs: Iterable[tuple[str, str]] = (),
    ):
        """``counts``: stored name → rows that name it; ``pairs``: (stored name, another name the docs give it)."""
        self.registry = registry or ComponentRegistry()
        ids = {c.id for c in self.registry.components}
        parent: dict[str, str] = {}

        def find(k: str) -> str:
            while parent.setdefault(k, k) != k:
                parent[k] = parent[parent[k]]
                k = parent[k]
            return k

        names = [n for n in counts if n not in LABEL_COMPONENTS and name_key(n)]
        for n in names:
            find(name_key(n))
        pairs = list(pairs)
        for stored, other in pairs:
            if stored in counts and stored not in LABEL_COMPONENTS and name_key(other) and not self._speaks(other):
                parent[find(name_key(other))] = find(name_key(stored))
        for short, long in _contractions([*names, *(other for _s, other in pairs)]):
            if not (self._speaks(short) or self._speaks(long)):
                parent[find(name_key(short))] = find(name_key(long))
        groups: dict[str, list[str]] = {}
        for n in names:
            groups.setdefault(find(name_key(n)), []).append(n)
        self.canonical: dict[str, str] = {n: n for n in counts if n in LABEL_COMPONENTS}
        self.variants: dict[str, tuple[str, ...]] = {}
        for members in groups.values():
            name = _group_name(members, counts, ids)
            for n in members:
                self.canonical[n] = name
            if sorted(members) != [name]:
                self.variants[name] = tuple(sorted(members))
        self._by_key = {k: self.canonical[groups[find(k)][0]] for k in parent if find(k) in groups}

    def within(self, kept: set[str]) -> ComponentNames:
        """The same merges over the merged names in ``kept`` only (a scoped view's components, query/scope.py): a
        name outside them is unknown to it, never resolved to or suggested."""
        out = copy(self)
        out.canonical = {n: m for n, m in self.canonical.items() if m in kept or n in LABEL_COMPONENTS}
        out.variants = {m: v for m, v in self.variants.items() if m in kept}
        out._by_key = {k: m for k, m in self._by_key.items() if m in kept}
        return out

    def _speaks(self, name: str) -> bool:
        return bool(self.registry) and self.registry.knows(name)

    @property
    def names(self) -> list[str]:
        """The merged names, sorted."""
        return sorted(set(self.canonical.values()))

    def of(self, stored: str) -> str:
        """A stored name's merged name (a name the snapshot does not store: itself)."""
        return self.canonical.get(stored, stored)

    def resolve(self, requested: str) -> Named:
        asked = requested.strip()
        if asked in LABEL_COMPONENTS:
            return Named(asked, "as written")
        if self._speaks(asked):
            r = self.registry.resolve(asked)
            if r.component in self.canonical:
                return Named(self.of(r.component), r.how)
        key = name_key(asked)
        hit = self._by_key.get(key)
        if hit is not None:
            if hit == asked:
                return Named(hit, "as written")
            how = "family glob, named by its stem" if is_family_glob(asked) else "spelling of"
            return Named(hit, f"{how} {hit!r}" + self._merged_note(hit))
        return self._family(asked)

    def _merged_note(self, name: str) -> str:
        merged = self.variants.get(name, ())
        return f" (merged: {', '.join(merged)})" if merged else ""

    def _family(self, asked: str) -> Named:
        """A scoped package name that extends a known name is a member of that name's family (the longest such
        name), unless it is a near spelling of a known name (then it is a misspelling, refused with suggestions)."""
        if unscoped(asked) == asked.strip() or self._near(asked):
            return Named(None, "unknown")
        wanted = kebab(family_stem(asked))
        best = None
        for form, name in self._forms().items():
            if wanted.startswith(form + "-") and (best is None or len(form) > len(best[0])):
                best = (form, name)
        if best is None:
            return Named(None, "unknown")
        return Named(best[1], f"member of family '{best[0]}-*' of {best[1]!r} (a package named after it)")

    def _near(self, asked: str) -> bool:
        wanted = kebab(asked)
        return any(difflib.SequenceMatcher(None, wanted, kebab(n)).ratio() >= _CLOSE for n in self._spellings())

    def _spellings(self) -> list[str]:
        return sorted({*self.canonical, *self.canonical.values()} - LABEL_COMPONENTS)

    def _forms(self) -> dict[str, str]:
        """Each stored or merged name's id form → the merged name."""
        out: dict[str, str] = {}
        for n in self._spellings():
            out.setdefault(kebab(n), self.of(n))
        return out

    def suggest(self, requested: str, n: int = SUGGESTIONS) -> list[str]:
        """Up to ``n`` merged names close to ``requested`` (closest first)."""
        by_form = self._forms()
        out: list[str] = []
        for form in difflib.get_close_matches(kebab(requested), list(by_form), n=n * 3, cutoff=0.6):
            if by_form[form] not in out:
                out.append(by_form[form])
        return out[:n]


def _contractions(names: list[str]) -> list[tuple[str, str]]:
    """(contracted, full) among the names ("Compactc", "Compact compiler"): one component written two ways."""
    forms = {kebab(n): n for n in sorted(names) if name_key(n)}
    return [(s, f) for s in forms.values() for f in forms.values() if s != f and is_contraction(s, f)]


def _group_name(members: list[str], counts: Mapping[str, int], ids: set[str]) -> str:
    """A merged group's name: a registry id among its names, else the id form with the most words ("compact-compiler"
    over a release-notes folder's bare "compact", "midnight-js" over "midnightjs"), then the one written most often,
    then alphabetical."""
    registered = sorted(m for m in members if m in ids)
    if registered:
        return registered[0]
    forms: Counter[str] = Counter()
    for m in members:
        forms[kebab(m)] += counts.get(m, 0)
    return min(forms, key=lambda f: (-f.count("-"), -forms[f], f))


def snapshot_names(t: Mapping[str, pa.Table], registry: ComponentRegistry | None = None) -> ComponentNames:
    """The names of a snapshot's tables (``version_targets``, and ``documents`` and ``chunks`` for what the
    release-notes index pages call their folders): what the search and ``stats`` both merge by."""
    stored: Counter[str] = Counter()
    if "version_targets" in t:
        stored.update(t["version_targets"].column("component").to_pylist())
    return ComponentNames(stored, registry, relnotes_titles(t, set(stored)))


def relnotes_titles(t: Mapping[str, pa.Table], stored: set[str]) -> list[tuple[str, str]]:
    """(release-notes folder, a name its index page gives it): ``relnotes/compact.mdx``'s title "Compact compiler"
    and first heading "Compact toolchain" name the component of ``relnotes/compact/``'s releases."""
    if "documents" not in t or "chunks" not in t:
        return []
    docs = t["documents"].select(["doc_id", "path", "front_matter"]).to_pylist()
    folders = {d["doc_id"]: f for d in docs if (f := relnotes_index_folder(d["path"])) in stored}
    if not folders:
        return []
    pairs = []
    for d in docs:
        if d["doc_id"] in folders:
            title = _title(d["front_matter"])
            if title:
                pairs.append((folders[d["doc_id"]], title))
    chunks = t["chunks"].select(["doc_id", "ordinal", "heading_path"])
    first = chunks.filter(pc.and_(pc.is_in(chunks["doc_id"], pa.array(list(folders))), pc.equal(chunks["ordinal"], 0)))
    for r in first.to_pylist():  # its heading path opens with the page's title, then its first heading
        pairs.extend((folders[r["doc_id"]], h) for h in (r["heading_path"] or [])[:2])
    return pairs


def _title(front_matter: str | None) -> str | None:
    try:
        title = json.loads(front_matter or "{}").get("title")
    except (ValueError, AttributeError):
        return None
    return title.strip() if isinstance(title, str) and title.strip() else None
