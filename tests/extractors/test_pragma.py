"""extractors.pragma: Compact pragmas, real forms, error recovery."""

import json
import re

import pytest

from tests.kits.realdata import REAL_DOCS, needs_real_docs
from trustindex.extractors.pragma import extract_pragmas
from trustindex.schemas.versions import ConstraintSet, parse_version

CORPUS = REAL_DOCS

# Every form DESIGN.md and the real docs use: (source line, component, versions inside, versions outside)
REAL = [
    ("pragma language_version 0.23;", "compact-language", ["0.23.0", "0.23.9"], ["0.24.0", "0.22.0"]),
    ("pragma language_version 0.23.0;", "compact-language", ["0.23.0"], ["0.23.1"]),
    ("pragma language_version >= 0.22;", "compact-language", ["0.22.0", "0.25.0"], ["0.21.3"]),
    ("pragma language_version >=0.22;", "compact-language", ["0.22.0"], ["0.21.0"]),
    ("pragma language_version > 0.14;", "compact-language", ["0.15.0"], ["0.14.0"]),
    ("pragma language_version >= 0.16 && <= 0.18;", "compact-language", ["0.17.1"], ["0.19.0"]),
    ("pragma language_version >= 0.22 && <= 0.23;", "compact-language", ["0.23.0"], ["0.21.0"]),
    ("pragma language_version >= 0.21.0;", "compact-language", ["0.21.0"], ["0.20.0"]),
    ("pragma compiler_version >= 1.0.0 && !1.0.5;", "compact-compiler", ["1.0.4", "1.0.6"], ["1.0.5"]),
    ("pragma compiler_version !>= 0.14.0;", "compact-compiler", ["0.13.0"], ["0.14.0"]),
    (
        "pragma language_version (0.15 || >= 0.17) && !0.18.1;",
        "compact-language",
        ["0.15.0", "0.18.0"],
        ["0.16.0", "0.18.1"],
    ),
]


@pytest.mark.parametrize("line, component, inside, outside", REAL)
def test_real_pragma_forms(line, component, inside, outside):
    targets, warnings = extract_pragmas(line + "\n\nimport CompactStandardLibrary;\n")
    assert warnings == []
    [t] = targets
    assert (t.component, t.origin, t.status, t.chunk_ordinal) == (component, "pragma", "parsed", None)
    assert t.constraint == line.split(None, 2)[2].rstrip(";")
    cs = ConstraintSet.from_json(t.intervals)
    assert all(cs.contains(parse_version(v)) for v in inside)
    assert not any(cs.contains(parse_version(v)) for v in outside)


def test_both_pragmas_in_order_and_chunk_scope():
    src = "pragma language_version 0.16;\npragma compiler_version >= 0.24;\nexport ledger round: Counter;\n"
    targets, _ = extract_pragmas(src, chunk_ordinal=3)
    assert [(t.component, t.constraint, t.chunk_ordinal) for t in targets] == [
        ("compact-language", "0.16", 3),
        ("compact-compiler", ">= 0.24", 3),
    ]
    assert targets[1].detail == "line 2"


def test_no_pragma_is_silent():
    assert extract_pragmas("import CompactStandardLibrary;\nexport ledger x: Counter;\n") == ([], [])


def test_comments_are_not_pragmas():
    src = "// pragma language_version 0.1;\n/* pragma compiler_version 9.9; */\nexport circuit f(: [] {}\n"
    targets, _ = extract_pragmas(src)
    assert targets == []


def test_unparseable_constraint_is_kept_as_written():
    targets, _ = extract_pragmas("pragma language_version ^0.23;\n")
    [t] = targets
    assert (t.status, t.intervals, t.constraint) == ("unparsed", "", "^0.23")
    assert "unexpected" in t.detail


def test_regex_fallback_when_errors_swallow_a_pragma():
    src = (
        "pragma language_version >= 0.16\n"  # missing ';'
        "export circuit f(: [] {}\n"  # garbage that opens an ERROR region
        "pragma compiler_version 0.26;\n"
        "circuit ???\n"
    )
    targets, warnings = extract_pragmas(src)
    by_component = {t.component: t for t in targets}
    assert by_component["compact-compiler"].constraint == "0.26"
    assert "regex fallback" in by_component["compact-compiler"].detail
    assert by_component["compact-language"].constraint == ">= 0.16"
    assert any("regex fallback" in w and "3" in w for w in warnings)


def test_unknown_pragma_id_warns():
    targets, warnings = extract_pragmas("pragma flavour 1.0;\n")
    assert targets == [] and "flavour" in warnings[0]


@needs_real_docs
def test_every_pragma_in_the_real_docs_parses():
    block = re.compile(r"```compact[^\n]*\n(.*?)```", re.S)
    seen = 0
    for path in CORPUS.rglob("*.md*"):
        for code in block.findall(path.read_text("utf-8", "replace")):
            if "pragma" not in code:
                continue
            targets, _ = extract_pragmas(code)
            for t in targets:
                seen += 1
                assert t.status == "parsed", (path, t)
                json.loads(t.intervals)
    assert seen >= 40  # the corpus at commit bbdd5ee holds 45 pragmas in compact blocks
