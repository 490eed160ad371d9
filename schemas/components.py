"""The component registry: which names the docs and manifests use for one component (operator configuration).

``components.toml`` (optional, beside ``sources.toml``) holds ``[[component]]`` tables::

    [[component]]
    id = "midnight-js"                                   # the canonical id stored and reported
    aliases = ["Midnight.js", "midnight-js", "@midnight-ntwrk/midnight-js"]
    families = ["@midnight-ntwrk/midnight-js-*"]          # packages released together, at one version

An alias is any name the sources write for the component: a display name as the docs write it
("Midnight.js", "Compact toolchain"), a package name, a release-notes folder name.  Aliases match
case-insensitively; a family is a glob over package names (``*`` matches any run of characters).  The build
stores every version target under its canonical id (the name as written stays in the target's detail) and the
snapshot keeps the registry, so a query may name a component by any alias.

Without a registry (or for a name it does not know) names are compared by their spelling's key (``name_key``):
case, separators and an npm scope set aside, so "Compact compiler", "compact-compiler" and "Compact Compiler" are
one name, and so are ``@midnight-ntwrk/compact-runtime`` and "Compact runtime"; query/component_names.py merges
the snapshot's names that way.  A glob (``@midnight-ntwrk/midnight-js-*``) is a family, never a name: its stem
(``family_stem``) names the component the family belongs to.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from trustindex.schemas.docs_versions import COMPONENT as DOCS
from trustindex.schemas.errors import ConfigError
from trustindex.schemas.toml_file import read_table_array

FILE_NAME = "components.toml"
NETWORK = "network"  # the network a compatibility table's tab describes (preview, preprod, mainnet)
# Components whose versions are names, matched exactly (never semver ranges).
LABEL_COMPONENTS = frozenset({DOCS, NETWORK})
_ID = re.compile(r"^[A-Za-z0-9@][A-Za-z0-9@/._-]{0,99}$")
_SCOPE = re.compile(r"^@[^/\s]+/")
_SEPARATORS = re.compile(r"[^0-9a-z]+")


def unscoped(name: str) -> str:
    """``@midnight-ntwrk/compact-runtime`` → ``compact-runtime`` (a name without a scope is returned as is)."""
    return _SCOPE.sub("", name.strip())


def kebab(name: str) -> str:
    """A name's id form: no npm scope, lower case, every run of other characters one dash ("Midnight.js" →
    ``midnight-js``, "Compact toolchain" → ``compact-toolchain``); a family glob's stem (no trailing ``-*``)."""
    return _SEPARATORS.sub("-", unscoped(family_stem(name)).casefold()).strip("-")


def name_key(name: str) -> str:
    """The spelling-free key two names of one component share: their kebab form without its dashes
    ("MidnightJS", "Midnight.js", ``@midnight-ntwrk/midnight-js`` → ``midnightjs``)."""
    return kebab(name).replace("-", "")


def is_contraction(short: str, long: str) -> bool:
    """Whether ``short`` is ``long`` contracted: its first word whole, then a prefix of each later word, run together
    ("Compactc" of "Compact compiler", "Compact devtools" of "Compact developer tools"); the way tools are named
    after what they are.  Both need two words or more in ``long``, and ``short`` must be shorter."""
    words = kebab(long).split("-")
    key = name_key(short)
    if len(words) < 2 or len(key) >= len(name_key(long)) or not key.startswith(words[0]):
        return False
    return _prefixes(key[len(words[0]) :], words[1:])


def _prefixes(rest: str, words: list[str]) -> bool:
    """Whether ``rest`` is a prefix of each of ``words`` in turn, run together: three letters at least (or the whole
    word), the last word's one at least ("dev" of "developer", "c" of a last "compiler")."""
    if not words:
        return not rest
    least = 1 if len(words) == 1 else min(3, len(words[0]))
    cuts = range(len(words[0]), least - 1, -1)
    return any(rest.startswith(words[0][:n]) and _prefixes(rest[n:], words[1:]) for n in cuts)


def is_family_glob(name: str) -> bool:
    """A glob over package names (``@midnight-ntwrk/midnight-js-*``): a family, never a component's name."""
    return "*" in name


def family_stem(name: str) -> str:
    """The name a family glob extends (``@midnight-ntwrk/midnight-js-*`` → ``@midnight-ntwrk/midnight-js``); other
    names unchanged."""
    if not is_family_glob(name):
        return name.strip()
    return name.strip().split("*", 1)[0].rstrip("-_./ ")


@dataclass(frozen=True)
class Component:
    id: str
    aliases: tuple[str, ...] = ()
    families: tuple[str, ...] = ()


@dataclass(frozen=True)
class Resolution:
    component: str  # the canonical id (the name itself when the registry does not know it)
    how: str  # "as written" | "alias of component 'x'" | "member of family 'glob' of component 'x'"


@dataclass
class ComponentRegistry:
    components: list[Component] = field(default_factory=list)
    _alias: dict[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for c in self.components:
            for name in (c.id, *c.aliases):
                self._alias.setdefault(name.casefold(), c.id)

    def __bool__(self) -> bool:
        return bool(self.components)

    def resolve(self, name: str) -> Resolution:
        """The canonical id of a name: an id or alias first, then a family glob (the glob itself, or a package it
        matches); otherwise the name as is."""
        hit = self._alias.get(name.strip().casefold())
        if hit is not None:
            return Resolution(hit, "canonical id" if hit == name.strip() else f"alias of component {hit!r}")
        for c in self.components:
            for glob in c.families:
                if name.strip().casefold() == glob.casefold():
                    return Resolution(c.id, f"family {glob!r} of component {c.id!r}")
                if fnmatch.fnmatchcase(name.strip().casefold(), glob.casefold()):
                    return Resolution(c.id, f"member of family {glob!r} of component {c.id!r}")
        return Resolution(name, "as written")

    def knows(self, name: str) -> bool:
        """Whether the registry speaks for ``name`` (an id, an alias, a family glob or one of its packages)."""
        return self.resolve(name).how != "as written"

    def canonical(self, name: str) -> str:
        return self.resolve(name).component

    def rename(self, component: str, detail: str) -> tuple[str, str]:
        """A stored target's component under its canonical id; the detail keeps the name as written."""
        if component in LABEL_COMPONENTS:
            return component, detail
        r = self.resolve(component)
        if r.component == component:
            return component, detail
        note = f"written as {component!r} ({r.how})"
        return r.component, f"{note}; {detail}" if detail else note

    def to_json(self) -> str:
        return json.dumps(
            [{"id": c.id, "aliases": list(c.aliases), "families": list(c.families)} for c in self.components],
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )

    @property
    def digest(self) -> str:
        """Changes when the registry changes (a build keys on it: the stored component names depend on it)."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:20] if self.components else ""

    @classmethod
    def from_json(cls, text: str) -> ComponentRegistry:
        data = json.loads(text)
        return cls([Component(d["id"], tuple(d.get("aliases", ())), tuple(d.get("families", ()))) for d in data])


def load_components(path: str | Path | None) -> ComponentRegistry:
    """The registry in ``path`` (an empty one when the file is absent); errors name the file and the key."""
    if path is None or not Path(path).is_file():
        return ComponentRegistry()
    file = Path(path)
    raw = read_table_array(file, "component")
    out: list[Component] = []
    owner: dict[str, str] = {}
    for i, t in enumerate(raw):
        key = f"component[{i}]"
        for k in t:
            if k not in ("id", "aliases", "families"):
                raise ConfigError(str(file), f"{key}.{k}", "unknown key (known: aliases, families, id)")
        cid = t.get("id")
        if not isinstance(cid, str) or not _ID.match(cid):
            raise ConfigError(str(file), f"{key}.id", f"expected a component id (letters, digits, @/._-), got {cid!r}")
        key = f"component[{cid}]"
        lists = {}
        for name in ("aliases", "families"):
            v = t.get(name, [])
            if not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v):
                raise ConfigError(str(file), f"{key}.{name}", f"expected a list of non-empty strings, got {v!r}")
            lists[name] = tuple(x.strip() for x in v)
        for name in (cid, *lists["aliases"]):
            prev = owner.setdefault(name.casefold(), cid)
            if prev != cid:
                raise ConfigError(str(file), f"{key}.aliases", f"{name!r} already names component {prev!r}")
        out.append(Component(cid, lists["aliases"], lists["families"]))
    return ComponentRegistry(out)
