"""Where a VitePress page is published: its route on the site, read from ``.vitepress/config.*`` (never executed)
(issue 43).

Vue, Vite, Vitest, Pinia and VueUse publish with VitePress.  A project's config sits in ``<root>/.vitepress/``;
its pages are the Markdown files of its ``srcDir`` (default: the root), published at the site's root:

- ``x/y.md`` at ``x/y.html``, or at ``x/y`` with ``cleanUrls: true``; ``index.md`` is its folder's page (``x/``);
- what ``srcExclude`` names (globs relative to ``srcDir``: Vue's tutorial step descriptions, rendered inside the
  tutorial) and anything under ``node_modules`` are not pages: ``unrouted``;
- the rest of the repository (its README, the ``.vitepress`` folder itself) is ``off_site``.

The source's ``site_url`` is the site's root (``base`` is not read: the operator says where the site is).  A
``rewrites`` object publishes a page at another path (``'en/:rest*': ':rest*'`` serves a site's English pages at its
root; ``'packages/:pkg/src/(.*)': ':pkg/index.md'``): each key is matched against the page's path below ``srcDir``
as VitePress's path-to-regexp does (``:name`` one segment, ``:name*`` any number, ``:name+`` one or more, ``(.*)``
anything), the first that matches wins, and its value, with the parameters put back, is the path routed.  Only
keys whose parameters fill whole segments, at most one of them taking many, are read: they match segment by segment
in linear time, where a regex of many greedy groups could backtrack for as long as a hostile config likes.  A
``rewrites`` function is code and is not read.  The config is TypeScript or JavaScript that
VitePress runs; only literals of the object passed to ``defineConfig(...)`` (or ``defineConfigWithTheme``, or the
default export) are read (extractors/js_config.py), and a value computed at build time keeps its default.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache

from trustindex.extractors.globs import first_match
from trustindex.extractors.js_config import entries, literal, object_at, string_list, string_literal, strip_comments
from trustindex.schemas.page_url import VITEPRESS

CONFIG_RE = re.compile(r"^(?P<root>(?:.*/)?)\.vitepress/config\.(?:js|ts|mjs|mts|cjs|cts)$")
_DEFINE_CALL = re.compile(r"\bdefineConfig\w*\s*(?:<[^>()]*>)?\s*\(")
_DEFAULT_EXPORT = re.compile(r"\bexport\s+default\s+")


@dataclass(frozen=True)
class VitePressSite:
    """One VitePress project: its folder (``root``), its pages' folder relative to the repository (``src``, "" or
    ending in /), whether pages get clean URLs, and its ``srcExclude`` globs (relative to ``src``)."""

    root: str
    src: str
    clean_urls: bool = False
    exclude: tuple[str, ...] = ()
    config: str = ""  # the config file's path
    rewrites: tuple[tuple[str, str], ...] = ()  # (pattern, replacement) as written, in order

    @property
    def folder(self) -> str:
        """The folder of its pages (extractors/static_sites.py ``StaticSite``)."""
        return self.src

    @property
    def label(self) -> str:
        return f"a page of the VitePress site of {self.config}"

    @property
    def generator(self) -> str:
        """How it ids a heading (schemas/page_url.py: VitePress's slugify)."""
        return VITEPRESS

    def is_page(self, rel: str) -> bool:
        return rel.endswith(".md")

    def route(self, rel: str) -> str:
        """The page's path on the site for the file at ``rel`` (relative to the pages' folder), after its rewrite."""
        stem = rewritten(rel, self.rewrites).rsplit(".", 1)[0]
        if posixpath.basename(stem) == "index":
            folder = posixpath.dirname(stem)
            return f"{folder}/" if folder else ""
        return stem if self.clean_urls else f"{stem}.html"

    def unserved(self, rel: str) -> str | None:
        """Why VitePress publishes no page for the file at ``rel`` (relative to the pages' folder), or None."""
        if "node_modules" in rel.split("/"):
            return "under node_modules (VitePress serves no page there)"
        hit = first_match(rel, list(self.exclude))
        return f"excluded by srcExclude {hit!r}" if hit else None


def read_vitepress_config(path: str, text: str) -> VitePressSite | None:
    """The site a ``.vitepress/config.*`` at ``path`` describes (VitePress's defaults where it says nothing)."""
    m = CONFIG_RE.match(path)
    if m is None:
        return None
    root = m["root"]
    src = strip_comments(text)
    call = _DEFINE_CALL.search(src) or _DEFAULT_EXPORT.search(src)  # the object passed to defineConfig, else exported
    opts = entries(object_at(src, call.end()) or "{}") if call else {}
    src_dir = string_literal(opts.get("srcDir")) if "srcDir" in opts else None
    folder = posixpath.normpath(posixpath.join(root or ".", (src_dir or ".").strip()))
    if folder.startswith("..") or folder.startswith("/"):
        return None  # pages outside the repository: nothing here is one
    clean = _truth(opts.get("cleanUrls"))
    exclude = tuple(string_list(opts.get("srcExclude")) or ())
    rewrites = _rewrites(opts.get("rewrites"))
    return VitePressSite(root, "" if folder == "." else folder + "/", clean, exclude, path, rewrites)


def _rewrites(value: str | None) -> tuple[tuple[str, str], ...]:
    """The literal ``pattern: replacement`` members of a ``rewrites`` object (none for a function or computed one)."""
    obj = object_at(value or "", 0)
    if obj is None:
        return ()
    out = []
    for key, target in entries(obj).items():
        replacement = string_literal(target)
        if key and replacement is not None:
            out.append((key, replacement))
    return tuple(out)


# A rewrite's key segment that is a parameter: `:name` (one segment), `:name*` / `:name+` (any number / one or more
# segments), or the anonymous `(.*)` (any number)
_SEGMENT_PARAM = re.compile(r":(\w+)([*+]?)|\(\.\*\)")
_TOKEN = re.compile(r":(\w+)[*+?]?|\(\.\*\)")
MAX_REWRITES = 256  # a config's rewrites read; the rest are not


@dataclass(frozen=True)
class _Param:
    name: str
    many: bool  # any number of segments (else exactly one)
    at_least_one: bool = False


@lru_cache(maxsize=MAX_REWRITES)  # every page of a site is routed through the same few keys
def _key_segments(key: str) -> tuple[str | _Param, ...] | None:
    """A rewrite key as segments: literal text, or a parameter that fills a whole segment; None for a key this does
    not read (a parameter sharing a segment with text, an optional one, or two that take many segments: matched
    only as whole segments, so a key cannot make matching backtrack, which a config of hostile keys otherwise would)."""
    out: list[str | _Param] = []
    many = 0
    for part in key.strip("/").split("/"):
        m = _SEGMENT_PARAM.fullmatch(part)
        if m is None:
            if ":" in part or "(" in part or "*" in part:
                return None
            out.append(part)
            continue
        param = _Param(m[1] or "(.*)", bool(not m[1] or m[2]), m[2] == "+")
        many += param.many
        out.append(param)
    return tuple(out) if many <= 1 else None


def _match(key: tuple[str | _Param, ...], parts: list[str]) -> dict[str, str] | None:
    """The parameters' values where ``key`` matches all of ``parts`` (a path's segments), else None."""
    split = next((i for i, k in enumerate(key) if isinstance(k, _Param) and k.many), None)
    head, tail = (key, ()) if split is None else (key[:split], key[split + 1 :])
    if len(parts) < len(head) + len(tail) or (split is None and len(parts) != len(key)):
        return None
    values: dict[str, str] = {}
    pairs = list(zip(head, parts, strict=False)) + list(zip(tail, parts[len(parts) - len(tail) :], strict=True))
    for k, part in pairs:
        if isinstance(k, _Param):
            values[k.name] = part
        elif k != part:
            return None
    if split is not None:
        rest = key[split]
        assert isinstance(rest, _Param)
        middle = parts[len(head) : len(parts) - len(tail)]
        if rest.at_least_one and not middle:
            return None
        values[rest.name] = "/".join(middle)
    return values


def rewritten(rel: str, rewrites: tuple[tuple[str, str], ...]) -> str:
    """The path a page at ``rel`` is routed as: the first rewrite whose key matches it all, its parameters put back
    into the value; ``rel`` itself when none does."""
    parts = rel.split("/")
    for key, replacement in rewrites[:MAX_REWRITES]:
        segments = _key_segments(key)
        values = _match(segments, parts) if segments is not None else None
        if values is None:
            continue
        out = _TOKEN.sub(lambda m, found=values: found.get(m[1] or "(.*)", m[0]), replacement)
        return posixpath.normpath(out).lstrip("/")
    return rel


def _truth(value: str | None) -> bool:
    if value is None:
        return False
    try:
        return literal(value.strip()) is True
    except Exception:  # computed when VitePress runs: its default stands
        return False
