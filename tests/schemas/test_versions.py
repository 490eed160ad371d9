"""schemas.versions: parsers, set algebra, JSON round trip, classification."""

import itertools

import pytest
from semantic_version import NpmSpec
from semantic_version import Version as SV

from trustindex.schemas.version_parsers import parse_cargo, parse_compact, parse_npm, parse_target
from trustindex.schemas.versions import (
    ConstraintSet,
    Interval,
    Version,
    VersionSyntaxError,
    classify,
    parse_version,
)

V = parse_version


# ------------------------------------------------------------------ versions
@pytest.mark.parametrize(
    "text, expected",
    [
        ("1", Version(1, 0, 0)),
        ("1.2", Version(1, 2, 0)),
        ("1.2.3", Version(1, 2, 3)),
        ("1.2.3-alpha.3", Version(1, 2, 3, ("alpha", 3))),
        ("v0.23.0", Version(0, 23, 0)),
        ("1.2.3+build.5", Version(1, 2, 3)),
    ],
)
def test_parse_version(text, expected):
    assert parse_version(text) == expected


@pytest.mark.parametrize("text", ["", "a", "1.2.3.4", "01.2", "1.2.3-", "1..2", "-1"])
def test_parse_version_rejects(text):
    with pytest.raises(VersionSyntaxError) as err:
        parse_version(text)
    assert err.value.text == text and err.value.reason


def test_semver_precedence():
    # The ordering example of semver 2.0, section 11.
    chain = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "1.0.1-0",
        "1.0.1",
        "1.1.0",
        "2.0.0",
    ]
    versions = [V(t) for t in chain]
    assert sorted(reversed(versions)) == versions


# ------------------------------------------------------------------ Compact
# (pragma text, versions inside, versions outside)
COMPACT = [
    ("0.23", ["0.23.0", "0.23.4", "0.23.1-rc.1"], ["0.22.9", "0.24.0", "1.23.0"]),
    ("0.23.0", ["0.23.0", "0.23.0-rc.2"], ["0.23.1", "0.22.0"]),
    (">= 0.22", ["0.22.0", "0.23.0", "1.0.0", "0.22.0-rc.1"], ["0.21.9"]),
    (">=0.22", ["0.22.0", "0.30.1"], ["0.21.0"]),
    ("> 0.14", ["0.14.1", "0.15.0"], ["0.14.0", "0.13.9"]),  # compiler: wildcard patch must be non-zero
    (">= 0.16 && <= 0.18", ["0.16.0", "0.18.9"], ["0.15.9", "0.19.0"]),
    (">= 0.22 && <= 0.23", ["0.22.0", "0.23.5"], ["0.24.0"]),
    (">= 0.21.0", ["0.21.0", "0.23.0"], ["0.20.9"]),
    (">= 1.0.0 && !1.0.5", ["1.0.0", "1.0.4", "1.0.6", "2.0.0"], ["1.0.5", "0.9.0", "1.0.5-rc.1"]),
    ("!>= 0.14.0", ["0.13.9", "0.1.0"], ["0.14.0", "0.15.0"]),
    ("(0.15 || >= 0.17) && !0.18.1", ["0.15.2", "0.17.0", "0.18.0", "0.18.2"], ["0.16.0", "0.18.1"]),
    ("0.15 || 0.17", ["0.15.0", "0.17.3"], ["0.16.0"]),
    ("1", ["1.0.0", "1.9.9"], ["2.0.0", "0.9.0"]),
    ("<= 1", ["1.5.0", "0.1.0"], ["2.0.0"]),
    ("< 1.2.3", ["1.2.2"], ["1.2.3", "1.2.3-rc.1"]),
    # compiler/version.ss tests: 1.2.3 < 1.2 and 1.2.1 < 1.2 hold, 1.2.0 < 1.2 does not
    ("< 1.2", ["1.1.9", "1.2.3", "1.2.1"], ["1.2.0", "1.3.0"]),
    ("> 1.2.2", ["1.2.3"], ["1.2.2", "1.2.2-rc.1"]),
    ("!(0.15 || 0.16)", ["0.14.0", "0.17.0"], ["0.15.1", "0.16.0"]),
]


@pytest.mark.parametrize("text, inside, outside", COMPACT)
def test_parse_compact(text, inside, outside):
    cs = parse_compact(text)
    for v in inside:
        assert cs.contains(V(v)), (text, v, str(cs))
    for v in outside:
        assert not cs.contains(V(v)), (text, v, str(cs))


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty"),
        ("== 0.23", "unexpected"),
        (">= ", "followed by a version"),
        ("0.23 &&", "ends where"),
        ("(0.23", "missing ')'"),
        ("0.23 0.24", "after a complete expression"),
        ("^0.23", "unexpected"),
        ("> 1", "major-only"),
        ("< 2", "major-only"),
        ("0.23 | 0.24", "unexpected"),
    ],
)
def test_parse_compact_rejects(text, reason):
    with pytest.raises(VersionSyntaxError) as err:
        parse_compact(text)
    assert reason in err.value.reason


# ------------------------------------------------------------------ npm
NPM = [
    ("^0.8.0", ">=0.8.0 <0.9.0-0"),
    ("^0.0.3", ">=0.0.3 <0.0.4-0"),
    ("^1.2.3", ">=1.2.3 <2.0.0-0"),
    ("^0.0", ">=0.0.0 <0.1.0-0"),
    ("~1.2", ">=1.2.0 <1.3.0-0"),
    ("~1", ">=1.0.0 <2.0.0-0"),
    ("1.2.x", ">=1.2.0 <1.3.0-0"),
    ("1.2.3 - 2.3", ">=1.2.3 <2.4.0-0"),
    ("1.2.3 - 2.3.4", ">=1.2.3 <=2.3.4"),
    (">1.2", ">=1.3.0"),
    ("<=1.2", "<1.3.0-0"),
    (">= 1.2.3", ">=1.2.3"),
    ("v1.2.3", "=1.2.3"),
    ("6.1.0-alpha.3", "=6.1.0-alpha.3"),
    ("~1.2.3-beta.2", ">=1.2.3-beta.2 <1.3.0-0"),
    (">=1.2.3 <2 || 3.x", ">=1.2.3 <2.0.0-0 || >=3.0.0 <4.0.0-0"),
    ("~>1.2", ">=1.2.0 <1.3.0-0"),
]


@pytest.mark.parametrize("text, readable", NPM)
def test_parse_npm(text, readable):
    assert str(parse_npm(text)) == readable


@pytest.mark.parametrize(
    "text",
    [
        "*",
        "x",
        "",
        "latest",
        "next",
        "workspace:*",
        "workspace:^",
        "npm:@midnight-ntwrk/ledger-v6@6.1.0-alpha.3",
        "file:../x",
        "github:org/repo",
        "https://x/y.tgz",
        "1.2.3 ||",
        ">=",
        "1.2.3.4",
    ],
)
def test_parse_npm_rejects(text):
    with pytest.raises(VersionSyntaxError):
        parse_npm(text)


PARITY_RANGES = [
    "^0.8.0",
    "^0.0.3",
    "^0.0",
    "^0",
    "^1",
    "^1.2",
    "^1.2.3",
    "^0.2.3",
    "^0.2",
    "^1.x",
    "^0.x",
    "^0.0.x",
    "^1.2.x",
    "~1.2",
    "~1",
    "~1.2.3",
    "~0.2.3",
    "~0",
    "1.2.3 - 2.3",
    "1.2.3 - 2",
    "1 - 2",
    "1.2 - 2.3.4",
    ">1.2",
    ">1",
    ">1.2.3",
    "<=1.2",
    "<=1",
    "<=1.2.3",
    "<1.2",
    "<1",
    "<1.2.3",
    ">=1.2",
    ">=1",
    ">=1.2.3",
    "1.x",
    "1.2.x",
    "1",
    "1.2",
    "=1.2",
    "=1",
    "1.2.3",
    "=1.2.3",
    "v1.2.3",
    ">=1.2.3 <2 || 3.x",
    ">=0.1.0 <0.3.0",
    "0.1.x || 0.3.x || >=2.1.0 <2.2",
    ">1.0.0 <=1.1.0",
    "1.X",
    "1.2.*",
    "<0.0.1",
    ">=0.0.0",
    "^2.0.0 || ^3.1.0",
    ">=1.0.0 <1.0.0",
]
GRID = [f"{a}.{b}.{c}" for a, b, c in itertools.product(range(4), range(5), range(5))]


@pytest.mark.parametrize("text", PARITY_RANGES)
def test_npm_parity_with_npmspec(text):
    spec, mine = NpmSpec(text), parse_npm(text)
    wrong = [v for v in GRID if spec.match(SV(v)) != mine.contains(V(v))]
    assert not wrong, (text, str(mine), wrong)


# ------------------------------------------------------------------ Cargo
CARGO = [
    ("0.5", ">=0.5.0 <0.6.0-0"),
    ("^1.2.3", ">=1.2.3 <2.0.0-0"),
    ("1.2.3", ">=1.2.3 <2.0.0-0"),
    ("0.0.3", ">=0.0.3 <0.0.4-0"),
    ("^0.0", ">=0.0.0 <0.1.0-0"),
    ("^0", ">=0.0.0 <1.0.0-0"),
    ("=0.5.2", "=0.5.2"),
    ("=1.2", ">=1.2.0 <1.3.0-0"),
    ("~1.2", ">=1.2.0 <1.3.0-0"),
    ("~1", ">=1.0.0 <2.0.0-0"),
    ("*", "*"),
    ("1.*", ">=1.0.0 <2.0.0-0"),
    ("1.2.*", ">=1.2.0 <1.3.0-0"),
    (">= 1.2, < 1.5", ">=1.2.0 <1.5.0-0"),
    (">1", ">=2.0.0"),
    ("<=1.2", "<1.3.0-0"),
]


@pytest.mark.parametrize("text, readable", CARGO)
def test_parse_cargo(text, readable):
    assert str(parse_cargo(text)) == readable


@pytest.mark.parametrize("text", ["", "abc", ">=*", "1.2,", "^1.2 || ^2"])
def test_parse_cargo_rejects(text):
    with pytest.raises(VersionSyntaxError):
        parse_cargo(text)


# ------------------------------------------------------------------ set algebra and JSON
def test_normalise_merges_and_sorts():
    cs = parse_npm("3.x || 1.2.x || 1.2.5 - 1.3.1 || >=1.2.5 <1.2.8")
    assert str(cs) == ">=1.2.0 <=1.3.1 || >=3.0.0 <4.0.0-0"
    # 1.3.0's prereleases lie between 1.2.x and 1.3.x, so the two stay apart
    assert len(parse_npm("1.2.x || 1.3.x").intervals) == 2
    assert parse_npm(">=1.0.0 <1.0.0").is_empty
    assert parse_compact("!>= 0").is_empty  # nothing lies below 0.0.0-0
    assert not parse_compact("0.23").is_empty


def test_complement_and_intersects():
    cs = parse_compact(">= 0.16 && <= 0.18")
    assert str(cs.complement()) == "<0.16.0-0 || >=0.19.0-0"
    assert cs.complement().complement() == cs
    assert cs.intersects(parse_target("0.17")) and not cs.intersects(parse_target("0.19.0"))
    assert ConstraintSet.any().complement().is_empty


@pytest.mark.parametrize(
    "cs",
    [
        parse_compact(">= 1.0.0 && !1.0.5"),
        parse_npm("^0.8.0 || 6.1.0-alpha.3"),
        ConstraintSet.any(),
        ConstraintSet(),
        ConstraintSet.label("v0 (Legacy)"),
        parse_cargo("~1"),
    ],
)
def test_json_round_trip(cs):
    text = cs.to_json()
    assert ConstraintSet.from_json(text) == cs
    assert ConstraintSet.from_json(text).to_json() == text  # deterministic
    assert " " not in text or cs.is_label


def test_json_examples():
    assert parse_compact("0.23").to_json() == '[["0.23.0-0",1,"0.24.0-0",0]]'
    assert ConstraintSet.label("v1").to_json() == '{"label":"v1"}'


@pytest.mark.parametrize(
    "text", ["", "{}", "[[1,2]]", '[["zz",1,null,0]]', "nope", '{"label":3}', "[[1,1,null,0]]", "7"]
)
def test_from_json_rejects(text):
    with pytest.raises(VersionSyntaxError):
        ConstraintSet.from_json(text)


def test_label_access():
    cs = ConstraintSet.label("current")
    assert cs.is_label and cs.label == "current" and parse_npm("1.2.3").label is None
    assert ConstraintSet.of_label("current") == cs
    assert not cs.contains(V("1.0.0"))


def test_interval_contains_edges():
    iv = Interval(V("1.0.0"), False, V("2.0.0"), True)
    assert not iv.contains(V("1.0.0")) and iv.contains(V("2.0.0")) and iv.contains(V("1.0.1-0"))


# ------------------------------------------------------------------ classification
# (constraint, target, status, level, distance)
CLASSIFY = [
    (parse_compact("0.23"), "0.23.1", "satisfies", "", None),
    (parse_compact(">= 0.22"), "0.23.0", "satisfies", "", None),
    (parse_npm("^0.8.0"), "^0.8.3", "satisfies", "", None),
    (parse_npm("1.2.3"), "1.2.7", "near_miss", "patch", 4),
    (parse_npm("1.2.3"), "1.2.1", "near_miss", "patch", 2),
    (parse_compact("0.23.0"), "0.23.2", "near_miss", "patch", 2),
    (parse_npm("^1.2.0"), "1.1.9", "near_miss", "minor", 1),
    (parse_npm("~1.2.0"), "1.5.0", "near_miss", "minor", 3),
    (parse_npm("1.2.x || 1.6.x"), "1.4.0", "near_miss", "minor", 2),
    (parse_npm("^1.2.0"), "2.1.0", "breaking", "major", 1),
    (parse_npm("^2.0.0"), "0.9.0", "breaking", "major", 2),
    (parse_compact("0.23"), "0.24.0", "breaking", "minor", 1),
    (parse_compact(">= 0.22"), "0.21.5", "breaking", "minor", 1),
    (parse_npm("6.1.0-alpha.3"), "6.1.0", "near_miss", "patch", 0),
    (parse_compact(">= 1.0.0 && !1.0.5"), "1.0.5", "near_miss", "patch", 1),
    (ConstraintSet.label("v1"), "v1", "satisfies", "", None),
    (ConstraintSet.label("0.0.0"), "v1", "breaking", "", None),
]


@pytest.mark.parametrize("constraint, target, status, level, distance", CLASSIFY)
def test_classify(constraint, target, status, level, distance):
    component = "docs" if constraint.is_label else ""
    m = classify(constraint, parse_target(target, component))
    assert (m.status, m.level, m.distance) == (status, level, distance), m


@pytest.mark.parametrize(
    "constraint, target",
    [
        (ConstraintSet.label("v1"), parse_target("1.0.0")),
        (parse_npm("1.0.0"), ConstraintSet.label("v1")),
        (ConstraintSet(), parse_target("1.0.0")),
    ],
)
def test_classify_unknown(constraint, target):
    assert classify(constraint, target).status == "unknown"


def test_classify_detail_names_the_closest_pair():
    m = classify(parse_compact("0.23"), parse_target("0.24.0"))
    assert "0.23.x and 0.24.0" in m.detail


def test_parse_target():
    assert str(parse_target("0.23")) == ">=0.23.0 <0.24.0-0"
    assert str(parse_target("0.23.0")) == "=0.23.0"
    assert parse_target("v1", "docs") == ConstraintSet.label("v1")
    with pytest.raises(VersionSyntaxError):
        parse_target("latest")
