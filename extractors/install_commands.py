"""Install commands and package.json snippets in Markdown fences → chunk-scoped package targets.

A page that shows ``npm install @midnight-ntwrk/midnight-js-contracts@3.0.0`` (or ``npm i``, ``yarn add``,
``pnpm add``, ``bun add``) or a package.json fragment with ``"@midnight-ntwrk/compact-runtime": "0.16.0"`` was
written for those versions: the chunk holding the line targets the package at that version (an npm range as
written).  Only fenced code is read (prose that mentions an old command is history), only packages the policy's
npm allowlist names (as for manifests), and only versions that parse (``@latest`` says nothing).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase

from trustindex.extractors.base import Chunk, VersionTarget
from trustindex.extractors.docs_fences import Fence, fences
from trustindex.schemas.version_parsers import parse_npm
from trustindex.schemas.versions import VersionSyntaxError

INSTALL_ORIGIN = "install_command"
SNIPPET_ORIGIN = "manifest_snippet"
JSON_TAGS = frozenset({"json", "jsonc", "json5"})
DEPENDENCY_SECTIONS = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")
_INSTALL = re.compile(
    r"(?:^|[\s;&|($`])(?P<tool>npm\s+(?:install|i|add)|yarn\s+(?:global\s+)?add|pnpm\s+(?:add|install|i)|bun\s+add)"
    r"(?P<args>(?:\s+[^\s;&|)`]+)+)"
)
_SPEC = re.compile(r"^(?P<name>(?:@[\w.-]+/)?[\w.-]+)@(?P<version>[^\s@]+)$")
_JSON_DEP = re.compile(r'^\s*"(?P<name>(?:@[\w.-]+/)?[\w.-]+)"\s*:\s*"(?P<version>[^"]*)"\s*,?\s*$')


def _allowed(name: str, allowlist: Iterable[str]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in allowlist)


def _chunk_of(line: int, chunks: Sequence[Chunk]) -> int | None:
    for c in chunks:
        if c.start_line <= line <= c.end_line:
            return c.ordinal
    return None


def _target(origin: str, name: str, version: str, line: int, chunks, detail: str) -> VersionTarget | None:
    try:
        intervals = parse_npm(version).to_json()
    except VersionSyntaxError:
        return None
    return VersionTarget(name, version, origin, intervals, "parsed", _chunk_of(line, chunks), detail)


def _installs(f: Fence, allowlist, chunks) -> list[VersionTarget]:
    out = []
    for k, line in enumerate(f.code.splitlines()):
        number = f.first_line + 1 + k
        for m in _INSTALL.finditer(line):
            for arg in m["args"].split():
                spec = _SPEC.match(arg.strip("'\""))
                if arg.startswith("-") or not spec or not _allowed(spec["name"], allowlist):
                    continue
                detail = f"fence lines {f.first_line}-{f.last_line}: line {number}: {' '.join(line.split())[:100]}"
                t = _target(INSTALL_ORIGIN, spec["name"], spec["version"], number, chunks, detail)
                if t is not None:
                    out.append(t)
    return out


def _is_manifest_snippet(f: Fence) -> bool:
    if f.title.endswith("package.json"):
        return True
    return f.tag in JSON_TAGS and any(f'"{s}"' in f.code for s in DEPENDENCY_SECTIONS)


def _snippet(f: Fence, allowlist, chunks) -> list[VersionTarget]:
    """Dependencies of a package.json fragment, read line by line (snippets are often partial, with ``...``)."""
    out = []
    where = f"package.json snippet, fence lines {f.first_line}-{f.last_line}" + (f" ({f.title})" if f.title else "")
    for k, line in enumerate(f.code.splitlines()):
        m = _JSON_DEP.match(line)
        if not m or not _allowed(m["name"], allowlist):
            continue
        number = f.first_line + 1 + k
        version = json.loads(f'"{m["version"]}"') if "\\" in m["version"] else m["version"]
        t = _target(SNIPPET_ORIGIN, m["name"], version, number, chunks, f"{where}: line {number}: {line.strip()}")
        if t is not None:
            out.append(t)
    return out


def fenced_package_targets(
    text: str, allowlist: Iterable[str], chunks: Sequence[Chunk] | None = None
) -> list[VersionTarget]:
    """Package targets from install commands and package.json snippets in the fences of ``text`` (whole file)."""
    allowlist, chunks = list(allowlist), chunks or []
    out: list[VersionTarget] = []
    for f in fences(text):
        if _is_manifest_snippet(f):
            out.extend(_snippet(f, allowlist, chunks))
        else:
            out.extend(_installs(f, allowlist, chunks))
    return out
