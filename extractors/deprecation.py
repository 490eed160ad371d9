"""Deprecation markers in Markdown/MDX, and operator path rules.

Markers and their scope (the forms found in the Midnight docs and their tooling):

- front matter ``deprecated: true`` or ``deprecated: "<reason>"``: the document
  (marker ``front_matter``);
- a Docusaurus admonition titled Deprecated or Legacy (``:::warning Deprecated``,
  ``:::caution Legacy``, ``:::danger[Deprecated]``; Docusaurus admonition syntax,
  https://docusaurus.io/docs/markdown-features/admonitions), or a blockquote that
  opens with ``**Deprecated**`` / ``**Legacy**`` (also after a GitHub ``[!WARNING]``
  alert line): the chunks whose lines overlap it (marker ``admonition``);
- a heading such as ``## Deprecated``, ``#### Deprecated`` (TypeDoc's rendering of a
  ``@deprecated`` tag), ``### Deprecated API`` or ``#### `x` is deprecated``: the
  chunks overlapping its section (marker ``section``) — unless the section says
  only that there is nothing deprecated ("None.", "N/A", "No deprecations in this
  release.": 9 of the 11 ``## Deprecations`` sections in the real corpus);
- ``path_deprecations``: operator globs such as ``**/dapp-examples-deprecated/**``
  (marker ``path_rule``, document scope).

Reasons are the marker's first sentence, at most ``MAX_REASON`` characters.
Nothing here raises on odd input: the text comes from repositories other people
control, and a marker that cannot be read is simply not reported.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable

from trustindex.extractors.base import Chunk, Deprecation
from trustindex.extractors.globs import first_match
from trustindex.extractors.markdown_lines import HTML_TAG, atx_heading, outside_fences
from trustindex.schemas.links import INLINE_LINK

MAX_REASON = 200
_REASON_ROWS = 20  # a reason is read from the first lines of its marker only

_ADMON_OPEN_RE = re.compile(r"^\s{0,3}(:{3,})\s*([A-Za-z][\w-]*)?\s*(?:\[([^\]]*)\]|(.*))$")
_ADMON_CLOSE_RE = re.compile(r"^\s{0,3}:{3,}\s*$")
_QUOTE_RE = re.compile(r"^\s{0,3}>\s?(.*)$")
_ALERT_RE = re.compile(r"^\[!\w+\]\s*$")
_MARK_WORD = r"(?:deprecated|legacy)"
_TITLE_RE = re.compile(rf"^\W*{_MARK_WORD}\b", re.I)
# > **Deprecated**, > **Deprecated:** ..., > _Legacy_, > Deprecated: ...
_QUOTE_MARK_RE = re.compile(
    rf"^(?:(?:\*\*|__)\s*{_MARK_WORD}\s*:?\s*(?:\*\*|__)|[*_]{_MARK_WORD}:?[*_]|{_MARK_WORD}\s*:)\s*:?\s*",
    re.I,
)
# Not "deprecated.reason" (a GraphQL argument heading in the real corpus) and not
# "Legacy" alone ("Key Improvements Over the Legacy Indexer", "AddressLegacy").
_HEADING_RE = re.compile(
    r"^(?:deprecated(?:[\s:(].*)?"  # Deprecated, Deprecated API, Deprecated since 2.0
    r"|deprecations?(?:\s+(?:notices?|warnings?))?)$"
    r"|\b(?:is|are|now|been)\s+deprecated\b|\(deprecated\)",
    re.I,
)
# "Nothing is deprecated" wording (all of the real corpus's, plus the usual others).
_NOTHING_RE = re.compile(
    r"^(?:|none|n/?a|nil|nothing|not applicable|tbd|-+|—|–|none (?:in|for|at) this (?:release|version|time)"
    r"|(?:there (?:are|were) )?no (?:new )?deprecat\w*(?: (?:are|were) (?:introduced|made|added))?"
    r"(?: (?:in|for) this (?:release|version))?"
    r"|this (?:release|version) does not (?:introduce|include|contain|have) any deprecat\w*)$",
    re.I,
)
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\[*_(\"'])")


def markdown_deprecations(front_matter: dict, text: str, chunks: Iterable[Chunk]) -> list[Deprecation]:
    """Deprecations in one Markdown/MDX file.

    ``text`` is the whole decoded file (front matter included) so that its line
    numbers are those of ``chunks`` (``extract_markdown``'s output).
    """
    chunks = list(chunks)
    out: list[Deprecation] = []
    doc = _front_matter_reason(front_matter or {})
    if doc is not None:
        out.append(Deprecation("document", doc, "front_matter"))
    lines = text.split("\n") if text else []
    starts = [c.start_line for c in chunks]  # chunks are in line order and disjoint
    seen: set[tuple[int, str]] = set()
    marked = {"admonition": 0, "section": 0}
    for start, end, marker, reason_of in sorted(_scan(lines), key=lambda f: f[:3]):
        if marked[marker] == len(chunks):
            continue  # every chunk already carries this marker
        k = max(0, bisect.bisect_right(starts, start) - 1)
        hits = []
        while k < len(chunks) and chunks[k].start_line <= end:
            c = chunks[k]
            if c.end_line >= start and (c.ordinal, marker) not in seen:
                hits.append(c.ordinal)
            k += 1
        # The reason (and whether a section counts at all) is read only when the
        # marker would mark a new chunk: 20,000 stacked markers cost one read each.
        reason = reason_of() if hits else None
        for ordinal in hits if reason is not None else []:
            seen.add((ordinal, marker))
            marked[marker] += 1
            out.append(Deprecation("chunk", reason, marker, chunk_ordinal=ordinal))
    return out


def path_deprecations(path: str, patterns: list[str]) -> list[Deprecation]:
    """Document-scope deprecation when ``path`` matches an operator glob (``**`` spans folders)."""
    norm = path.replace("\\", "/").lstrip("/")
    while norm.startswith("./"):
        norm = norm[2:]
    hit = first_match(norm, [p for p in patterns or [] if isinstance(p, str) and p])
    if hit is None:
        return []
    return [Deprecation("document", _short(f"path matches deprecation rule {hit}"), "path_rule")]


def _front_matter_reason(fm: dict) -> str | None:
    value = fm.get("deprecated")
    if value is True:
        return "front matter: deprecated: true"
    if isinstance(value, str):
        v = value.strip()
        if not v or v.lower() in ("false", "no", "off", "0"):
            return None
        if v.lower() in ("true", "yes", "on"):
            return "front matter: deprecated: true"
        return _short(v)
    return None


def _scan(lines: list[str]) -> list[tuple]:
    """(start_line, end_line, marker, reason thunk), 1-based, outside code fences; one
    pass.  The thunk returns the reason, or None when the candidate is not a marker."""
    found: list[tuple] = []
    headings: list[tuple[int, int, str]] = []  # (row, level, text)
    admonitions: list[tuple[int, str]] = []  # open (row, reason or "" when not a marker)
    n = len(lines)
    for r, ln in outside_fences(lines):
        h = atx_heading(ln)
        if h:
            headings.append((r, *h))
        if _ADMON_CLOSE_RE.match(ln):
            if admonitions:
                row, reason = admonitions.pop()
                if reason:
                    found.append(_admonition(lines, row, r, reason))
        elif ln.lstrip().startswith(":::"):
            adm = _ADMON_OPEN_RE.match(ln)
            kind = ((adm.group(2) if adm else "") or "").lower()
            title = ((adm.group(3) if adm and adm.group(3) is not None else adm and adm.group(4)) or "").strip()
            marked = bool(_TITLE_RE.match(title)) or kind in ("deprecated", "legacy")
            admonitions.append((r, (title or kind) if marked else ""))
        if _QUOTE_RE.match(ln) and (r == 0 or not _QUOTE_RE.match(lines[r - 1].rstrip("\r"))):
            end = r
            while end + 1 < n and _QUOTE_RE.match(lines[end + 1].rstrip("\r")):
                end += 1
            body = [_QUOTE_RE.match(x.rstrip("\r")).group(1) for x in lines[r : min(end + 1, r + _REASON_ROWS)]]
            body = [b for b in body if b.strip() and not _ALERT_RE.match(b.strip())]
            if body and _QUOTE_MARK_RE.match(body[0].strip()):
                # The marker word stays in the reason: "Deprecated: use X instead."
                found.append(
                    (r + 1, end + 1, "admonition", lambda body=body: _short(_first_sentence(_plain(body, True))))
                )
    for row, reason in admonitions:  # never closed: runs to the end of the file
        if reason:
            found.append(_admonition(lines, row, n, reason))
    found.extend(_sections(lines, headings))
    return found


def _admonition(lines: list[str], row: int, close: int, title: str) -> tuple:
    def reason() -> str:
        body = _first_sentence(_plain(lines[row + 1 : min(close, row + 1 + _REASON_ROWS)], True))
        return _short(body or title)

    return row + 1, min(close + 1, len(lines)), "admonition", reason


def _sections(lines: list[str], headings: list[tuple[int, int, str]]):
    # A section ends before the next heading of its level or above (one stack pass).
    ends = [len(lines) - 1] * len(headings)
    open_: list[int] = []
    for i, (row, level, _) in enumerate(headings):
        while open_ and headings[open_[-1]][1] >= level:
            ends[open_.pop()] = row - 1
        open_.append(i)
    for i, (row, _level, title) in enumerate(headings):
        clean = _plain([title])
        if _HEADING_RE.search(clean):
            yield row + 1, ends[i] + 1, "section", _section_reason(lines, row, ends[i], clean)


def _section_reason(lines: list[str], row: int, end: int, heading: str):
    def reason() -> str | None:
        content = _plain(lines[row + 1 : min(end + 1, row + 1 + _REASON_ROWS)])
        short = end - row <= _REASON_ROWS  # a long section is never "None."
        if short and _NOTHING_RE.match(" ".join(content.split()).rstrip(".").strip()):
            return None
        if heading.lower().startswith("deprecat"):
            return _short(_first_sentence(content) or heading)
        return _short(heading)  # the heading names the deprecated thing: it is the reason

    return reason


_BREAK_RE = re.compile(r"[-*_=\s]{3,}|\s{0,3}:{3,}.*")  # thematic break, admonition fence
_BLOCK_START_RE = re.compile(r"(?:#{1,6}\s|[-*+]\s|\d+[.)]\s)")
_MARKUP = [
    (re.compile(r"^#{1,6}\s+"), ""),
    (re.compile(r"^(?:[-*+]|\d+[.)])\s+"), ""),  # list markers
    (INLINE_LINK, r"\1"),  # links keep their words
    (HTML_TAG, ""),  # HTML/JSX tags
    (re.compile(r"(\*\*|__)(.+?)\1"), r"\2"),  # strong emphasis
    (re.compile(r"(?<!\w)([*_])(\S.*?)\1(?!\w)"), r"\2"),  # emphasis
]


def _plain(lines: list[str], first_only: bool = False) -> str:
    """Text of Markdown lines without markup that carries no words; paragraphs
    (split at blank lines, headings, list items, ``:::`` lines) are joined by a
    blank line.  ``first_only`` stops after the first paragraph (cheap on huge input)."""
    paras: list[list[str]] = [[]]
    for ln in lines:
        s = ln.strip()
        if not s or _BREAK_RE.fullmatch(s) or _BLOCK_START_RE.match(s):
            if first_only and paras[-1]:
                break
            paras.append([])
            if not s or _BREAK_RE.fullmatch(s):
                continue
        for rx, repl in _MARKUP:
            s = rx.sub(repl, s)
        if s.strip():
            paras[-1].append(s.strip())
    return "\n\n".join(" ".join(p) for p in paras if p)


def _first_sentence(text: str) -> str:
    """First sentence of the first paragraph of ``_plain`` output."""
    text = text.strip().split("\n\n", 1)[0]
    if not text:
        return ""
    return _SENTENCE_END_RE.split(text, maxsplit=1)[0].strip()


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1].rstrip() + "…"
