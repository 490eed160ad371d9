"""Property-based tests of schemas.versions (issue item 7): parsers, set algebra, classify, npm parity.

Oracles: set laws checked pointwise on a grid of versions (every prerelease shape the
module orders specially: ``-0``, numeric, alphanumeric); full-version comparators
evaluated directly with ``Version`` ordering; Compact expressions evaluated from their
tree (``&&`` binds tighter than ``||``, ``!`` applies to one term: Compact language
reference, "Pragmas"); npm ranges against ``semantic_version.NpmSpec`` (a separate
implementation of node-semver's grammar) on release versions, because npm's rule that a
prerelease only matches a comparator of its own release is deliberately not modelled
(schemas/versions.py docstring).
"""

from __future__ import annotations

import itertools
import os

import pytest
import semantic_version
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trustindex.schemas.version_parsers import parse_cargo, parse_compact, parse_npm, parse_target
from trustindex.schemas.versions import (
    ConstraintSet,
    Interval,
    Version,
    VersionSyntaxError,
    classify,
    parse_version,
)

# Bounded so the file runs in well under 20 s of CPU; HYPOTHESIS_EXAMPLES=2000 searches harder.
SETTINGS = settings(
    max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", 100)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
HEAVY = settings(SETTINGS, max_examples=max(1, SETTINGS.max_examples // 2))
PRE = [(), (0,), (1,), ("alpha",), ("alpha", 1), ("rc", 2)]
NUMS = range(0, 4)
GRID = [Version(a, b, c, p) for a, b, c in itertools.product(range(0, 5), repeat=3) for p in PRE]
RELEASES = [v for v in GRID if not v.prerelease]

versions = st.builds(Version, st.sampled_from(NUMS), st.sampled_from(NUMS), st.sampled_from(NUMS), st.sampled_from(PRE))


@st.composite
def intervals(draw):
    lo = draw(st.none() | versions)
    hi = draw(st.none() | versions)
    return Interval(lo, draw(st.booleans()), hi, draw(st.booleans()))


sets = st.lists(intervals(), max_size=4).map(ConstraintSet)


def _pre_text(pre: tuple) -> str:
    return "-" + ".".join(map(str, pre)) if pre else ""


@st.composite
def partials(draw, prerelease=True, wild=True):
    n = draw(st.sampled_from(NUMS))
    parts = [str(n)] + [str(draw(st.sampled_from(NUMS))) for _ in range(draw(st.integers(0, 2)))]
    if wild and len(parts) < 3 and draw(st.booleans()):
        parts.append(draw(st.sampled_from(["x", "X", "*"])))
    text = ".".join(parts)
    if prerelease and len(parts) == 3 and parts[2].isdigit() and draw(st.booleans()):
        text += _pre_text(draw(st.sampled_from(PRE[1:])))
    return text


@st.composite
def npm_ranges(draw, prerelease=True, hyphens=True):
    alts = []
    for _ in range(draw(st.integers(1, 3))):
        if hyphens and draw(st.integers(0, 4)) == 0:
            alts.append(f"{draw(partials(prerelease))} - {draw(partials(prerelease))}")
            continue
        comps = [
            draw(st.sampled_from(["", "=", "^", "~", ">=", ">", "<=", "<"])) + draw(partials(prerelease))
            for _ in range(draw(st.integers(1, 3)))
        ]
        alts.append(" ".join(comps))
    return " || ".join(alts)


@st.composite
def cargo_reqs(draw):
    comps = []
    for _ in range(draw(st.integers(1, 3))):
        p = draw(partials(wild=False))
        if draw(st.booleans()) and p.count(".") < 2:
            p += ".*"
        comps.append(draw(st.sampled_from(["", "^", "~", "=", ">=", ">", "<=", "<"])) + p)
    return ", ".join(comps)


# Compact expression trees: ("atom", op, text) | ("not", t) | ("and", a, b) | ("or", a, b) | ("paren", e)
def _compact_trees(full_only: bool):
    atom_text = (
        st.tuples(*[st.sampled_from(NUMS)] * 3).map(lambda t: ".".join(map(str, t)))
        if full_only
        else partials(prerelease=False, wild=False)
    )
    atom = st.tuples(st.just("atom"), st.sampled_from(["", ">=", "<=", ">", "<"]), atom_text)
    return st.recursive(
        atom,
        lambda t: st.one_of(
            st.tuples(st.just("not"), t),
            st.tuples(st.just("and"), t, t),
            st.tuples(st.just("or"), t, t),
            st.tuples(st.just("paren"), t),
        ),
        max_leaves=6,
    )


def render(tree) -> str:
    kind = tree[0]
    if kind == "atom":
        return f"{tree[1]} {tree[2]}".strip()
    if kind == "not":
        inner = render(tree[1])
        return "!" + (inner if tree[1][0] in ("atom", "paren", "not") else f"({inner})")
    if kind == "paren":
        return f"({render(tree[1])})"
    a, b = render(tree[1]), render(tree[2])
    if kind == "and":  # an || operand of && needs brackets; render keeps the tree's meaning
        a = f"({a})" if tree[1][0] == "or" else a
        b = f"({b})" if tree[2][0] in ("or", "and") else b
        return f"{a} && {b}"
    b = f"({b})" if tree[2][0] == "or" else b
    return f"{a} || {b}"


def evaluate(tree, v: Version) -> bool:
    """Full-version atoms only, on release versions: the plain comparison each operator names."""
    kind = tree[0]
    if kind == "atom":
        a = parse_version(tree[2])
        return {"": v == a, ">=": v >= a, "<=": v <= a, ">": v > a, "<": v < a}[tree[1]]
    if kind == "not":
        return not evaluate(tree[1], v)
    if kind == "paren":
        return evaluate(tree[1], v)
    if kind == "and":
        return evaluate(tree[1], v) and evaluate(tree[2], v)
    return evaluate(tree[1], v) or evaluate(tree[2], v)


def _members(cs: ConstraintSet, grid=GRID) -> set:
    return {v for v in grid if cs.contains(v)}


# ---------------------------------------------------------------- parsers never crash
ALPHABET = "0123456789.xX*^~<>=|&!() -+,vabcrl"


@SETTINGS
@given(st.one_of(st.text(alphabet=ALPHABET, max_size=40), st.text(max_size=40)))
def test_parsers_raise_only_version_syntax_errors(text):
    for parse in (
        parse_npm,
        parse_cargo,
        parse_compact,
        parse_version,
        parse_target,
        lambda t: parse_target(t, "docs"),
    ):
        try:
            cs = parse(text)
        except VersionSyntaxError as exc:
            assert exc.text == text and exc.reason
            continue
        if isinstance(cs, ConstraintSet):
            assert ConstraintSet.from_json(cs.to_json()) == cs


@pytest.mark.parametrize("parse", [parse_npm, parse_cargo, parse_compact, parse_version])
def test_huge_numbers_are_syntax_errors(parse):
    """Past Python's 4300-digit int() limit a number raised ValueError (found by these tests; now refused by length)."""
    with pytest.raises(VersionSyntaxError):
        parse("1" * 5000)


@pytest.mark.parametrize(
    "parse, text",
    [
        (parse_npm, " || ".join(f"{i}.{i}.x" for i in range(40))),
        (parse_cargo, ", ".join([">=1.0.0"] * 40)),
        (parse_compact, "!" * 300 + "1"),
    ],
    ids=["npm", "cargo", "compact"],
)
def test_over_long_constraints_are_refused(parse, text):
    """node-semver's MAX_LENGTH (256): without it 3000 '||' alternatives took ~90 s (each union re-normalises)."""
    with pytest.raises(VersionSyntaxError):
        parse(text)


@pytest.mark.parametrize("text", ["!" * 5000 + "1", "(" * 5000 + "1" + ")" * 5000], ids=["not", "parens"])
def test_deep_nesting_is_a_syntax_error(text):
    """parse_compact recurses once per '!' or '(': 5000 of them raised RecursionError before the length cap."""
    with pytest.raises(VersionSyntaxError):
        parse_compact(text)


@SETTINGS
@given(npm_ranges())
def test_generated_npm_ranges_parse_and_round_trip(text):
    cs = parse_npm(text)
    assert ConstraintSet.from_json(cs.to_json()) == cs
    assert parse_target(text) == cs


@SETTINGS
@given(cargo_reqs())
def test_generated_cargo_requirements_parse_and_round_trip(text):
    try:
        cs = parse_cargo(text)
    except VersionSyntaxError as exc:
        assert "*" in text, exc  # only a wildcard after an operator (">=1.*") is refused
        return
    assert ConstraintSet.from_json(cs.to_json()) == cs


@SETTINGS
@given(_compact_trees(full_only=False))
def test_generated_compact_expressions_parse(tree):
    text = render(tree)
    try:
        cs = parse_compact(text)
    except VersionSyntaxError as exc:
        assert "major-only" in exc.reason, (text, exc)  # "> 1" / "< 1": the documented refusal
        return
    assert ConstraintSet.from_json(cs.to_json()) == cs


@SETTINGS
@given(_compact_trees(full_only=True))
def test_compact_full_version_expressions_mean_their_comparisons(tree):
    cs = parse_compact(render(tree))
    assert _members(cs, RELEASES) == {v for v in RELEASES if evaluate(tree, v)}, render(tree)


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from([">=", ">", "<=", "<", "="]), versions), min_size=1, max_size=3))
def test_npm_full_comparators_mean_their_comparisons(comps):
    text = " ".join(f"{op}{v}" for op, v in comps)
    cs = parse_npm(text)
    ops = {
        ">=": lambda a, b: a >= b,
        ">": lambda a, b: a > b,
        "<=": lambda a, b: a <= b,
        "<": lambda a, b: a < b,
        "=": lambda a, b: a == b,
    }
    assert _members(cs) == {v for v in GRID if all(ops[op](v, w) for op, w in comps)}, text


# ---------------------------------------------------------------- round trip and set laws
@SETTINGS
@given(st.one_of(sets, st.text(min_size=1, max_size=12).filter(str.strip).map(ConstraintSet.label)))
def test_json_round_trip(cs):
    assert ConstraintSet.from_json(cs.to_json()) == cs


@SETTINGS
@given(sets, versions)
def test_contains_agrees_with_intervals_and_normal_form(cs, v):
    assert cs.contains(v) == any(iv.contains(v) for iv in cs.intervals)
    ivs = cs.intervals
    assert all(not iv.is_empty() for iv in ivs)
    for a, b in itertools.pairwise(ivs):  # sorted, disjoint and not touching: one spelling per set
        assert (
            a.hi is not None
            and b.lo is not None
            and (a.hi < b.lo or (a.hi == b.lo and not (a.hi_inclusive or b.lo_inclusive)))
        )


@HEAVY
@given(sets, sets, sets)
def test_union_intersection_complement_laws(a, b, c):
    ma, mb = _members(a), _members(b)
    assert _members(a.union(b)) == ma | mb
    assert _members(a.intersection(b)) == ma & mb
    assert _members(a.complement()) == set(GRID) - ma
    assert a.complement().complement() == a
    assert a.union(a.complement()) == ConstraintSet.any()
    assert a.intersection(a.complement()).is_empty
    assert a.union(b) == b.union(a) and a.intersection(b) == b.intersection(a)
    assert a.union(b).union(c) == a.union(b.union(c))
    assert a.intersection(b).intersection(c) == a.intersection(b.intersection(c))
    assert a.union(b).complement() == a.complement().intersection(b.complement())  # De Morgan
    assert a.intersection(b.union(c)) == a.intersection(b).union(a.intersection(c))
    assert a.intersects(b) == (not a.intersection(b).is_empty)
    if ma & mb:
        assert a.intersects(b)


def test_unbounded_side_flag_does_not_change_the_set():
    """An unbounded side's inclusive flag means nothing: one set, one spelling (equality and hash agree)."""
    odd = ConstraintSet([Interval(None, True, None, True)])
    assert odd == ConstraintSet.any() and hash(odd) == hash(ConstraintSet.any())


# ---------------------------------------------------------------- classify
STATUSES = {"satisfies", "near_miss", "breaking", "unknown"}


@SETTINGS
@given(sets, sets)
def test_classify_satisfies_iff_intersects(c, t):
    m = classify(c, t)
    assert m.status in STATUSES
    if c.is_empty or t.is_empty:
        assert m.status == "unknown"
    else:
        assert (m.status == "satisfies") == c.intersects(t)
        if m.status != "satisfies":
            assert m.level in ("major", "minor", "patch") and m.detail
            assert m.distance is None or m.distance >= 0
            assert classify(t, c).status == m.status  # closeness is symmetric


@SETTINGS
@given(st.sampled_from(["v1", "v2", "current", "0.0.0"]), st.sampled_from(["v1", "v2", "current", "0.0.0"]), sets)
def test_classify_labels(a, b, semver):
    assert (classify(ConstraintSet.label(a), ConstraintSet.label(b)).status == "satisfies") == (a == b)
    assert classify(ConstraintSet.label(a), semver).status == "unknown"


# ---------------------------------------------------------------- npm parity
@SETTINGS
@given(npm_ranges(prerelease=False))
def test_npm_parity_with_semantic_version(text):
    ours = parse_npm(text)
    theirs = semantic_version.NpmSpec(text)
    expected = {v for v in RELEASES if theirs.match(semantic_version.Version(str(v)))}
    assert _members(ours, RELEASES) == expected, (text, ours)
