"""extractors.version_stamps: in-text stamps, front matter targets, precedence."""

import pytest

from tests.kits.realdata import REAL_DOCS, needs_real_docs
from trustindex.extractors.base import Chunk, VersionTarget
from trustindex.extractors.version_stamps import apply_precedence, extract_stamps, front_matter_targets
from trustindex.schemas.versions import ConstraintSet, parse_version

CORPUS = REAL_DOCS


# (a real line from the corpus, [(component, constraint)])
REAL_STAMPS = [
    (
        "Compact language version 0.23.0, compiler version 0.31.0.",
        [("compact-language", "0.23.0"), ("compact-compiler", "0.31.0")],
    ),
    ("Compact language version 0.23.0.", [("compact-language", "0.23.0")]),
    ("- **Language version:** 0.23.0", [("compact-language", "0.23.0")]),
    ("* **Language version:** 0.22.0", [("compact-language", "0.22.0")]),
    ("- **Compact runtime version:** 0.16.0", [("@midnight-ntwrk/compact-runtime", "0.16.0")]),
]


@pytest.mark.parametrize("line, expected", REAL_STAMPS)
def test_real_stamp_lines(line, expected):
    targets = extract_stamps(f"# Title\n\n{line}\n\n## Section\n\ntext\n")
    assert [(t.component, t.constraint) for t in targets] == expected
    assert all(t.origin == "stamp" and t.status == "parsed" and t.chunk_ordinal is None for t in targets)
    cs = ConstraintSet.from_json(targets[0].intervals)
    assert cs.contains(parse_version(expected[0][1]))
    assert not cs.contains(parse_version("0.99.0"))


@pytest.mark.parametrize(
    "line",
    [
        "Today we are releasing version 0.19.0 of the Compact compiler.",
        "Compact language version has been incremented to version 0.15.",
        "specifically request Compact language version 0.15 with:",
        "Since Compact language version `0.22`, two `JubjubPoint` values can no longer be compared.",
        "- **Language version**: Defines contract syntax and available features",
        "* **Version**: 0.12.0",
        "Compact version: 0.24.0",  # a compiler banner only counts inside captured output
    ],
)
def test_prose_mentions_are_not_stamps(line):
    assert extract_stamps(f"# T\n\n{line}\n") == []


def test_compiler_banner_in_output_is_chunk_scoped():
    text = (
        "# Build\n\nIntro.\n\n## Compile\n\n```\n$ compact compile bboard.compact bboard-out\n"
        "Compact version: 0.24.0\nCompiling 2 circuits:\n```\n"
    )
    chunks = [Chunk(0, "", 1, 4), Chunk(1, "", 5, 11)]
    [t] = extract_stamps(text, chunks)
    assert (t.component, t.constraint, t.chunk_ordinal) == ("compact-compiler", "0.24.0", 1)
    assert t.detail.startswith("line 9:")
    [t] = extract_stamps(text)  # without chunks: document-scoped
    assert t.chunk_ordinal is None


def test_stamp_below_first_section_is_chunk_scoped_and_fences_hide_stamps():
    text = "# T\n\n## A\n\nCompact language version 0.21.0.\n\n~~~md\nCompact language version 0.1.0.\n```\n~~~\n"
    chunks = [Chunk(0, "", 1, 2), Chunk(1, "", 3, 10)]
    targets = extract_stamps(text, chunks)
    assert [(t.constraint, t.chunk_ordinal) for t in targets] == [("0.21.0", 1)]


def test_partial_stamp_means_any_patch():
    [t] = extract_stamps("Compact language version 0.15.\n")
    cs = ConstraintSet.from_json(t.intervals)
    assert cs.contains(parse_version("0.15.3")) and not cs.contains(parse_version("0.16.0"))


@needs_real_docs
def test_real_corpus_stamps():
    found = {}
    for path in CORPUS.rglob("*.md*"):
        for t in extract_stamps(path.read_text("utf-8", "replace")):
            found.setdefault(path.relative_to(CORPUS).as_posix(), []).append((t.component, t.constraint))
    assert found["docs/compact/data-types/ledger-adt.mdx"] == [
        ("compact-language", "0.23.0"),
        ("compact-compiler", "0.31.0"),
    ]
    assert found["docs/relnotes/compact/toolchain-0.31.0.mdx"] == [
        ("compact-language", "0.23.0"),
        ("@midnight-ntwrk/compact-runtime", "0.16.0"),
    ]
    assert ("compact-compiler", "0.24.0") in found["blog/2025-06-17-compact-deep-dive-part-1.mdx"]
    assert sum(map(len, found.values())) == 13  # every stamp at commit bbdd5ee, nothing from prose


# ---------------------------------------------------------------- front matter
@pytest.mark.parametrize(
    "front_matter, expected",
    [
        ({"language_version": ">= 0.22"}, [("compact-language", ">= 0.22", "parsed")]),
        (
            {"language_version": "0.23", "compiler_version": "0.31.0"},
            [("compact-language", "0.23", "parsed"), ("compact-compiler", "0.31.0", "parsed")],
        ),
        ({"compiler_version": "^0.30.0"}, [("compact-compiler", "^0.30.0", "parsed")]),
        ({"language_version": 0.2}, [("compact-language", "0.2", "unparsed")]),  # YAML read "0.20" as 0.2
        ({"language_version": 1}, [("compact-language", "1", "parsed")]),
        ({"language_version": ["0.2"]}, [("compact-language", "['0.2']", "unparsed")]),
        ({"language_version": "latest"}, [("compact-language", "latest", "unparsed")]),
        ({"title": "x"}, []),
    ],
)
def test_front_matter_targets(front_matter, expected):
    targets = front_matter_targets(front_matter)
    assert [(t.component, t.constraint, t.status) for t in targets] == expected
    assert all(t.origin == "front_matter" for t in targets)


def test_front_matter_custom_fields_and_float_hint():
    [t] = front_matter_targets({"runtime": "0.16.0"}, {"runtime": "@midnight-ntwrk/compact-runtime"})
    assert t.component == "@midnight-ntwrk/compact-runtime" and t.status == "parsed"
    [t] = front_matter_targets({"language_version": 0.2})
    assert "quote it" in t.detail and t.intervals == ""


# ---------------------------------------------------------------- precedence
def _t(component, origin, status="parsed", constraint="1.0.0"):
    return VersionTarget(component=component, constraint=constraint, origin=origin, status=status)


@pytest.mark.parametrize(
    "targets, winners",
    [
        ([_t("c", "docs_folder"), _t("c", "manifest"), _t("c", "pragma"), _t("c", "front_matter")], ["front_matter"]),
        ([_t("c", "docs_folder"), _t("c", "manifest"), _t("c", "stamp")], ["stamp"]),
        ([_t("c", "docs_folder"), _t("c", "manifest")], ["manifest"]),
        ([_t("c", "pragma"), _t("c", "stamp"), _t("c", "manifest")], ["pragma", "stamp"]),
        ([_t("c", "front_matter", "unparsed"), _t("c", "pragma")], ["pragma"]),
        ([_t("c", "front_matter", "unparsed"), _t("c", "manifest", "unparsed")], ["front_matter"]),
        ([_t("c", "pragma"), _t("c", "pragma", "unparsed")], ["pragma", "pragma"]),
    ],
)
def test_precedence(targets, winners):
    assert [t.origin for t in apply_precedence(targets)] == winners


def test_precedence_is_per_component():
    targets = [_t("compact-language", "manifest"), _t("docs", "docs_folder"), _t("compact-language", "pragma")]
    assert [(t.component, t.origin) for t in apply_precedence(targets)] == [
        ("docs", "docs_folder"),
        ("compact-language", "pragma"),
    ]
