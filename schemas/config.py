"""Operator configuration: sources.toml, identities.toml, verifications.toml (and components.toml:
schemas/components.py).

Attribution and verification authority come only from these files; nothing
inside a crawled repository can add to them.  Loading validates everything and
raises ConfigError naming the file, the key and the problem.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

from trustindex.schemas.compilers import FILE_NAME as COMPILERS_FILE
from trustindex.schemas.compilers import CompilerSpec, load_compilers
from trustindex.schemas.components import FILE_NAME as COMPONENTS_FILE
from trustindex.schemas.components import ComponentRegistry, load_components
from trustindex.schemas.errors import ConfigError
from trustindex.schemas.policy import TIERS, Policy
from trustindex.schemas.registry import source_tables
from trustindex.schemas.web_url import derived_template, template_error

HEAD_REF = "HEAD"  # a source's ref when sources.toml gives none: the remote's default branch
# What a source reads when sources.toml names no include: every documentation markup trustindex has an extractor for
# (Markdown, MDX, and a Sphinx site's reStructuredText), so a new user's Sphinx project is not indexed as its README.
DOCS_INCLUDE = ("**/*.md", "**/*.mdx", "**/*.rst")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


@dataclass(frozen=True)
class PublisherOverride:
    path: str
    publisher: str


@dataclass(frozen=True)
class Source:
    name: str
    url: str  # git URL, or a local path resolved against the sources file's directory
    ref: str
    publisher: str
    include: tuple[str, ...] = DOCS_INCLUDE
    exclude: tuple[str, ...] = ()
    publisher_overrides: tuple[PublisherOverride, ...] = ()
    # Clone partially: blobs of this many bytes or more are never downloaded (skipped as too_large).
    blob_limit: int | None = None
    # Where the source's docs are published (e.g. https://docs.midnight.network): hits then cite the page's URL,
    # routed as the site's Docusaurus config says; "" cites the hosting URL of the file.
    site_url: str = ""
    # Where a file is read on the web at a commit (schemas/web_url.py); "" derives it from a known host's url.
    web_url: str = ""

    @property
    def follows_head(self) -> bool:
        """No ref configured: the source follows the remote's default branch."""
        return self.ref == HEAD_REF

    @property
    def web_template(self) -> str:
        return self.web_url or derived_template(self.url)

    @property
    def config_sha256(self) -> str:
        """Changes when the source's configuration changes (the publish gate keys on it)."""
        fields = asdict(self)
        for optional in ("site_url", "blob_limit", "web_url"):  # without one, a source keeps the digest it had
            if not fields[optional]:
                del fields[optional]
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Publisher:
    id: str
    name: str
    tier: str


@dataclass(frozen=True)
class Person:
    name: str
    emails: tuple[str, ...]
    publisher: str
    signing_keys: tuple[str, ...] = ()  # SSH public keys
    gpg_keys: tuple[str, ...] = ()  # ASCII-armored OpenPGP public keys (a revocation certificate revokes one)


# What a platform's signature on a commit attests: the author it recorded for a pull request it merged
# ("Merge pull request #N from ...") or squashed ("Title (#N)").
PLATFORM_ATTESTS = ("merge", "squash")
ARMORED_KEY = "-----BEGIN PGP PUBLIC KEY BLOCK-----"


@dataclass(frozen=True)
class Platform:
    """A forge that signs the merges it performs (GitHub's web-flow key, a GitLab instance key)."""

    name: str
    committer_name: str
    committer_email: str  # the identity it commits as, e.g. GitHub <noreply@github.com>
    gpg_keys: tuple[str, ...] = ()
    signing_keys: tuple[str, ...] = ()  # SSH public keys
    attests: tuple[str, ...] = PLATFORM_ATTESTS


@dataclass(frozen=True)
class LedgerEntry:
    source: str
    path: str
    commit: str  # full SHA or tag name
    verifier: str  # e-mail (or name) of a person in identities.toml
    method: str = "ledger"
    note: str = ""


@dataclass
class Identities:
    publishers: dict[str, Publisher] = field(default_factory=dict)
    people: list[Person] = field(default_factory=list)
    platforms: list[Platform] = field(default_factory=list)
    _by_email: dict[str, Person] = field(default_factory=dict, repr=False)

    def platform_by_email(self, email: str) -> Platform | None:
        e = (email or "").strip().lower()
        return next((p for p in self.platforms if p.committer_email == e), None)

    def add_person(self, person: Person) -> None:
        """List ``person`` and index each of their e-mail addresses (identity is the address, case-insensitive)."""
        self.people.append(person)
        for e in person.emails:
            self._by_email[e.strip().lower()] = person

    def person_by_email(self, email: str) -> Person | None:
        """Identity is the e-mail address: a known name with an unknown address is unknown."""
        return self._by_email.get((email or "").strip().lower())

    def tier_of(self, publisher_id: str) -> str:
        p = self.publishers.get(publisher_id)
        return p.tier if p else "unknown"


def _read_toml(path: Path, what: str) -> dict:
    if not path.is_file():
        raise ConfigError(str(path), None, f"{what} file not found")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(str(path), None, f"not valid TOML: {e}") from None


def _req(file: Path, key: str, table: dict, name: str) -> str:
    if name not in table:
        raise ConfigError(str(file), f"{key}.{name}", "missing required key")
    v = table[name]
    if not isinstance(v, str) or not v.strip():
        raise ConfigError(str(file), f"{key}.{name}", f"expected a non-empty str, got {v!r}")
    return v


def _str_list(file: Path, key: str, table: dict, name: str, default: tuple) -> tuple[str, ...]:
    v = table.get(name, list(default))
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        raise ConfigError(str(file), f"{key}.{name}", f"expected a list of strings, got {v!r}")
    return tuple(v)


def _no_unknown(file: Path, key: str, table: dict, known: set[str]) -> None:
    for k in table:
        if k not in known:
            raise ConfigError(str(file), f"{key}.{k}", f"unknown key (known: {', '.join(sorted(known))})")


def _blob_limit(file: Path, key: str, table: dict) -> int | None:
    v = table.get("blob_limit")
    if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v <= 0):
        raise ConfigError(str(file), f"{key}.blob_limit", f"expected a positive number of bytes, got {v!r}")
    return v


_SOURCE_KEYS = {"name", "url", "ref", "publisher", "include", "exclude", "publisher_override", "blob_limit"}


def load_sources(path: str | Path) -> list[Source]:
    """Every ``[[source]]``, with ``[defaults]`` and ``[sets]`` applied (schemas/registry.py)."""
    file = Path(path)
    data = _read_toml(file, "sources")
    _no_unknown(file, "", data, {"source", "defaults", "sets"})
    raw = data.get("source")
    if not isinstance(raw, list) or not raw:
        raise ConfigError(str(file), "source", "expected at least one [[source]] table")
    out: list[Source] = []
    for i, t in enumerate(source_tables(str(file), data, raw)):
        key = f"source[{i}]"
        _no_unknown(file, key, t, _SOURCE_KEYS | {"site_url", "web_url", "default_exclude"})
        name = _req(file, key, t, "name")
        if not _NAME.match(name):
            raise ConfigError(str(file), f"{key}.name", f"{name!r} must be letters, digits, '.', '_' or '-'")
        key = f"source[{name}]"
        url = _req(file, key, t, "url")
        if "://" not in url and not url.startswith("git@") and not Path(url).is_absolute():
            url = str((file.parent / url).resolve())
        site_url = t.get("site_url", "")
        if not isinstance(site_url, str) or (site_url and not re.match(r"^https?://[^/\s]+", site_url)):
            raise ConfigError(str(file), f"{key}.site_url", f"expected an http(s) URL, got {site_url!r}")
        web_url = t.get("web_url", "")
        problem = template_error(web_url) if isinstance(web_url, str) else f"expected a URL template, got {web_url!r}"
        if web_url and problem:
            raise ConfigError(str(file), f"{key}.web_url", problem)
        overrides = []
        for j, o in enumerate(t.get("publisher_override", [])):
            okey = f"{key}.publisher_override[{j}]"
            _no_unknown(file, okey, o, {"path", "publisher"})
            overrides.append(PublisherOverride(_req(file, okey, o, "path"), _req(file, okey, o, "publisher")))
        out.append(
            Source(
                name=name,
                url=url,
                # no ref: the branch the remote's HEAD names (crawl.git.ensure_mirror keeps the mirror's HEAD on it)
                ref=_req(file, key, t, "ref") if "ref" in t else HEAD_REF,
                publisher=_req(file, key, t, "publisher"),
                include=_str_list(file, key, t, "include", Source.include),
                exclude=_str_list(file, key, t, "exclude", ()),
                publisher_overrides=tuple(overrides),
                blob_limit=_blob_limit(file, key, t),
                site_url=site_url,
                web_url=web_url,
            )
        )
    names = [s.name for s in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ConfigError(str(file), f"source[{sorted(dup)[0]}]", "source names must be unique")
    return out


def load_identities(path: str | Path) -> Identities:
    file = Path(path)
    data = _read_toml(file, "identities")
    _no_unknown(file, "", data, {"publisher", "person", "platform"})
    ids = Identities()
    for i, t in enumerate(data.get("publisher", [])):
        key = f"publisher[{i}]"
        _no_unknown(file, key, t, {"id", "name", "tier"})
        pid = _req(file, key, t, "id")
        tier = _req(file, f"publisher[{pid}]", t, "tier")
        if tier not in TIERS:
            raise ConfigError(str(file), f"publisher[{pid}].tier", f"{tier!r} is not one of {', '.join(TIERS)}")
        ids.publishers[pid] = Publisher(pid, t.get("name", pid), tier)
    for i, t in enumerate(data.get("person", [])):
        key = f"person[{i}]"
        _no_unknown(file, key, t, {"name", "emails", "publisher", "signing_keys", "gpg_keys"})
        person = Person(
            _req(file, key, t, "name"),
            _str_list(file, key, t, "emails", ()),
            _req(file, key, t, "publisher"),
            _str_list(file, key, t, "signing_keys", ()),
            _armored(file, key, t),
        )
        if person.publisher not in ids.publishers:
            raise ConfigError(str(file), f"{key}.publisher", f"unknown publisher {person.publisher!r}")
        ids.add_person(person)
    for i, t in enumerate(data.get("platform", [])):
        ids.platforms.append(_platform(file, f"platform[{i}]", t, ids))
    return ids


_IDENTITY = re.compile(r"^\s*([^<>]*?)\s*<([^<>\s]+@[^<>\s]+)>\s*$")


def _armored(file: Path, key: str, table: dict) -> tuple[str, ...]:
    keys = _str_list(file, key, table, "gpg_keys", ())
    for j, k in enumerate(keys):
        if ARMORED_KEY not in k:
            raise ConfigError(str(file), f"{key}.gpg_keys[{j}]", f"not an ASCII-armored public key ({ARMORED_KEY})")
    return keys


def _platform(file: Path, key: str, t: dict, ids: Identities) -> Platform:
    _no_unknown(file, key, t, {"name", "committer", "gpg_keys", "signing_keys", "attests"})
    name = _req(file, key, t, "name")
    key = f"platform[{name}]"
    committer = _IDENTITY.match(_req(file, key, t, "committer"))
    if committer is None:
        raise ConfigError(str(file), f"{key}.committer", 'expected "Name <address>" ("GitHub <noreply@github.com>")')
    email = committer.group(2).lower()
    if ids.person_by_email(email) or ids.platform_by_email(email):
        raise ConfigError(str(file), f"{key}.committer", f"{email} is already a person's or another platform's")
    attests = _str_list(file, key, t, "attests", PLATFORM_ATTESTS)
    if not attests or not set(attests) <= set(PLATFORM_ATTESTS):
        raise ConfigError(str(file), f"{key}.attests", f"expected some of {', '.join(PLATFORM_ATTESTS)}")
    platform = Platform(
        name,
        committer.group(1),
        email,
        _armored(file, key, t),
        _str_list(file, key, t, "signing_keys", ()),
        attests,
    )
    if not platform.gpg_keys and not platform.signing_keys:
        raise ConfigError(str(file), key, "a platform needs its key: gpg_keys or signing_keys")
    return platform


def check_sources_against(sources: list[Source], ids: Identities, sources_file: str) -> None:
    for s in sources:
        for pub, key in [(s.publisher, f"source[{s.name}].publisher")] + [
            (o.publisher, f"source[{s.name}].publisher_override") for o in s.publisher_overrides
        ]:
            if pub not in ids.publishers:
                raise ConfigError(sources_file, key, f"publisher {pub!r} is not in identities.toml")


def load_ledger(path: str | Path | None) -> list[LedgerEntry]:
    if path is None or not Path(path).exists():
        return []
    file = Path(path)
    data = _read_toml(file, "verifications")
    _no_unknown(file, "", data, {"verification"})
    out = []
    for i, t in enumerate(data.get("verification", [])):
        key = f"verification[{i}]"
        _no_unknown(file, key, t, {"source", "path", "commit", "verifier", "method", "note"})
        out.append(
            LedgerEntry(
                _req(file, key, t, "source"),
                _req(file, key, t, "path"),
                _req(file, key, t, "commit"),
                _req(file, key, t, "verifier"),
                t.get("method", "ledger"),
                t.get("note", ""),
            )
        )
    return out


@dataclass
class BuildConfig:
    """Everything the operator configures for a build, loaded and checked (``load_build_config``); the flows take
    it whole (flows/refresh.py)."""

    sources: list[Source]
    ids: Identities
    ledger: list[LedgerEntry]
    policy: Policy
    sources_file: Path | None = None  # where it was loaded from (None: made in code, as the tests do)
    components: ComponentRegistry = field(default_factory=ComponentRegistry)
    compilers: list[CompilerSpec] = field(default_factory=list)


def load_build_config(
    sources: str,
    identities: str | None = None,
    policy: str | None = None,
    ledger: str | None = None,
    components: str | None = None,
    compilers: str | None = None,
) -> BuildConfig:
    """Load and validate everything before any work starts."""
    sfile = Path(sources)
    srcs = load_sources(sfile)
    ids = load_identities(identities or sfile.parent / "identities.toml")
    check_sources_against(srcs, ids, str(sfile))
    if policy is None and (sfile.parent / "policy.toml").is_file():
        policy = str(sfile.parent / "policy.toml")
    pol = Policy.load(policy)
    led = load_ledger(ledger if ledger else sfile.parent / "verifications.toml")
    if components is not None and not Path(components).is_file():
        raise ConfigError(components, None, "components file not found")
    registry = load_components(components or sfile.parent / COMPONENTS_FILE)
    beside = sfile.parent / COMPILERS_FILE
    comp = load_compilers(compilers or (beside if beside.is_file() else None), {s.name for s in srcs})
    return BuildConfig(srcs, ids, led, pol, sfile, registry, comp)
