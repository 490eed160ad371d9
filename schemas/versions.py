"""The meaning of a version constraint: shared by extractors (store) and query (match).

Everything is a :class:`ConstraintSet`, a normalised union of :class:`Interval` s
over semver-ordered :class:`Version` s, or an exact docs-version *label*.  The
parsers in :mod:`schemas.version_parsers` (which imports this module, never the
reverse) turn Compact pragmas, npm ranges, Cargo requirements and query targets into sets;
:func:`classify` judges a stored constraint against a query target.

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

from trustindex.schemas.errors import TrustIndexError


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

    def __lt__(self, other: Version) -> bool:
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


def _pre(text: str | None) -> tuple:
    if not text:
        return ()
    return tuple(int(p) if p.isdigit() and (p == "0" or not p.startswith("0")) else p for p in text.split("."))


# node-semver's MAX_LENGTH: longer text is refused before parsing, which also bounds the parsers' recursion
# (a '!' or '(' per frame) and keeps numbers far below Python's int() digit limit.
MAX_CONSTRAINT_LENGTH = 256


def parse_version(text: str) -> Version:
    """``1``, ``1.2``, ``1.2.3``, ``1.2.3-alpha.3`` (a leading ``v`` and ``+build`` allowed; missing parts are 0)."""
    if len(text) > MAX_CONSTRAINT_LENGTH:
        raise VersionSyntaxError(text[:40] + "…", f"longer than {MAX_CONSTRAINT_LENGTH} characters")
    m = _VERSION_RE.match(text.strip())
    if not m:
        raise VersionSyntaxError(text, "not a version (expected N, N.N, N.N.N or N.N.N-pre)")
    return Version(int(m[1]), int(m[2] or 0), int(m[3] or 0), _pre(m[4]))


@dataclass(frozen=True)
class Interval:
    lo: Version | None
    lo_inclusive: bool
    hi: Version | None
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
        if (iv.lo is None and iv.lo_inclusive) or (iv.hi is None and iv.hi_inclusive):
            # an unbounded side has no inclusive flag: one set, one spelling
            iv = Interval(iv.lo, iv.lo_inclusive and iv.lo is not None, iv.hi, iv.hi_inclusive and iv.hi is not None)
        if not iv.is_empty():
            ivs.append(iv)
    ivs.sort(key=_lo_key)
    out: list[Interval] = []
    for iv in ivs:
        if out:
            last = out[-1]
            touches = (
                last.hi is None
                or iv.lo is None
                or iv.lo < last.hi
                or (iv.lo == last.hi and (iv.lo_inclusive or last.hi_inclusive))
            )
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

    def __init__(self, intervals=(), *, _label: str | None = None):
        self.intervals = _normalise(intervals) if _label is None else ()
        self._label = _label

    @classmethod
    def _of_label(cls, text: str) -> ConstraintSet:
        if not text or not text.strip():
            raise VersionSyntaxError(text, "empty label")
        return cls(_label=text.strip())

    @classmethod
    def of_label(cls, text: str) -> ConstraintSet:
        return cls._of_label(text)

    @classmethod
    def any(cls) -> ConstraintSet:
        return cls([Interval(None, False, None, False)])

    @classmethod
    def exact(cls, v: Version) -> ConstraintSet:
        return cls([Interval(v, True, v, True)])

    @property
    def is_label(self) -> bool:
        return self._label is not None

    @property
    def is_empty(self) -> bool:
        return self._label is None and not self.intervals

    def contains(self, v: Version) -> bool:
        return any(iv.contains(v) for iv in self.intervals)

    def union(self, other: ConstraintSet) -> ConstraintSet:
        return ConstraintSet(self.intervals + other.intervals)

    def intersection(self, other: ConstraintSet) -> ConstraintSet:
        return ConstraintSet([_intersect(a, b) for a in self.intervals for b in other.intervals])

    def complement(self) -> ConstraintSet:
        out, lo, lo_inc = [], None, False
        for iv in self.intervals:
            if iv.lo is not None:
                out.append(Interval(lo, lo_inc, iv.lo, not iv.lo_inclusive))
            if iv.hi is None:
                return ConstraintSet(out)
            lo, lo_inc = iv.hi, not iv.hi_inclusive
        out.append(Interval(lo, lo_inc, None, False))
        return ConstraintSet(out)

    def intersects(self, other: ConstraintSet) -> bool:
        if self.is_label or other.is_label:
            return self._label is not None and self._label == other._label
        return not self.intersection(other).is_empty

    def to_json(self) -> str:
        """Compact, deterministic: ``[["0.23.0-0",1,"0.24.0-0",0]]`` (null = unbounded), or ``{"label":"v1"}``."""
        if self.is_label:
            return json.dumps({"label": self._label}, separators=(",", ":"), ensure_ascii=False)
        rows = [
            [
                None if iv.lo is None else str(iv.lo),
                int(iv.lo_inclusive),
                None if iv.hi is None else str(iv.hi),
                int(iv.hi_inclusive),
            ]
            for iv in self.intervals
        ]
        return json.dumps(rows, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> ConstraintSet:
        try:
            data = json.loads(text)
            if isinstance(data, dict):
                return cls._of_label(data["label"])
            ivs = []
            for lo, lo_inc, hi, hi_inc in data:
                ivs.append(
                    Interval(
                        None if lo is None else parse_version(lo),
                        bool(lo_inc),
                        None if hi is None else parse_version(hi),
                        bool(hi_inc),
                    )
                )
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


# ---------------------------------------------------------------- classification
@dataclass(frozen=True)
class Match:
    status: str  # satisfies | near_miss | breaking | unknown
    level: str = ""  # "" | patch | minor | major
    distance: int | None = None
    detail: str = ""


def _below(iv: Interval) -> tuple:
    """(major, minor, patch) of the highest version in ``iv``, prereleases aside; inf = "however high"."""
    hi = iv.hi
    if hi is None:  # classify asks only for the lower of two disjoint intervals, which has an upper bound
        raise ValueError(f"{iv} has no highest version")
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
    if lo is None:  # classify asks only for the higher of two disjoint intervals, which has a lower bound
        raise ValueError(f"{iv} has no lowest version")
    if lo.prerelease or iv.lo_inclusive:
        return lo.release()
    return (lo.major, lo.minor, lo.patch + 1)


def _show(t: tuple) -> str:
    return ".".join("x" if n == _INF else str(n) for n in t)


def _judge(a: tuple, b: tuple) -> Match:
    pair = f"closest: {_show(a)} and {_show(b)}"
    if a[0] != b[0]:
        return Match(
            "breaking",
            "major",
            None if _INF in (a[0], b[0]) else int(abs(b[0] - a[0])),
            f"different major version ({pair})",
        )
    if a[1] != b[1]:
        if a[0] == 0:
            return Match(
                "breaking",
                "minor",
                int(abs(b[1] - a[1])) if _INF not in (a[1], b[1]) else None,
                f"different minor of a 0.x version ({pair})",
            )
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
    verdicts = []
    for a in constraint.intervals:
        for b in target.intervals:
            low, high = (a, b) if a.hi is not None and (b.lo is not None and a.hi <= b.lo) else (b, a)
            verdicts.append(_judge(_below(low), _above(high)))
    # the mildest verdict, then the smallest distance; the first of equals, in interval order
    return min(verdicts, key=lambda m: (_SEVERITY[m.status], m.distance if m.distance is not None else 1 << 30))
