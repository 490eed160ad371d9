"""sources.toml at organisation scale: ``[defaults]`` shared by every source, named ``[sets]`` of globs, and the
default exclude set (issue 29 item 2).

    [defaults]                 # any source that does not set a key takes it from here
    publisher = "midnight-foundation"
    include = ["@docs"]        # "@name": a set below (or a built-in one), expanded in place
    web_url = "https://github.com/midnightntwrk/{name}/blob/{commit}/{path}#L{start}-L{end}"
    default_exclude = true     # the built-in DEFAULT_EXCLUDE is added to every source's exclude; false drops it

    [sets]
    docs = ["**/*.md", "**/*.mdx"]

A source's ``include`` or ``exclude`` replaces the default's (it does not add to it): a source that needs the
docs and its code says ``include = ["@docs", "src/**/*.ts"]``.  This module turns the file into plain
per-source tables; schemas/config.py validates each as before, so errors name the file and key the same way.
"""

from __future__ import annotations

import re

from trustindex.schemas.errors import ConfigError
from trustindex.schemas.web_url import template_error

# What a real organisation's repositories hold that is nobody's documentation (issue 29: 50 repositories).
BUILTIN_SETS: dict[str, tuple[str, ...]] = {
    "vendored": (
        "**/node_modules/**",
        "**/vendor/**",
        "**/vendored/**",
        "**/third_party/**",
        "**/third-party/**",
        "**/bower_components/**",
        "**/.yarn/**",
    ),
    "generated": (
        "**/generated/**",
        "**/__generated__/**",
        "**/*.generated.*",
        "**/*.min.js",
        "**/package-lock.json",
        "**/yarn.lock",
        "**/pnpm-lock.yaml",
    ),
    "build": ("**/dist/**", "**/build/**", "**/target/**", "**/.next/**", "**/.docusaurus/**", "**/coverage/**"),
}
DEFAULT_EXCLUDE = ("@vendored", "@generated", "@build")
# What [defaults] may set: what sources commonly share (not a source's name, url, site or overrides)
DEFAULT_KEYS = {"publisher", "include", "exclude", "web_url", "ref", "blob_limit", "default_exclude"}
_SET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def _globs(file: str, key: str, value) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
        raise ConfigError(file, key, f"expected a list of strings, got {value!r}")
    return value


def named_sets(file: str, data: dict) -> dict[str, tuple[str, ...]]:
    """The built-in sets and the file's ``[sets]`` (which may not redefine a built-in one)."""
    raw = data.get("sets", {})
    if not isinstance(raw, dict):
        raise ConfigError(file, "sets", f"expected a table of named glob lists, got {raw!r}")
    sets = dict(BUILTIN_SETS)
    for name, globs in raw.items():
        if not _SET_NAME.match(name):
            raise ConfigError(file, f"sets.{name}", "a set's name is letters, digits, '.', '_' or '-'")
        if name in BUILTIN_SETS:
            raise ConfigError(file, f"sets.{name}", f"{name!r} is a built-in set ({', '.join(BUILTIN_SETS)})")
        for j, g in enumerate(_globs(file, f"sets.{name}", globs)):
            if g.startswith("@"):
                raise ConfigError(file, f"sets.{name}[{j}]", "a set lists globs, not other sets")
        sets[name] = tuple(globs)
    return sets


def expand(file: str, key: str, globs: list[str], sets: dict[str, tuple[str, ...]]) -> list[str]:
    """``globs`` with each "@name" replaced by that set's globs (first occurrence kept, order kept)."""
    out: list[str] = []
    for j, g in enumerate(_globs(file, key, globs)):
        if g.startswith("@"):
            if g[1:] not in sets:
                raise ConfigError(file, f"{key}[{j}]", f"unknown set {g!r} (known: {', '.join(sorted(sets))})")
            out += [x for x in sets[g[1:]] if x not in out]
        elif g not in out:
            out.append(g)
    return out


def defaults_table(file: str, data: dict) -> dict:
    raw = data.get("defaults", {})
    if not isinstance(raw, dict):
        raise ConfigError(file, "defaults", f"expected a table, got {raw!r}")
    for k in raw:
        if k not in DEFAULT_KEYS:
            raise ConfigError(file, f"defaults.{k}", f"not a shared key (known: {', '.join(sorted(DEFAULT_KEYS))})")
    if not isinstance(raw.get("default_exclude", True), bool):
        raise ConfigError(file, "defaults.default_exclude", "expected true or false")
    web = raw.get("web_url", "")
    problem = template_error(web) if isinstance(web, str) else f"expected a URL template, got {web!r}"
    if web and problem:
        raise ConfigError(file, "defaults.web_url", problem)
    return raw


def source_tables(file: str, data: dict, raw_sources: list) -> list[dict]:
    """Each ``[[source]]`` with the defaults filled in and its sets expanded (the built-in excludes added)."""
    sets = named_sets(file, data)
    defaults = defaults_table(file, data)
    out = []
    for i, t in enumerate(raw_sources):
        if not isinstance(t, dict):
            raise ConfigError(file, f"source[{i}]", f"expected a table, got {t!r}")
        name = t.get("name")
        key = f"source[{name}]" if isinstance(name, str) and name else f"source[{i}]"
        merged = {k: v for k, v in defaults.items() if k != "default_exclude"} | dict(t)
        builtin = merged.pop("default_exclude", defaults.get("default_exclude", True))
        if not isinstance(builtin, bool):
            raise ConfigError(file, f"{key}.default_exclude", "expected true or false")
        for field in ("include", "exclude"):
            if field in merged:
                where = key if field in t else "defaults"
                merged[field] = expand(file, f"{where}.{field}", merged[field], sets)
        if builtin:
            excl = merged.get("exclude", [])
            merged["exclude"] = excl + [g for g in expand(file, "", list(DEFAULT_EXCLUDE), sets) if g not in excl]
        out.append(merged)
    return out
