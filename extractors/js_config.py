"""Reading a JavaScript/TypeScript config's object literals without running it.

The config is code from a repository we do not control, so it is never executed:
comments are stripped, braces matched, and only plain string literals are read
as values (a template with ``${…}``, a call or a variable reads as None, and the
caller reports it rather than guessing).
"""

from __future__ import annotations

import re


def skip_string(src: str, i: int) -> int:
    quote, i = src[i], i + 1
    while i < len(src) and src[i] != quote:
        i += 2 if src[i] == "\\" else 1
    return i + 1


def strip_comments(src: str) -> str:
    out, i = [], 0
    while i < len(src):
        c = src[i]
        if c in "\"'`":
            j = skip_string(src, i)
            out.append(src[i:j])
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = len(src) if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            i = len(src) if j < 0 else j + 2
            out.append(" ")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def segments(obj: str) -> list[str]:
    """The top-level comma-separated members of an object literal ``{...}``."""
    parts, depth, start, i = [], 0, 1, 1
    while i < len(obj) - 1:
        c = obj[i]
        if c in "\"'`":
            i = skip_string(obj, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(obj[start:i])
            start = i + 1
        i += 1
    parts.append(obj[start : len(obj) - 1])
    return parts


_KEY = re.compile(r"\s*(?:([\"'])(.*?)\1|([A-Za-z_$][\w$]*))\s*:\s*(.*)$", re.S)


def entries(obj: str) -> dict[str, str]:
    """``key → value source`` for the plain ``key: value`` members (methods and spreads are skipped)."""
    out = {}
    for seg in segments(obj):
        m = _KEY.match(seg)
        if m:
            out[m[2] if m[1] else m[3]] = m[4].strip()
    return out


def object_at(src: str, i: int) -> str | None:
    """The balanced ``{...}`` starting at the first non-space character at or after ``i``.

    Opening parentheses are skipped: Docusaurus configs commonly wrap preset
    options in a JSDoc type cast, ``/** @type {...} */ ({ docs: {...} })``.
    """
    while i < len(src) and (src[i].isspace() or src[i] == "("):
        i += 1
    if i >= len(src) or src[i] != "{":
        return None
    depth, j = 0, i
    while j < len(src):
        c = src[j]
        if c in "\"'`":
            j = skip_string(src, j)
            continue
        depth += c == "{"
        depth -= c == "}"
        j += 1
        if depth == 0:
            return src[i:j]
    return None


def string_literal(value: str | None) -> str | None:
    m = re.fullmatch(r"([\"'`])((?:\\.|(?!\1).)*)\1\s*", value or "", re.S)
    if not m or (m[1] == "`" and "${" in m[2]):
        return None
    return re.sub(r"\\(.)", r"\1", m[2])


def string_list(value: str | None) -> list[str] | None:
    """``["a", 'b']`` → ``["a", "b"]``; None when it is not an array of plain string literals."""
    value = (value or "").strip()
    if not (value.startswith("[") and value.endswith("]")):
        return None
    inner = "{" + value[1:-1] + "}"  # segments() splits the members of any bracketed list
    items = [s.strip() for s in segments(inner) if s.strip()]
    out = [string_literal(s) for s in items]
    return None if any(v is None for v in out) else [v for v in out if v is not None]


class Unread:
    """A value that is not a plain literal (a call, a variable, a template with ``${…}``): read as nothing."""

    def __repr__(self) -> str:
        return "UNREAD"


UNREAD = Unread()
MAX_LITERAL_DEPTH = 32  # a sidebar nests a few levels; a hostile file cannot make the reader recurse without end


def literal(value: str, depth: int = 0):
    """A JS value read as data: an object literal as a dict, an array as a list, strings, numbers, booleans and
    null as themselves; anything else (a call, a variable, a spread's contents) as ``UNREAD``."""
    value = value.strip().rstrip(";").strip()
    if depth > MAX_LITERAL_DEPTH or not value:
        return UNREAD
    if value[0] in "{[":
        inner = object_at(value, 0) if value[0] == "{" else _array_at(value)
        if inner is None:
            return UNREAD
        if value[0] == "[":
            items = [s for s in segments("{" + inner[1:-1] + "}") if s.strip()]
            return [literal(s, depth + 1) for s in items]
        return {k: literal(v, depth + 1) for k, v in entries(inner).items()}
    text = string_literal(value)
    if text is not None:
        return text
    if value in ("true", "false"):
        return value == "true"
    if value == "null":
        return None
    try:
        return float(value)
    except ValueError:
        return UNREAD


def _array_at(src: str) -> str | None:
    """The balanced ``[...]`` at the start of ``src``."""
    depth, j = 0, 0
    while j < len(src):
        c = src[j]
        if c in "\"'`":
            j = skip_string(src, j)
            continue
        depth += c in "[{("
        depth -= c in "]})"
        j += 1
        if depth == 0:
            return src[:j]
    return None


def exported_value(src: str):
    """What a config module exports (``module.exports = …``, ``export default …``), read as data; an exported
    name is followed to its ``const``/``let``/``var`` definition (a TypeScript type annotation allowed).  UNREAD
    when neither is there."""
    src = strip_comments(src)
    m = re.search(r"(?:module\.exports\s*=|export\s+default)\s*", src)
    if not m:
        return UNREAD
    rest = src[m.end() :]
    name = re.match(r"([A-Za-z_$][\w$]*)\s*(?:;|$)", rest)
    if name:
        d = re.search(rf"(?:const|let|var)\s+{re.escape(name[1])}\s*(?::[^=]+)?=\s*", src)
        if not d:
            return UNREAD
        rest = src[d.end() :]
    rest = rest.lstrip()
    start = object_at(rest, 0) if rest.startswith(("{", "(")) else _array_at(rest) if rest.startswith("[") else None
    return literal(start) if start else UNREAD
