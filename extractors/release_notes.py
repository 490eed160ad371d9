"""Release-notes pages → the component and version they describe.

The Midnight docs keep one folder of release notes per component (``docs/relnotes/midnight-js/
midnight-js-3-0-0.mdx``, ``relnotes/compact/toolchain-0.31.0.mdx``, ``relnotes/node/node-0-22-5.mdx``) and
write the version in one of a few places (all seen in shared/corpus/midnight-docs):

* a version line in the lead: ``* **Version**: v3.0.0`` or ``- **Version:** Compact toolchain 0.28.0,
  Compact language 0.20.0``;
* the title or first heading: ``Midnight.js v3.0.0 release notes``, ``Compact compiler 0.24.0 (Compact language
  0.16.0)``, ``# Compact toolchain 0.31.0``;
* a release heading further down: ``## Midnight.js 2.0.0 Release Notes``, ``## Midnight 0.7.0 release notes``;
* the file name: ``node-0-3-3-RC1.mdx`` (when nothing else says it).

The page's component is its release-notes folder (the docs' own id for it, e.g. ``midnight-js``; a registry
alias maps it to a canonical id); a second name-version pair (``(Compact language 0.16.0)``) targets the
component as written.  A page that holds several releases (two or more release headings of different versions)
gets chunk-scoped targets per section instead of one for the page.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from trustindex.extractors.base import Chunk, VersionTarget
from trustindex.extractors.docs_fences import fences
from trustindex.extractors.markdown_lines import LOOSE_ATX_HEADING
from trustindex.schemas.version_map import RELEASE_NOTES, relnotes_folder
from trustindex.schemas.version_parsers import parse_npm
from trustindex.schemas.versions import VersionSyntaxError

ORIGIN = RELEASE_NOTES
_VER = r"v?(\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z][0-9A-Za-z.-]*)?)"
# "Midnight.js v3.0.0", "Compact compiler 0.24.0", "Midnight 3.0.6 Ledger": a name (letters first) then a version
_PAIR = re.compile(rf"(?P<name>[A-Za-z][\w.\- ]*?)\s+{_VER}(?:\s+(?P<pre>(?:RC|rc|alpha|beta)\d*))?(?![\w.])")
_BARE = re.compile(rf"^\s*{_VER}\s*$")
_VERSION_LINE = re.compile(r"^\s*[-*]\s+\*\*Version:?\*\*:?\s*(?P<rest>.+?)\s*$")
_NOTES = re.compile(r"\brelease(?:\s+notes?)?\b", re.IGNORECASE)
_FILE_DASHED = re.compile(r"^(\d+)-(\d+)(?:-(\d+))?(?:-([A-Za-z][0-9A-Za-z]*))?$")
_FILE_DOTTED = re.compile(r"^(?:[A-Za-z]\w*-)?(\d+\.\d+(?:\.\d+)?)$")


@dataclass(frozen=True)
class _Said:
    name: str
    version: str
    where: str  # what the detail says about where it was read
    line: int  # 1-based line in the file (0: front matter)


def _pairs(text: str) -> list[tuple[str, str]]:
    text = re.sub(r"[`*_]", "", text)
    # "Midnight 0.7.0 RC1 release notes": a pre-release written apart is the version's pre-release part
    return [
        (m["name"].strip(" -,(").strip(), m[2] + (f"-{m['pre']}" if m["pre"] else "")) for m in _PAIR.finditer(text)
    ]


def _file_version(path: str, folder: str | None) -> str | None:
    """``midnight-js-3-0-0.mdx`` → 3.0.0, ``node-0-3-3-RC1.mdx`` → 0.3.3-RC1, ``toolchain-0.30.0.mdx`` → 0.30.0;
    ``compact-0-14-22-0.mdx`` (two versions run together) → None."""
    stem = posixpath.splitext(posixpath.basename(path))[0]
    if folder and stem.lower().startswith(folder.lower() + "-"):
        stem = stem[len(folder) + 1 :]
    m = _FILE_DASHED.match(stem)
    if m:
        return ".".join(g for g in m.groups()[:3] if g) + (f"-{m[4]}" if m[4] else "")
    m = _FILE_DOTTED.match(stem)
    return m[1] if m else None


def _target(component: str, version: str, chunk: int | None, detail: str) -> VersionTarget:
    try:
        intervals, status = parse_npm(version).to_json(), "parsed"
    except VersionSyntaxError:
        intervals, status = "", "unparsed"
    return VersionTarget(component, version, ORIGIN, intervals, status, chunk, detail)


def _code_lines(text: str) -> set[int]:
    out: set[int] = set()
    for f in fences(text):
        out.update(range(f.first_line, f.last_line + 1))
    return out


def release_note_targets(
    path: str, text: str, front_matter: dict | None = None, chunks: Sequence[Chunk] | None = None
) -> list[VersionTarget]:
    """The component(s) and version(s) a release-notes page describes (``text``: the whole file)."""
    under, folder = relnotes_folder(path)
    if not under:
        return []
    lines = text.splitlines()
    code = _code_lines(text)
    headings: list[tuple[int, int, str]] = []  # (line, level, text)
    version_lines: list[_Said] = []
    first_section = len(lines) + 1
    for n, line in enumerate(lines, start=1):
        if n in code:
            continue
        h = LOOSE_ATX_HEADING.match(line)
        if h:
            headings.append((n, len(h["hashes"]), h["text"]))
            if len(h["hashes"]) >= 2:
                first_section = min(first_section, n)
        v = _VERSION_LINE.match(line)
        if v and n < first_section:
            bare = _BARE.match(v["rest"].replace("`", ""))
            said = [("", bare[1])] if bare else _pairs(v["rest"])
            version_lines += [_Said(nm, ver, f"line {n}: {line.strip()[:80]}", n) for nm, ver in said]
    # release headings: a name-version pair in a heading that says "release" or is the page's top heading
    releases = []
    for n, level, htext in headings:
        pairs = _pairs(htext)
        if pairs and (_NOTES.search(htext) or level == 1):
            releases.append((n, level, pairs, htext))
    distinct = {r[2][0][1] for r in releases}
    if len(distinct) >= 2 and chunks:
        return _per_section(releases, folder, lines, chunks)
    title = str((front_matter or {}).get("title") or "")
    said: list[_Said] = list(version_lines)
    if not said and title and _pairs(title):
        said = [_Said(nm, ver, f"title {title[:80]!r}", 0) for nm, ver in _pairs(title)]
    if not said and releases:
        n, _level, pairs, htext = releases[0]
        said = [_Said(nm, ver, f"heading at line {n}: {htext[:80]!r}", n) for nm, ver in pairs]
    if not said and folder:
        version = _file_version(path, folder)
        if version:
            said = [_Said("", version, f"file name {posixpath.basename(path)!r}", 0)]
    out = []
    for i, s in enumerate(said):
        if i == 0 and folder:
            component = folder
            detail = f"release notes folder {folder!r}" + (f" ({s.name} {s.version})" if s.name else "")
        elif s.name:
            component, detail = s.name, f"release notes of {s.name} {s.version}"
        else:
            continue
        out.append(_target(component, s.version, None, f"{detail}; {s.where}"))
    return out


def _per_section(releases, folder: str | None, lines: list[str], chunks: Sequence[Chunk]) -> list[VersionTarget]:
    out = []
    for i, (n, level, pairs, htext) in enumerate(releases):
        end = len(lines)
        for m, other_level, _p, _t in releases[i + 1 :]:
            if other_level <= level:
                end = m - 1
                break
        hit = [c.ordinal for c in chunks if c.start_line <= end and c.end_line >= n]
        for j, (name, version) in enumerate(pairs):
            component = folder if j == 0 and folder else name
            where = f"release section lines {n}-{end}: {htext[:80]!r}"
            for ordinal in hit:
                out.append(_target(component, version, ordinal, where))
    return out
