"""Rust chunker: items, impl/trait/mod paths, doc comments, attributes, #[deprecated], bad input."""

from __future__ import annotations

import re

import pytest

from trustindex.extractors.base import FileContext
from trustindex.extractors.code_common import decode_lines
from trustindex.extractors.code_rust import deprecation_reason, extract_rust, module_path
from trustindex.extractors.code_text import chunk_problems


def wordpiece_like(text: str) -> int:
    """Stand-in for the MiniLM tokenizer: words and punctuation apart, plus [CLS] and [SEP]."""
    return len(re.findall(r"\w+|[^\w\s]", text)) + 2


def run(src: str, path: str = "src/lib.rs", max_tokens: int = 256, target: int = 200):
    c = FileContext(source="t", path=path, count_tokens=wordpiece_like, max_tokens=max_tokens, target_tokens=target)
    result = extract_rust(src.encode(), c)
    assert result.kind == "rust"
    assert chunk_problems(decode_lines(src.encode(), c.path), result.chunks, c) == []
    return result


def spans(result) -> list[tuple]:
    return [(ch.symbol_path, ch.start_line, ch.end_line) for ch in result.chunks]


@pytest.mark.parametrize(
    "path,expected",
    [
        ("src/lib.rs", None),
        ("src/main.rs", None),
        ("src/ledger.rs", "ledger"),
        ("src/state/mod.rs", "state"),
        ("ledger/src/state/ledger.rs", "state::ledger"),
        ("crates/a/src/bin/tool.rs", "bin::tool"),
        ("tests/integration.rs", "integration"),
        ("examples/demo/main.rs", "demo"),
        ("build.rs", "build"),
    ],
)
def test_module_path(path, expected):
    assert module_path(path) == expected


@pytest.mark.parametrize(
    "attribute,reason",
    [
        ("#[deprecated]", "deprecated"),
        ('#[deprecated = "use new_fn"]', "use new_fn"),
        ('#[deprecated(since = "1.2.0", note = "use \\"new\\" instead")]', 'use \\"new\\" instead'),
        ('#[deprecated(note = "gone", since = "0.3")]', "gone"),
        ('#[deprecated(since = "0.3")]', "deprecated since 0.3"),
        ('#[deprecated(\n    since = "1.0",\n    note = "multi-line"\n)]', "multi-line"),
        ("#[derive(Debug)]", None),
        ("#[deprecated_alias]", None),
        ('#[doc = "deprecated"]', None),
    ],
)
def test_deprecation_reason(attribute, reason):
    assert deprecation_reason(attribute) == reason


CASES = [
    (
        "items with docs and attributes",
        """\
//! Crate docs.
use std::fmt;

/// A point.
#[derive(Debug, Clone)]
pub struct Point { x: i32 }

/// Makes one.
pub fn make() -> Point { Point { x: 0 } }

enum E { A, B }

union U { a: u32 }

macro_rules! square { ($x:expr) => { $x * $x }; }
""",
        "src/geo.rs",
        [
            ("geo", 1, 2),  # inner docs + use: gap code under the module path, grouped
            ("geo::Point", 4, 6),
            ("geo::make", 8, 9),
            ("geo::E", 11, 11),
            ("geo::U", 13, 13),
            ("geo::square!", 15, 15),
        ],
    ),
    (
        "consts, statics and types group",
        """\
pub const A: u32 = 1;
static B: u32 = 2;
pub type C = u32;
mod external;
""",
        "src/lib.rs",
        [("A, B, C, external", 1, 4)],
    ),
    (
        "impls and traits (small: whole)",
        """\
impl Point {
    pub fn new() -> Self { Point { x: 0 } }
}

impl<T: Copy> fmt::Display for Wrapper<T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
}

pub trait Shape { fn area(&self) -> f64; }
""",
        "src/lib.rs",
        [("Point", 1, 3), ("<Wrapper as fmt::Display>", 5, 7), ("Shape", 9, 9)],
    ),
    (
        "inline mod and item-level macro",
        """\
mod inner {
    pub fn f() {}
}

lazy_static! {
    static ref X: u32 = 1;
}
""",
        "src/state/mod.rs",
        [("state::inner", 1, 3), ("state::lazy_static!", 5, 7)],
    ),
    (
        "attribute attaches across a blank line, a detached comment does not",
        """\
// Section: helpers.

#[inline]

fn fast() {}
""",
        "src/lib.rs",
        [(None, 1, 1), ("fast", 3, 5)],
    ),
]


@pytest.mark.parametrize("name,src,path,expected", CASES, ids=[c[0] for c in CASES])
def test_items(name, src, path, expected):
    assert spans(run(src, path=path)) == expected


BIG_IMPL = (
    "/// Ledger state.\nimpl<'a> Ledger<'a> {\n"
    + "".join(
        f"    /// Does step {i}.\n    pub fn step{i}(&mut self, x: u64) -> u64 {{\n"
        f"        self.total += x * {i};\n        self.total\n    }}\n"
        for i in range(10)
    )
    + "}\n"
)


def test_large_impl_splits_into_methods_with_type_paths():
    result = run(BIG_IMPL, path="ledger/src/state.rs", max_tokens=60, target=50)
    assert [ch.symbol_path for ch in result.chunks] == [f"state::Ledger::step{i}" for i in range(10)]
    assert result.chunks[0].text.startswith("/// Ledger state.\nimpl<'a> Ledger<'a> {\n    /// Does step 0.")
    assert result.chunks[-1].text.endswith("    }\n}")


def test_trait_impl_methods_use_qualified_path():
    src = BIG_IMPL.replace("impl<'a> Ledger<'a> {", "impl<'a> Store for Ledger<'a> {")
    result = run(src, max_tokens=60, target=50)
    assert result.chunks[3].symbol_path == "<Ledger as Store>::step3"


def test_deprecated_items_and_reasons():
    src = """\
/// Old API.
#[deprecated(since = "0.9.0", note = "use `open`")]
pub fn legacy_open() {}

#[deprecated = "gone"]
pub const OLD: u32 = 1;

pub const NEW: u32 = 2;
"""
    result = run(src)
    assert spans(result) == [("legacy_open", 1, 3), ("OLD", 5, 6), ("NEW", 8, 8)]
    assert [(d.chunk_ordinal, d.marker, d.reason) for d in result.deprecations] == [
        (0, "rust_attribute", "use `open`"),
        (1, "rust_attribute", "gone"),
    ]


def test_deprecated_method_splits_small_impl_and_marks_only_it():
    src = """\
impl Client {
    pub fn get(&self) {}

    #[deprecated(note = "use get")]
    pub fn fetch(&self) {}
}
"""
    result = run(src)
    assert [ch.symbol_path for ch in result.chunks] == ["Client::get", "Client::fetch"]
    assert [(d.chunk_ordinal, d.reason) for d in result.deprecations] == [(1, "use get")]


def test_broken_syntax_keeps_items_and_warns():
    src = "fn ok() {}\n\nfn broken( {\n\nfn after() {}\n"
    result = run(src)
    assert result.chunks and "ok" in [ch.symbol_path for ch in result.chunks]
    assert len(result.warnings) == 1 and "line 3" in result.warnings[0]


def test_long_function_windows():
    body = "".join(f"    let v{i} = compute({i}, v{max(i - 1, 0)});\n" for i in range(80))
    result = run(f"pub fn big() {{\n{body}}}\n", max_tokens=100, target=80)
    assert [ch.symbol_path for ch in result.chunks][:3] == ["big", "big#2", "big#3"]


@pytest.mark.parametrize(
    "src",
    [
        "fn f() " + "{\n" * 20_000 + "}\n" * 20_000,
        'const S: &str = "' + "a b " * 500_000 + '";\n',
        "".join(f"fn f{i}(){{}}" for i in range(20_000)),
    ],
    ids=["deep nesting", "2 MB line", "one-line"],
)
def test_pathological_input_completes(src):
    assert run(src).chunks


def test_many_functions_complete():
    src = "".join(f"fn f{i}() {{}}\n" for i in range(20_000))
    result = run(src, path="src/gen.rs")
    assert len(result.chunks) == 20_000 and result.chunks[-1].symbol_path == "gen::f19999"


def test_parse_over_budget_falls_back_to_windows(monkeypatch):
    from trustindex.extractors import code_common

    monkeypatch.setattr(code_common, "PARSE_BUDGET_S", 0.0)
    monkeypatch.setattr(code_common, "PARSE_BUDGET_S_PER_MB", 0.0)
    src = "".join(f"/// Doc {i}.\nfn f{i}() {{}}\n" for i in range(3000))
    result = run(src, path="src/gen.rs")
    assert len(result.warnings) == 1 and "time budget" in result.warnings[0]
    assert result.chunks and all(ch.symbol_path == "gen" for ch in result.chunks)
