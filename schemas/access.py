"""Who may read which sources of a served snapshot: ``serve --tokens FILE`` (**contract**; docs/serving.md).

    [[token]]                                   # a bearer token: its name, the sha256 of its secret, its sources
    name = "team-a-ci"
    sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    sources = ["team-a-*", "midnight-docs"]     # names or globs of the registry's sources; ["*"]: every source
    expires = 2027-01-31T00:00:00Z              # optional: a TOML date or offset date-time

    [[group]]                                   # an SSO group (serve --oidc-scope-claim): the same sources rule
    name = "team-a"
    sources = ["team-a-*"]

The file holds digests, never secrets: a leaked tokens file grants nothing.  ``SourceScope`` is what the search
library filters by (query/scope.py): the patterns are matched against the served snapshot's source names when it
is opened, so a source added later falls under the globs that name it.  Every error names the file, the key and
the problem (schemas/errors.py ``ConfigError``).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from fnmatch import fnmatchcase
from pathlib import Path

from trustindex.schemas.errors import ConfigError

ALL_SOURCES = "*"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_NAME = re.compile(r"^[^\x00-\x1f\x7f]{1,200}$")  # a person's or an SSO group's name: any printable text
_TOKEN_KEYS = {"name", "sha256", "sources", "expires"}
_GROUP_KEYS = {"name", "sources"}


@dataclass(frozen=True)
class SourceScope:
    """The sources an identity may read, as names or globs (``fnmatch``, case-sensitive) of the registry's sources."""

    patterns: tuple[str, ...]

    @property
    def everything(self) -> bool:
        return ALL_SOURCES in self.patterns

    def allows(self, source: str) -> bool:
        return any(fnmatchcase(source, p) for p in self.patterns)

    def resolve(self, sources: Iterable[str]) -> frozenset[str]:
        """The names among ``sources`` this scope allows."""
        return frozenset(s for s in sources if self.allows(s))

    @classmethod
    def union(cls, scopes: Iterable[SourceScope]) -> SourceScope:
        return cls(tuple(dict.fromkeys(p for s in scopes for p in s.patterns)))


@dataclass(frozen=True)
class TokenEntry:
    name: str
    sha256: str  # of the secret's UTF-8 bytes, lower-case hex
    scope: SourceScope
    expires: datetime | None = None  # UTC


@dataclass(frozen=True)
class AccessFile:
    """A tokens file, checked: tokens by their digest, groups by name."""

    path: str
    tokens: tuple[TokenEntry, ...]
    groups: dict[str, SourceScope]

    @classmethod
    def load(cls, path: str | Path) -> AccessFile:
        file = str(path)
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as e:
            raise ConfigError(file, None, f"cannot read the tokens file ({e.strerror})") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ConfigError(file, None, f"not valid TOML: {e}") from None
        for key in data:
            if key not in ("token", "group"):
                raise ConfigError(file, key, "unknown key (known: group, token)")
        tokens = tuple(_token(file, i, t) for i, t in enumerate(_tables(file, data, "token")))
        groups = [_group(file, i, g) for i, g in enumerate(_tables(file, data, "group"))]
        if not tokens and not groups:
            raise ConfigError(file, None, "holds no [[token]] and no [[group]]")
        _unique(file, "token", [t.name for t in tokens], "name")
        _unique(file, "token", [t.sha256 for t in tokens], "sha256")
        _unique(file, "group", [name for name, _ in groups], "name")
        return cls(file, tokens, dict(groups))


def _tables(file: str, data: dict, key: str) -> list[dict]:
    raw = data.get(key, [])
    if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
        raise ConfigError(file, key, f"expected [[{key}]] tables")
    return raw


def _known(file: str, key: str, table: dict, known: set[str]) -> None:
    for k in table:
        if k not in known:
            hint = "; store the sha256 of the secret, never the secret" if k in ("secret", "token", "value") else ""
            raise ConfigError(file, f"{key}.{k}", f"unknown key (known: {', '.join(sorted(known))}){hint}")


def _name(file: str, key: str, table: dict) -> str:
    name = table.get("name")
    if not isinstance(name, str) or not name.strip() or not _NAME.match(name):
        raise ConfigError(file, f"{key}.name", f"expected a name (1 to 200 printable characters), got {name!r}")
    return name


def _scope(file: str, key: str, table: dict) -> SourceScope:
    sources = table.get("sources")
    if not isinstance(sources, list) or not sources or not all(isinstance(s, str) and s.strip() for s in sources):
        expected = 'expected a non-empty list of source names or globs (["*"]: every source)'
        raise ConfigError(file, f"{key}.sources", f"{expected}, got {sources!r}")
    return SourceScope(tuple(s.strip() for s in sources))


def _token(file: str, i: int, t: dict) -> TokenEntry:
    key = f"token[{i}]"
    _known(file, key, t, _TOKEN_KEYS)
    name = _name(file, key, t)
    key = f"token[{name}]"
    digest = t.get("sha256")
    if not isinstance(digest, str) or not _SHA256.match(digest.strip().lower()):
        raise ConfigError(file, f"{key}.sha256", "expected the secret's sha256 as 64 hexadecimal digits")
    return TokenEntry(name, digest.strip().lower(), _scope(file, key, t), _expires(file, key, t.get("expires")))


def _expires(file: str, key: str, value: object) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ConfigError(file, f"{key}.expires", "a date-time needs its offset (e.g. 2027-01-31T00:00:00Z)")
        return value.astimezone(UTC)
    if isinstance(value, date):  # a date: the token holds through that day (UTC)
        return datetime.combine(value, time.max, tzinfo=UTC)
    raise ConfigError(file, f"{key}.expires", f"expected a TOML date or offset date-time, got {value!r}")


def _group(file: str, i: int, g: dict) -> tuple[str, SourceScope]:
    key = f"group[{i}]"
    _known(file, key, g, _GROUP_KEYS)
    name = _name(file, key, g)
    return name, _scope(file, f"group[{name}]", g)


def _unique(file: str, kind: str, values: list[str], what: str) -> None:
    seen: set[str] = set()
    for v in values:
        if v in seen:
            shown = v if what == "name" else v[:12] + "..."
            raise ConfigError(file, f"{kind}", f"two [[{kind}]] tables have the same {what} ({shown})")
        seen.add(v)
