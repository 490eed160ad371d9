"""Version stamps in prose and front matter, and which target wins for a component.

In-text stamps are the phrasings the Midnight docs really use to say which
version a page was written for (grepped from shared/corpus/midnight-docs):

* ``Compact language version 0.23.0, compiler version 0.31.0.`` and
  ``Compact language version 0.23.0.`` alone on a line (generated reference
  pages: ledger-adt.mdx, compact-grammar.mdx);
* release-note headers ``- **Language version:** 0.23.0`` and
  ``* **Compact runtime version:** 0.16.0`` (relnotes/compact/toolchain-*.mdx);
* the compiler's own banner ``Compact version: 0.24.0`` inside a code block of
  captured output (the tutorial was run with that compiler).

Version mentions in running prose ("Today we are releasing version 0.19.0",
"Since Compact language version `0.22`") are history, not targets, and are
ignored: every pattern is anchored to a whole line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from trustindex.extractors.base import Chunk, VersionTarget
from trustindex.extractors.markdown_lines import fence_line
from trustindex.schemas.version_map import STAMP
from trustindex.schemas.version_parsers import parse_compact, parse_npm
from trustindex.schemas.versions import VersionSyntaxError

RUNTIME = "@midnight-ntwrk/compact-runtime"
DEFAULT_FRONT_MATTER_FIELDS = {"language_version": "compact-language", "compiler_version": "compact-compiler"}
_V = r"v?(\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z.-]+)?)"
# (pattern, [(group, component)], inside code fences?)
_STAMPS = [
    (
        re.compile(rf"^\s*Compact language version {_V}(?:,\s*compiler version {_V})?\.?\s*$"),
        [(1, "compact-language"), (2, "compact-compiler")],
        False,
    ),
    (re.compile(rf"^\s*[-*]\s+\*\*Language version:?\*\*:?\s*`?{_V}`?\s*$"), [(1, "compact-language")], False),
    (re.compile(rf"^\s*[-*]\s+\*\*Compiler version:?\*\*:?\s*`?{_V}`?\s*$"), [(1, "compact-compiler")], False),
    (re.compile(rf"^\s*[-*]\s+\*\*Compact runtime version:?\*\*:?\s*`?{_V}`?\s*$"), [(1, RUNTIME)], False),
    (re.compile(rf"^\s*(?:\$ )?Compact version: {_V}\s*$"), [(1, "compact-compiler")], True),
]
_SECTION = re.compile(r"^##+\s")


def _exact_or_partial(text: str):
    """A stamped ``0.23.0`` is that version exactly; a stamped ``0.15`` any 0.15.x."""
    return parse_npm(text)


def _chunk_of(line: int, chunks: Sequence[Chunk]) -> int | None:
    for c in chunks:
        if c.start_line <= line <= c.end_line:
            return c.ordinal
    return None


def extract_stamps(text: str, chunks: Sequence[Chunk] | None = None) -> list[VersionTarget]:
    """Version stamps in a Markdown/MDX file (``text`` = the whole file; lines are 1-based).

    Scope: a stamp in the document's lead (before its first ``##`` section) is
    document-scoped; one further down, or a compiler banner in captured
    output, belongs to the chunk whose line range holds it when ``chunks`` are
    given (document-scoped otherwise).
    """
    out: list[VersionTarget] = []
    fence: str | None = None
    in_lead = True
    for number, line in enumerate(text.splitlines(), start=1):
        opening = fence_line(line, max_indent=None)  # a fence indented in a list item counts too
        if opening:
            mark = opening["mark"]
            if fence is None:
                fence = mark
                continue
            if mark[0] == fence[0] and len(mark) >= len(fence) and not line.strip()[len(mark) :].strip():
                fence = None
                continue
        if fence is None and _SECTION.match(line):
            in_lead = False
        for pattern, groups, in_code in _STAMPS:
            if in_code != (fence is not None):
                continue
            m = pattern.match(line)
            if not m:
                continue
            chunk = None if (in_lead and not in_code) or not chunks else _chunk_of(number, chunks)
            for group, component in groups:
                if m[group]:
                    out.append(
                        VersionTarget(
                            component=component,
                            constraint=m[group],
                            origin=STAMP,
                            intervals=_exact_or_partial(m[group]).to_json(),
                            chunk_ordinal=chunk,
                            detail=f"line {number}: {line.strip()[:80]}",
                        )
                    )
            break
    return out


def _parse_front_matter_value(component: str, text: str):
    if component.startswith("compact-"):
        try:
            return parse_compact(text)  # the pragma's own syntax, e.g. ">= 0.22"
        except VersionSyntaxError:
            pass
    return parse_npm(text)


def front_matter_targets(front_matter: dict, fields: dict[str, str] | None = None) -> list[VersionTarget]:
    """Targets from front-matter keys (``fields``: key → component; default :data:`DEFAULT_FRONT_MATTER_FIELDS`).

    A value YAML read as a number is not trusted: ``0.20`` arrives as the float
    0.2, so the written text is lost; such a value is kept ``unparsed`` with a
    hint to quote it.  Compact components accept the pragma syntax first, then
    an npm range; others an npm range.
    """
    fields = DEFAULT_FRONT_MATTER_FIELDS if fields is None else fields
    out = []
    for key, component in fields.items():
        if key not in front_matter:
            continue
        value = front_matter[key]
        detail = f"front matter {key}"
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            out.append(
                VersionTarget(
                    component=component,
                    constraint=str(value),
                    origin="front_matter",
                    status="unparsed",
                    detail=f"{detail}: not a version string",
                )
            )
            continue
        if isinstance(value, float):
            out.append(
                VersionTarget(
                    component=component,
                    constraint=repr(value),
                    origin="front_matter",
                    status="unparsed",
                    detail=f"{detail}: YAML read a number (trailing zeros may be lost); quote it",
                )
            )
            continue
        text = str(value).strip()
        try:
            intervals, status = _parse_front_matter_value(component, text).to_json(), "parsed"
        except VersionSyntaxError as exc:
            intervals, status, detail = "", "unparsed", f"{detail}: {exc.reason}"
        out.append(
            VersionTarget(
                component=component,
                constraint=text,
                origin="front_matter",
                intervals=intervals,
                status=status,
                detail=detail,
            )
        )
    return out


# Lower rank wins.  Front matter is the author's declaration for the page; a
# pragma or stamp is evidence inside the file; a manifest describes the package
# around the file; a docs folder only the site section it sits in.
PRECEDENCE = {
    "front_matter": 0,
    "pragma": 1,
    "stamp": 1,
    "docs_fence": 1,
    "release_notes": 1,
    "compat_matrix": 1,
    "install_command": 1,
    "manifest_snippet": 1,
    "typedoc": 1,
    "manifest": 2,
    "docs_folder": 3,
}
# Chunk-scoped evidence of these origins describes its own chunk (a code example written for another version
# than the page, one release of several on a release-notes page, a compatibility-table row, an install command),
# so it is kept beside the page's winner rather than ranked against it.
CHUNK_OWN_ORIGINS = frozenset({"docs_fence", "release_notes", "compat_matrix", "install_command", "manifest_snippet"})


def apply_precedence(targets: Sequence[VersionTarget]) -> list[VersionTarget]:
    """Per component, keep only the targets of the winning origin: front matter > in-file (pragma, stamp) >
    manifest > docs folder.

    Parsed targets win over unparsed ones whatever their origin (an unreadable
    front-matter value must not hide a readable pragma); all targets of the
    winning origin rank are kept (two code blocks may show two pragmas), and
    unparsed ones of that same rank stay beside them.  Unknown origins rank
    last.  Chunk-scoped targets of :data:`CHUNK_OWN_ORIGINS` are always kept
    (a fence's pragma governs its chunk whatever the page says).  Order of the
    input is preserved.
    """
    own = [t.origin in CHUNK_OWN_ORIGINS and t.chunk_ordinal is not None for t in targets]
    best: dict[str, tuple[int, int]] = {}
    for t, is_own in zip(targets, own, strict=True):
        if is_own:
            continue
        key = (0 if t.status == "parsed" else 1, PRECEDENCE.get(t.origin, len(PRECEDENCE)))
        if t.component not in best or key < best[t.component]:
            best[t.component] = key
    return [
        t
        for t, is_own in zip(targets, own, strict=True)
        if is_own or PRECEDENCE.get(t.origin, len(PRECEDENCE)) == best[t.component][1]
    ]
