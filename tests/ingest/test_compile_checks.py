"""Compile checks without a compiler: compilers.toml, which code is checked, and how compile evidence ranks.

The checks with the real compiler are in tests/flows/test_compile_real.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kits.realdata import REAL_DOCS, needs_real_docs
from trustindex.extractors.compact_program import checkable_fences, import_paths, is_whole_program, wrappable
from trustindex.extractors.docs_fences import fences
from trustindex.ingest.compile_checks import CheckItem, version_rows
from trustindex.query.evidence import VERSION_ROW_FIELDS, VersionRow
from trustindex.query.target_match import parse_target, version_factor
from trustindex.schemas.compilers import (
    KIND_FENCE,
    KIND_WRAPPED,
    PASSED,
    REJECTED,
    TIMEOUT,
    CompilerIdentity,
    load_compilers,
)
from trustindex.schemas.errors import ConfigError
from trustindex.schemas.policy import Policy
from trustindex.schemas.tables import VERSION_TARGETS
from trustindex.schemas.version_parsers import parse_compact
from trustindex.serve.assistant_text import versions_line

V31 = CompilerIdentity("0.31.1", "0.23.0")
V34 = CompilerIdentity("0.34.0", "0.26.0")


def _toml(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "compilers.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_compilers_toml_resolves_paths_beside_it(tmp_path):
    p = _toml(
        tmp_path,
        '[[compiler]]\npath = "bin/compactc"\n\n[[compiler]]\nsource = "compact"\ntag = "compactc-v0.31.1"\n'
        'nanopass = "tc/np.tar.gz"\nrough_draft = "tc/rd.tar.gz"\n',
    )
    a, b = load_compilers(p, {"compact"})
    assert a.path == str(tmp_path / "bin" / "compactc")
    assert (b.source, b.tag, b.nanopass) == ("compact", "compactc-v0.31.1", str(tmp_path / "tc" / "np.tar.gz"))


@pytest.mark.parametrize(
    "text, key, words",
    [
        ('[[compiler]]\npath = "x"\ntag = "t"\n', "compiler[0]", "not both"),
        ('[[compiler]]\nsource = "compact"\n', "compiler[0].tag", "missing required key"),
        (
            '[[compiler]]\nsource = "nope"\ntag = "t"\nnanopass = "a"\nrough_draft = "b"\n',
            "compiler[0].source",
            "not in",
        ),
        ('[[compiler]]\npath = "x"\ncolour = "red"\n', "compiler[0].colour", "unknown key"),
        ("[[compiler]]\npath = 3\n", "compiler[0].path", "non-empty str"),
        ('[[compiler]]\npath = "x"\n[[compiler]]\npath = "x"\n', "compiler[", "listed twice"),
        ("compiler = [", None, "not valid TOML"),
    ],
)
def test_bad_compilers_toml_names_file_key_and_problem(tmp_path, text, key, words):
    p = _toml(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        load_compilers(p, {"compact"})
    assert str(p) in str(e.value) and words in str(e.value)
    if key:
        assert key in str(e.value)
    assert "\n" not in str(e.value)


def test_missing_compilers_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match="compilers file not found"):
        load_compilers(tmp_path / "nope.toml")
    assert load_compilers(None) == []


PAGE = """# Contracts

```compact title=counter.compact
pragma language_version >= 0.16;
import CompactStandardLibrary;
export ledger round: Counter;
```

```compact
export ledger total: Counter;
export circuit add(): [] { total.increment(1); }
```

```compact
total.increment(1);
```

```ts
pragma language_version 0.1;
```
"""


def test_whole_programs_and_wrappable_fragments_are_checked_and_nothing_else():
    got = checkable_fences(PAGE)
    assert [(a, b, w) for a, b, _c, w in got] == [(3, 7, False), (9, 12, True)]
    assert got[1][2].startswith("pragma language_version >= 0.16;\nimport CompactStandardLibrary;\n")
    assert [w for *_x, w in checkable_fences(PAGE, wrap=False)] == [False]
    assert not wrappable("total.increment(1);\n")  # a statement is no top-level declaration
    assert not wrappable("// only a comment\n")
    assert not wrappable("import CompactStandardLibrary;\nexport ledger x: Counter;\n")  # wrapping would import twice


def test_import_paths_are_relative_to_the_file_and_stay_inside_the_repository():
    code = (
        "import CompactStandardLibrary;\nimport \"lib/util\" prefix U_;\ninclude './one';\n"
        'import { a as b } from "../T";\nimport M3;\nimport "../../../escape";\n'
    )
    assert import_paths("src/a/x.compact", code) == [
        "src/a/lib/util.compact",
        "src/a/one.compact",
        "src/T.compact",
        "src/a/M3.compact",
    ]


def _item(kind=KIND_FENCE) -> CheckItem:
    return CheckItem("d1", ("c1",), "s", "docs/p.md", kind, {"contract.compact": b""}, "contract.compact", "h")


def _rows(*checks) -> dict[str, list[VersionRow]]:
    """The version rows the checks write, as a snapshot hands them to the version match."""
    out: dict[str, list[VersionRow]] = {}
    for ident, outcome, reason, kind in checks:
        for r in version_rows(_item(kind), ident, outcome, reason):
            out.setdefault(r["component"], []).append(VersionRow.of(r))
    return out


def _declared(constraint: str) -> VersionRow:
    return VersionRow.of(
        {
            "doc_id": "d1",
            "chunk_id": "c1",
            "component": "compact-language",
            "constraint": constraint,
            "intervals": parse_compact(constraint).to_json(),
            "origin": "docs_fence",
            "status": "parsed",
            "detail": "fence",
        }
    )


def _factor(rows, component, version, strict=False):
    vf, excluded = version_factor(rows, [parse_target(component, version)], Policy.default(), strict)
    return vf.evidence.targets[0], excluded


def test_compiled_evidence_satisfies_and_outranks_a_declared_pragma():
    rows = _rows(
        (V31, PASSED, "", KIND_FENCE),
        (V34, REJECTED, "Exception: c line 1: language version 0.26.0 mismatch", KIND_FENCE),
    )
    rows["compact-language"].append(_declared("0.26"))  # the page says 0.26; the 0.26 compiler rejects it
    t, excluded = _factor(rows, "compact-language", "0.23")
    assert (t.status, t.origin) == ("satisfies", "compiled") and not excluded
    assert t.declared.status != "satisfies" and t.declared.origin == "docs_fence"
    t, excluded = _factor(rows, "compact-language", "0.26", strict=True)
    assert t.status == "breaking" and excluded
    assert "rejected by compactc 0.34.0 (language 0.26.0): " in t.detail and "mismatch" in t.detail
    assert t.declared.status == "satisfies"  # both are shown
    t, _ = _factor(rows, "compact-compiler", "0.34")
    assert t.status == "breaking" and t.origin == "compile_rejected"


def test_a_compiler_outside_the_target_leaves_the_declaration_to_decide():
    rows = _rows((V31, PASSED, "", KIND_FENCE))
    rows["compact-language"].append(_declared(">= 0.16"))
    t, _ = _factor(rows, "compact-language", "0.18")
    assert (t.status, t.origin) == ("satisfies", "docs_fence")
    only = _rows((V31, PASSED, "", KIND_FENCE))
    t, _ = _factor(only, "compact-language", "0.18")
    assert t.status == "unknown" and "no compiler of this target was run" in t.detail


def test_wrapped_rejections_and_stopped_checks_are_no_evidence():
    assert _rows((V31, REJECTED, "Exception: unbound", KIND_WRAPPED)) == {}
    assert _rows((V31, TIMEOUT, "wall-clock limit", KIND_FENCE)) == {}
    wrapped = _rows((V31, PASSED, "", KIND_WRAPPED))
    assert "wrapped" in wrapped["compact-language"][0].detail


def test_the_compact_text_says_which_compilers_accept_it():
    rows = _rows((V31, PASSED, "", KIND_FENCE), (V34, REJECTED, "Exception: x", KIND_FENCE))
    vf, _ = version_factor(rows, [], Policy.default(), False)
    line = versions_line(vf)
    assert line == "✓ compiles with compactc 0.31.1; ✗ rejected by compactc 0.34.0"
    assert vf.evidence.constraints == {}  # shown, empty


@needs_real_docs
def test_real_docs_fences_whole_programs_and_wrapping():
    """What the real docs hold: every compact fence is a whole program, a wrappable fragment, or left unchecked."""
    distinct, whole, wrapped = set(), set(), set()
    for p in sorted(REAL_DOCS.rglob("*.md*")):
        text = p.read_text("utf-8", "replace")
        compact = [f for f in fences(text) if f.tag == "compact"]
        distinct.update(f.code for f in compact)
        got = checkable_fences(text)
        whole.update(c for *_x, c, w in got if not w)
        wrapped.update(c for *_x, c, w in got if w)
        assert sum(1 for f in compact if is_whole_program(f.code)) == sum(1 for *_x, w in got if not w)
    # ../shared/toolchains/README.md counts 403 compact blocks: 640 fences, ~405 distinct texts (versioned copies)
    assert 400 <= len(distinct) <= 410
    assert len(whole) >= 26 and wrapped and len(whole) + len(wrapped) < len(distinct)


def test_a_version_row_has_the_version_targets_columns():
    """The typed row the search reads (query/evidence.py) is the table's row: a column added to one is added to both."""
    assert VERSION_ROW_FIELDS == tuple(VERSION_TARGETS.names)
