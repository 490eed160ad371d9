"""The meaning of a version constraint: shared by extractors (store) and query (match).

Everything is a :class:`ConstraintSet`, a normalised union of :class:`Interval` s
over semver-ordered :class:`Version` s, or an exact docs-version *label*.  Parsers
turn Compact pragmas, npm ranges, Cargo requirements and query targets into
sets; :func:`classify` judges a stored constraint against a query target.

Bounds written ``X-0`` (e.g. ``0.24.0-0``) are the lowest possible version of
release ``X`` (semver 2.0 §11: ``0`` is the smallest prerelease identifier), so
``<0.24.0-0`` excludes 0.24.0 *and all its prereleases*.  node-semver 7 uses the
same device when it desugars ``^``/``~``/x-ranges; we use it for every bound we
synthesise.  npm's and Cargo's extra rule that a prerelease only matches a
comparator naming the same ``major.minor.patch`` is NOT modelled: here a
prerelease is just a version ordered per semver (so ``6.1.0-alpha.3`` is inside
``^6.0.0``).  Pure stdlib; the query side imports this module.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import total_ordering
from typing import Optional

from schemas.errors import TrustIndexError


class VersionSyntaxError(TrustIndexError, ValueError):
    def __init__(self, text: str, reason: str):
        self.text, self.reason = text, reason
        super().__init__(f"cannot read version constraint {text!r}: {reason}")


_INF = float("inf")


@total_ordering
@dataclass(frozen=True)
class Version:
    major: int
    minor: int = 0
    patch: int = 0
    prerelease: tuple = ()  # identifiers: int for numeric ones, str otherwise

    def _key(self):
        # semver 2.0 §11: numeric identifiers sort before alphanumeric ones, a
        # shorter identifier list first, and a release after all its prereleases.
        pre = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in self.prerelease)
        return (self.major, self.minor, self.patch, 0 if self.prerelease else 1, pre)

    def __lt__(self, other: "Version") -> bool:
        return self._key() < other._key()

    def release(self) -> tuple:
        return (self.major, self.minor, self.patch)

    def __str__(self) -> str:
        base = f"{self.major}.{self.minor}.{self.patch}"
        return base + ("-" + ".".join(str(p) for p in self.prerelease) if self.prerelease else "")


def _floor(major: int, minor: int = 0, patch: int = 0) -> Version:
    """The lowest version of a release: ``major.minor.patch-0``."""
    return Version(major, minor, patch, (0,))


MIN_VERSION = _floor(0)
_NUM = r"(?:0|[1-9]\d*)"
_PRE_ID = r"[0-9A-Za-z-]+"
_VERSION_RE = re.compile(
    rf"v?({_NUM})(?:\.({_NUM})(?:\.({_NUM})(?:-({_PRE_ID}(?:\.{_PRE_ID})*))?)?)?(?:\+[0-9A-Za-z.-]+)?$"
)


def _pre(text: Optional[str]) -> tuple:
    if not text:
        return ()
    return tuple(int(p) if p.isdigit() and (p == "0" or not p.startswith("0")) else p for p in text.split("."))


def parse_version(text: str) -> Version:
    """``1``, ``1.2``, ``1.2.3``, ``1.2.3-alpha.3`` (a leading ``v`` and ``+build`` allowed; missing parts are 0)."""
    m = _VERSION_RE.match(text.strip())
    if not m:
        raise VersionSyntaxError(text, "not a version (expected N, N.N, N.N.N or N.N.N-pre)")
    return Version(int(m[1]), int(m[2] or 0), int(m[3] or 0), _pre(m[4]))


@dataclass(frozen=True)
class Interval:
    lo: Optional[Version]
    lo_inclusive: bool
    hi: Optional[Version]
    hi_inclusive: bool

    def is_empty(self) -> bool:
        if self.hi is not None and not self.hi_inclusive and self.hi <= MIN_VERSION:
            return True  # nothing lies below 0.0.0-0
        if self.lo is None or self.hi is None:
            return False
        return self.lo > self.hi or (self.lo == self.hi and not (self.lo_inclusive and self.hi_inclusive))

    def contains(self, v: Version) -> bool:
        if self.lo is not None and (v < self.lo or (v == self.lo and not self.lo_inclusive)):
            return False
        return not (self.hi is not None and (v > self.hi or (v == self.hi and not self.hi_inclusive)))

    def __str__(self) -> str:
        if self.lo is not None and self.lo == self.hi:
            return f"={self.lo}"
        parts = []
        if self.lo is not None:
            parts.append((">=" if self.lo_inclusive else ">") + str(self.lo))
        if self.hi is not None:
            parts.append(("<=" if self.hi_inclusive else "<") + str(self.hi))
        return " ".join(parts) or "*"


def _lo_key(iv: Interval):
    return (0,) if iv.lo is None else (1, iv.lo._key(), 0 if iv.lo_inclusive else 1)


def _normalise(intervals) -> tuple:
    """Sort, drop empty pieces and merge overlapping or touching ones."""
    ivs = []
    for iv in intervals:
        if iv.lo is not None and iv.lo == MIN_VERSION and iv.lo_inclusive:
            iv = Interval(None, False, iv.hi, iv.hi_inclusive)  # one spelling of "from the start"
        if not iv.is_empty():
            ivs.append(iv)
    ivs.sort(key=_lo_key)
    out: list[Interval] = []
    for iv in ivs:
        if out:
            last = out[-1]
            touches = last.hi is None or iv.lo is None or iv.lo < last.hi or (
                iv.lo == last.hi and (iv.lo_inclusive or last.hi_inclusive))
            if touches:
                if last.hi is None or iv.hi is None:
                    hi, hi_inc = None, False
                elif iv.hi > last.hi or (iv.hi == last.hi and iv.hi_inclusive):
                    hi, hi_inc = iv.hi, iv.hi_inclusive
                else:
                    hi, hi_inc = last.hi, last.hi_inclusive
                out[-1] = Interval(last.lo, last.lo_inclusive, hi, hi_inc)
                continue
        out.append(iv)
    return tuple(out)


def _intersect(a: Interval, b: Interval) -> Interval:
    if a.lo is None or (b.lo is not None and (b.lo > a.lo or (b.lo == a.lo and not b.lo_inclusive))):
        lo, lo_inc = b.lo, b.lo_inclusive
    else:
        lo, lo_inc = a.lo, a.lo_inclusive
    if a.hi is None or (b.hi is not None and (b.hi < a.hi or (b.hi == a.hi and not b.hi_inclusive))):
        hi, hi_inc = b.hi, b.hi_inclusive
    else:
        hi, hi_inc = a.hi, a.hi_inclusive
    return Interval(lo, lo_inc, hi, hi_inc)


class _LabelAccess:
    """``ConstraintSet.label("v1")`` builds a label set; ``cs.label`` reads it (None for semver sets)."""

    def __get__(self, obj, owner):
        return owner._of_label if obj is None else obj._label


class ConstraintSet:
    """A union of intervals, or an exact docs-version label (``v1``, ``current``, ``0.0.0``)."""

    label = _LabelAccess()
    __slots__ = ("intervals", "_label")

    def __init__(self, intervals=(), *, _label: Optional[str] = None):
        self.intervals = _normalise(intervals) if _label is None else ()
        self._label = _label

    @classmethod
    def _of_label(cls, text: str) -> "ConstraintSet":
        if not text or not text.strip():
            raise VersionSyntaxError(text, "empty label")
        return cls(_label=text.strip())

    @classmethod
    def of_label(cls, text: str) -> "ConstraintSet":
        return cls._of_label(text)

    @classmethod
    def any(cls) -> "ConstraintSet":
        return cls([Interval(None, False, None, False)])

    @classmethod
    def exact(cls, v: Version) -> "ConstraintSet":
        return cls([Interval(v, True, v, True)])

    @property
    def is_label(self) -> bool:
        return self._label is not None

    @property
    def is_empty(self) -> bool:
        return self._label is None and not self.intervals

    def contains(self, v: Version) -> bool:
        return any(iv.contains(v) for iv in self.intervals)

    def union(self, other: "ConstraintSet") -> "ConstraintSet":
        return ConstraintSet(self.intervals + other.intervals)

    def intersection(self, other: "ConstraintSet") -> "ConstraintSet":
        return ConstraintSet([_intersect(a, b) for a in self.intervals for b in other.intervals])

    def complement(self) -> "ConstraintSet":
        out, lo, lo_inc = [], None, False
        for iv in self.intervals:
            if iv.lo is not None:
                out.append(Interval(lo, lo_inc, iv.lo, not iv.lo_inclusive))
            if iv.hi is None:
                return ConstraintSet(out)
            lo, lo_inc = iv.hi, not iv.hi_inclusive
        out.append(Interval(lo, lo_inc, None, False))
        return ConstraintSet(out)

    def intersects(self, other: "ConstraintSet") -> bool:
        if self.is_label or other.is_label:
            return self._label is not None and self._label == other._label
        return not self.intersection(other).is_empty

    def to_json(self) -> str:
        """Compact, deterministic: ``[["0.23.0-0",1,"0.24.0-0",0]]`` (null = unbounded), or ``{"label":"v1"}``."""
        if self.is_label:
            return json.dumps({"label": self._label}, separators=(",", ":"), ensure_ascii=False)
        rows = [[None if iv.lo is None else str(iv.lo), int(iv.lo_inclusive),
                 None if iv.hi is None else str(iv.hi), int(iv.hi_inclusive)] for iv in self.intervals]
        return json.dumps(rows, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "ConstraintSet":
        try:
            data = json.loads(text)
            if isinstance(data, dict):
                return cls._of_label(data["label"])
            ivs = []
            for lo, lo_inc, hi, hi_inc in data:
                ivs.append(Interval(None if lo is None else parse_version(lo), bool(lo_inc),
                                    None if hi is None else parse_version(hi), bool(hi_inc)))
            return cls(ivs)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise VersionSyntaxError(str(text), f"not a stored constraint set ({exc})") from None

    def __eq__(self, other) -> bool:
        return isinstance(other, ConstraintSet) and (self.intervals, self._label) == (other.intervals, other._label)

    def __hash__(self) -> int:
        return hash((self.intervals, self._label))

    def __str__(self) -> str:
        if self.is_label:
            return f"label:{self._label}"
        return " || ".join(str(iv) for iv in self.intervals) or "<empty>"

    def __repr__(self) -> str:
        return f"ConstraintSet({str(self)!r})"


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
        raise VersionSyntaxError(text, f"'{op} {tok}' against a major-only version has no interval form under "
                                       "the compiler's wildcard comparison (compiler/version.ss)")
    if op == ">":
        # "> M.m.p" starts at the next patch; "> M.m" at M.m.1 (the wildcard patch must be non-zero).
        return _ge(end) if len(parts) == 3 else _ge(_floor(major, parts[1], 1))
    if len(parts) == 3:  # "<"
        return _lt(lo)
    # "< M.m": the compiler admits M.m.b for every b != 0 (its own tests: 1.2.3 < 1.2).
    return _lt(lo).union(_range(_floor(major, parts[1], 1), end))


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
    if component == "docs":
        return ConstraintSet.label(text)
    return parse_npm(text)


# ---------------------------------------------------------------- classification
@dataclass(frozen=True)
class Match:
    status: str  # satisfies | near_miss | breaking | unknown
    level: str = ""  # "" | patch | minor | major
    distance: Optional[int] = None
    detail: str = ""


def _below(iv: Interval) -> tuple:
    """(major, minor, patch) of the highest version in ``iv``, prereleases aside; inf = "however high"."""
    hi = iv.hi
    if iv.hi_inclusive or hi.prerelease not in ((), (0,)):
        return hi.release()  # hi itself, or prereleases of hi's own release just below it
    major, minor, patch = hi.release()  # below X or X-0: the release before X
    if patch:
        return (major, minor, patch - 1)
    if minor:
        return (major, minor - 1, _INF)
    return (major - 1, _INF, _INF)


def _above(iv: Interval) -> tuple:
    """The lowest release in ``iv``."""
    lo = iv.lo
    if lo.prerelease or iv.lo_inclusive:
        return lo.release()
    return (lo.major, lo.minor, lo.patch + 1)


def _show(t: tuple) -> str:
    return ".".join("x" if n == _INF else str(n) for n in t)


def _judge(a: tuple, b: tuple) -> Match:
    pair = f"closest: {_show(a)} and {_show(b)}"
    if a[0] != b[0]:
        return Match("breaking", "major", None if _INF in (a[0], b[0]) else int(abs(b[0] - a[0])),
                     f"different major version ({pair})")
    if a[1] != b[1]:
        if a[0] == 0:
            return Match("breaking", "minor", int(abs(b[1] - a[1])) if _INF not in (a[1], b[1]) else None,
                         f"different minor of a 0.x version ({pair})")
        return Match("near_miss", "minor", int(abs(b[1] - a[1])), f"same major, different minor ({pair})")
    what = "different patch" if a[2] != b[2] else "only the prerelease differs"
    return Match("near_miss", "patch", int(abs(b[2] - a[2])), f"same major.minor, {what} ({pair})")


_SEVERITY = {"near_miss": 0, "breaking": 1}


def classify(constraint: ConstraintSet, target: ConstraintSet) -> Match:
    """How well a stored constraint fits a query target (DESIGN.md, "Version match semantics").

    * ``satisfies`` when the two sets share a version;
    * otherwise the closest pair of releases, one from each set, decides:
      different major → ``breaking``; major 0 and different minor →
      ``breaking`` (0.x semantics: a minor bump may break, as npm's and
      Cargo's caret rules assume); same major ≥ 1, different minor →
      ``near_miss`` level ``minor``, distance = |minor difference|; same
      major.minor → ``near_miss`` level ``patch``, distance = |patch
      difference| (0 when only the prerelease differs).  Among several pairs
      the mildest verdict wins (near_miss before breaking, then the smallest
      distance).
    * labels (docs versions) satisfy an equal label only; a different label is
      ``breaking`` (another docs version); label against semver, or an empty
      set on either side, is ``unknown``.
    """
    if constraint.is_label or target.is_label:
        if constraint.is_label and target.is_label:
            if constraint.label == target.label:
                return Match("satisfies", detail=f"docs version {target.label}")
            return Match("breaking", detail=f"docs version {constraint.label}, not {target.label}")
        return Match("unknown", detail="a docs-version label cannot be compared with a semver version")
    if constraint.is_empty or target.is_empty:
        return Match("unknown", detail="a constraint that admits no version")
    if constraint.intersects(target):
        return Match("satisfies")
    best = None
    for a in constraint.intervals:
        for b in target.intervals:
            low, high = (a, b) if a.hi is not None and (b.lo is not None and a.hi <= b.lo) else (b, a)
            m = _judge(_below(low), _above(high))
            if best is None or (_SEVERITY[m.status], m.distance if m.distance is not None else 1 << 30) < \
                    (_SEVERITY[best.status], best.distance if best.distance is not None else 1 << 30):
                best = m
    return best
