"""Parsers that turn written constraints into :class:`~schemas.versions.ConstraintSet` s.

Three grammars plus the query side, each with its source in its docstring:
Compact ``pragma`` expressions (Compact language reference, "Pragmas", and the
compiler's ``version-okay?`` in LFDT-Minokawa/compact compiler/version.ss), npm
ranges (node-semver 7: ``replaceCaret``/``replaceTilde``/``replaceXRange``) and
Cargo requirements (The Cargo Book, "Specifying Dependencies").  Every bound they
synthesise is an ``X-0`` floor (see :mod:`schemas.versions`), so an upper bound
excludes a release together with all its prereleases.

The types live in :mod:`schemas.versions`; this module imports from it, never the
other way round (no cycle).  Pure stdlib.
"""

from __future__ import annotations

import re

# The floor/prerelease helpers and version-token regex pieces are shared with
# parse_version so every grammar reads a version token the same way.
from trustindex.schemas.docs_versions import COMPONENT as DOCS_COMPONENT
from trustindex.schemas.versions import (
    _NUM,
    _PRE_ID,
    MAX_CONSTRAINT_LENGTH,
    ConstraintSet,
    Interval,
    Version,
    VersionSyntaxError,
    _floor,
    _pre,
)


def _ge(v: Version) -> ConstraintSet:
    return ConstraintSet([Interval(v, True, None, False)])


def _lt(v: Version) -> ConstraintSet:
    return ConstraintSet([Interval(None, False, v, False)])


def _range(lo: Version, hi: Version) -> ConstraintSet:
    return ConstraintSet([Interval(lo, True, hi, False)])


# ---------------------------------------------------------------- Compact pragmas
_COMPACT_TOKEN = re.compile(r"\s*(\|\||&&|>=|<=|>|<|!|\(|\)|\d+(?:\.\d+){0,2})")


def _compact_atom(text: str, tok: str, op: str) -> ConstraintSet:
    parts = [int(p) for p in tok.split(".")]
    major = parts[0]
    if len(parts) == 3:
        lo, end = _floor(*parts), _floor(parts[0], parts[1], parts[2] + 1)
    elif len(parts) == 2:
        lo, end = _floor(major, parts[1]), _floor(major, parts[1] + 1)
    else:
        lo, end = _floor(major), _floor(major + 1)
    if op == "==":
        return _range(lo, end)
    if op == ">=":
        return _ge(lo)
    if op == "<=":
        return _lt(end)
    if len(parts) == 1:
        raise VersionSyntaxError(
            text,
            f"'{op} {tok}' against a major-only version has no interval form under "
            "the compiler's wildcard comparison (compiler/version.ss)",
        )
    if op == ">":
        # "> M.m.p" starts at the next patch; "> M.m" at M.m.1 (the wildcard patch must be non-zero).
        return _ge(end) if len(parts) == 3 else _ge(_floor(major, parts[1], 1))
    if len(parts) == 3:  # "<"
        return _lt(lo)
    # "< M.m": the compiler admits M.m.b for every b != 0 (its own tests: 1.2.3 < 1.2).
    return _lt(lo).union(_range(_floor(major, parts[1], 1), end))


def _check_length(text: str) -> None:
    if not isinstance(text, str):
        raise VersionSyntaxError(repr(text)[:40], "not text")
    if len(text) > MAX_CONSTRAINT_LENGTH:
        raise VersionSyntaxError(text[:40] + "…", f"longer than {MAX_CONSTRAINT_LENGTH} characters")


def parse_compact(text: str) -> ConstraintSet:
    """A Compact ``pragma language_version|compiler_version`` expression (without ``;``).

    Grammar (Compact language reference, "Pragmas"; docs/compact/reference/
    compact-reference.mdx): ``expr → expr || expr0``, ``expr0 → expr0 && term``,
    ``term → atom | op atom | ! term | ( expr )``, ``op ∈ < <= >= >``,
    ``atom → nat | nat.nat | nat.nat.nat``.  The reference allows ``!`` before an
    atom only; ``! term`` (e.g. ``!>= 0.14.0``, seen in real contracts) is read
    as the complement.  There is no ``==``: a bare atom means equality.

    Meaning, from the compiler itself (LFDT-Minokawa/compact compiler/version.ss,
    ``version-okay?``; the lexer makes ``0.23`` the version 0.23.* and the parser
    makes ``1`` the version 1.*.*): a missing part is a wildcard, so a bare
    ``0.23`` means any 0.23.x, ``1`` any 1.x.y, ``>= 0.22`` is >= 0.22.0 and
    ``<= 0.18`` is < 0.19.0.  Prerelease tags are never compared (a release
    candidate satisfies what its release does), hence every bound is ``X-0``.
    The compiler's wildcard rules give two odd cases, kept faithfully:
    ``> 0.14`` admits 0.14.1 and up (not 0.14.0), and ``< 0.14`` admits
    everything below 0.14.0 *plus* 0.14.1..0.14.x.  ``>``/``<`` against a
    major-only atom (``> 1``) would be an infinite union and raises.
    """
    _check_length(text)
    tokens, pos, src = [], 0, text.strip()
    while pos < len(src):
        m = _COMPACT_TOKEN.match(src, pos)
        if not m:
            raise VersionSyntaxError(text, f"unexpected {src[pos:].strip()[:10]!r} at offset {pos}")
        tokens.append(m[1])
        pos = m.end()
        while pos < len(src) and src[pos].isspace():
            pos += 1
    if not tokens:
        raise VersionSyntaxError(text, "empty version expression")
    at = [0]

    def peek():
        return tokens[at[0]] if at[0] < len(tokens) else None

    def take():
        at[0] += 1
        return tokens[at[0] - 1]

    def expr() -> ConstraintSet:
        acc = expr0()
        while peek() == "||":
            take()
            acc = acc.union(expr0())
        return acc

    def expr0() -> ConstraintSet:
        acc = term()
        while peek() == "&&":
            take()
            acc = acc.intersection(term())
        return acc

    def term() -> ConstraintSet:
        tok = peek()
        if tok is None:
            raise VersionSyntaxError(text, "expression ends where a version was expected")
        take()
        if tok == "!":
            return term().complement()
        if tok == "(":
            inner = expr()
            if peek() != ")":
                raise VersionSyntaxError(text, "missing ')'")
            take()
            return inner
        if tok in (">=", "<=", ">", "<"):
            nxt = peek()
            if nxt is None or not nxt[0].isdigit():
                raise VersionSyntaxError(text, f"'{tok}' must be followed by a version")
            return _compact_atom(text, take(), tok)
        if tok[0].isdigit():
            return _compact_atom(text, tok, "==")
        raise VersionSyntaxError(text, f"unexpected {tok!r}")

    result = expr()
    if peek() is not None:
        raise VersionSyntaxError(text, f"unexpected {peek()!r} after a complete expression")
    return result


# ---------------------------------------------------------------- npm and Cargo
_PARTIAL = re.compile(
    rf"v?({_NUM}|[xX*])(?:\.({_NUM}|[xX*])(?:\.({_NUM}|[xX*])(?:-({_PRE_ID}(?:\.{_PRE_ID})*))?)?)?(?:\+[0-9A-Za-z.-]+)?$"
)
_WILD = (None, "x", "X", "*")


def _partial(text: str, tok: str) -> tuple:
    """``(major, minor|None, patch|None, prerelease)``; a missing or x part is None."""
    m = _PARTIAL.match(tok)
    if not m:
        raise VersionSyntaxError(text, f"{tok!r} is not a version")
    nums = [None if g in _WILD else int(g) for g in (m[1], m[2], m[3])]
    if nums[0] is None:
        raise VersionSyntaxError(text, "a wildcard ('*', 'x') carries no version; resolve it before parsing")
    if nums[1] is None:
        nums[2] = None
    return nums[0], nums[1], nums[2], _pre(m[4])


def _span(p: tuple) -> tuple:
    """The lowest version of a partial and the X-0 floor just past it (None past a full version)."""
    major, minor, patch, pre = p
    if minor is None:
        return Version(major), _floor(major + 1)
    if patch is None:
        return Version(major, minor), _floor(major, minor + 1)
    return Version(major, minor, patch, pre), None


def _comparator(text: str, op: str, p: tuple) -> ConstraintSet:
    """One npm/Cargo comparator (node-semver ``replaceCaret``/``replaceTilde``/``replaceXRange``)."""
    major, minor, patch, _ = p
    lo, end = _span(p)
    if op == "^":
        if major > 0 or minor is None:
            hi = _floor(major + 1)
        elif minor > 0 or patch is None:
            hi = _floor(0, minor + 1)
        else:
            hi = _floor(0, 0, patch + 1)
        return _range(lo, hi)
    if op == "~":
        return _range(lo, _floor(major + 1) if minor is None else _floor(major, minor + 1))
    if op in ("=", ""):
        return ConstraintSet.exact(lo) if end is None else _range(lo, end)
    if op == ">=":
        return _ge(lo)
    if op == "<":
        return _lt(lo) if end is None else _lt(_floor(*lo.release()))
    if op == "<=":
        return ConstraintSet([Interval(None, False, lo, True)]) if end is None else _lt(end)
    if op == ">":
        return ConstraintSet([Interval(lo, False, None, False)]) if end is None else _ge(Version(*end.release()))
    raise VersionSyntaxError(text, f"unknown operator {op!r}")


_NPM_COMP = re.compile(r"(~>|\^|~|>=|<=|>|<|=)?\s*([^\s]+)")
_NOT_A_RANGE = re.compile(r"^(?:workspace:|npm:|file:|link:|git|github:|https?:|[a-z][\w.-]*$)", re.I)


def parse_npm(text: str) -> ConstraintSet:
    """An npm semver range (node-semver 7 grammar: ``||``, hyphen ranges, ``^ ~ x``, comparators).

    ``^0.8.0`` is >=0.8.0 <0.9.0-0, ``^0.0.3`` >=0.0.3 <0.0.4-0, ``~1.2`` >=1.2.0
    <1.3.0-0, ``1.2.x``/``1.2`` >=1.2.0 <1.3.0-0, ``1.2.3 - 2.3`` >=1.2.3 <2.4.0-0,
    ``>1.2`` >=1.3.0, ``<=1.2`` <1.3.0-0.  ``*``, ``latest`` and other dist-tags,
    ``workspace:``, ``npm:``, URLs and paths are not ranges: callers resolve
    them first, so they raise here.
    """
    _check_length(text)
    src = text.strip()
    if not src or (_NOT_A_RANGE.match(src) and not _PARTIAL.match(src)):
        raise VersionSyntaxError(text, "not a semver range (tag, alias, URL or empty); resolve it first")
    out = ConstraintSet()
    for alt in src.split("||"):
        alt = alt.strip()
        if not alt:
            raise VersionSyntaxError(text, "empty alternative between '||'")
        hyphen = re.fullmatch(r"(\S+)\s+-\s+(\S+)", alt)
        if hyphen:
            lo_p, hi_p = _partial(text, hyphen[1]), _partial(text, hyphen[2])
            hi_v, hi_end = _span(hi_p)
            upper = ConstraintSet([Interval(None, False, hi_v, True)]) if hi_end is None else _lt(hi_end)
            out = out.union(_ge(_span(lo_p)[0]).intersection(upper))
            continue
        acc, pos = ConstraintSet.any(), 0
        while pos < len(alt):
            m = _NPM_COMP.match(alt, pos)
            if m is None:  # not reached: pos is at a non-space character, which the pattern always takes
                raise VersionSyntaxError(text, f"cannot read {alt[pos:]!r}")
            op = {"~>": "~"}.get(m[1] or "", m[1] or "")
            acc = acc.intersection(_comparator(text, op, _partial(text, m[2])))
            pos = m.end()
            while pos < len(alt) and alt[pos].isspace():
                pos += 1
        out = out.union(acc)
    return out


_CARGO_COMP = re.compile(r"\s*(\^|~|>=|<=|>|<|=)?\s*(\*|[0-9][0-9A-Za-z.*+-]*)\s*$")


def parse_cargo(text: str) -> ConstraintSet:
    """A Cargo version requirement (The Cargo Book, "Specifying Dependencies").

    A bare version is a caret requirement (``0.5`` = >=0.5.0 <0.6.0-0, ``1.2.3``
    = >=1.2.3 <2.0.0-0, ``0.0.3`` = >=0.0.3 <0.0.4-0); ``=``, ``~``, ``*``,
    ``1.*``, ``1.2.*`` and comparators; commas join requirements (all must hold).
    """
    _check_length(text)
    src = text.strip()
    if not src:
        raise VersionSyntaxError(text, "empty requirement")
    acc = ConstraintSet.any()
    for piece in src.split(","):
        m = _CARGO_COMP.match(piece)
        if not m:
            raise VersionSyntaxError(text, f"{piece.strip()!r} is not a Cargo requirement")
        if m[2] == "*":
            if m[1]:
                raise VersionSyntaxError(text, f"'{m[1]}*' is not allowed")
            continue
        # A bare version is a caret requirement, a bare wildcard one (1.2.*) an x-range.
        op = m[1] or ("=" if "*" in m[2] else "^")
        acc = acc.intersection(_comparator(text, op, _partial(text, m[2])))
    return acc


def parse_target(text: str, component: str = "") -> ConstraintSet:
    """A query target: an exact version (``0.23.0``), a partial one (``0.23`` = any 0.23.x) or an npm range.

    For the ``docs`` component every target is a label (``v1``, ``current``, ``0.0.0``).
    """
    if component == DOCS_COMPONENT:
        return ConstraintSet.label(text)
    return parse_npm(text)
