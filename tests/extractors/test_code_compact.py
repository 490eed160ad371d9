"""Compact chunker: one chunk per declaration, grouped small declarations, comments, bad input."""

from __future__ import annotations

import re

import pytest

from tests.kits.realdata import REAL_DOCS
from trustindex.extractors.base import FileContext
from trustindex.extractors.code_common import decode_lines
from trustindex.extractors.code_compact import extract_compact
from trustindex.extractors.code_text import chunk_problems

CORPUS = REAL_DOCS


def wordpiece_like(text: str) -> int:
    """Stand-in for the MiniLM tokenizer: words and punctuation apart, plus [CLS] and [SEP]."""
    return len(re.findall(r"\w+|[^\w\s]", text)) + 2


def ctx(max_tokens: int = 256, target: int = 200, path: str = "contracts/lock.compact") -> FileContext:
    return FileContext(source="t", path=path, count_tokens=wordpiece_like, max_tokens=max_tokens, target_tokens=target)


def run(src: str, **kw):
    c = ctx(**kw)
    result = extract_compact(src.encode(), c)
    assert result.kind == "compact"
    assert chunk_problems(decode_lines(src.encode(), c.path), result.chunks, c) == []
    return result


def spans(result) -> list[tuple]:
    return [(ch.symbol_path, ch.start_line, ch.end_line) for ch in result.chunks]


# The lock contract of the Midnight docs ("Writing a contract"), with comments added.
LOCK = """\
pragma language_version 0.16;

import CompactStandardLibrary;

enum State {
  UNSET,
  SET
}

export ledger authority: Bytes<32>;

export ledger value: Uint<64>;

export ledger state: State;

export ledger round: Counter;

constructor(sk: Bytes<32>, v: Uint<64>) {
  authority = disclose(publicKey(round, sk));
  value = disclose(v);
  state = State.SET;
}

// Derives the public key of a secret key for one round.
circuit publicKey(round: Field, sk: Bytes<32>): Bytes<32> {
  return persistentHash<Vector<3, Bytes<32>>>(
           [pad(32, "midnight:examples:lock:pk"), round as Bytes<32>, sk]);
}

/* Reads the stored value.
   Fails when unset. */
export circuit get(): Uint<64> {
  assert(state == State.SET, "Attempted to get uninitialized value");
  return value;
}

witness secretKey(): Bytes<32>;
"""

CASES = [
    (
        "lock contract",
        LOCK,
        [
            (None, 1, 3),  # pragma + import grouped, unnamed
            ("State", 5, 8),
            ("authority, value, state, round", 10, 16),  # ledger fields grouped
            ("constructor", 18, 22),
            ("publicKey", 24, 28),  # with its // comment
            ("get", 30, 35),  # with its /* */ comment
            ("secretKey", 37, 37),
        ],
    ),
    (
        "struct, generic circuit, contract, type alias, include",
        """\
include "std";
new type V3 = Vector<3, Uint<16>>;

struct Foo<#m, T> {
  b: Bytes<m>;
  v: Vector<m, T>;
}

export pure circuit id<T>(x: T): T { return x; }

contract AuthCell {
  circuit get(): Bytes<32>;
}
""",
        [("V3", 1, 2), ("Foo", 4, 7), ("id", 9, 9), ("AuthCell", 11, 13)],
    ),  # include + alias group
    (
        "detached comment is gap code (grouped), trailing comment stays on its line",
        """\
// Licence header, separated by a blank line.

export ledger counter: Counter; // the count
// increments
export circuit increment(): [] {
  counter.increment(1);
}
""",
        [("counter", 1, 3), ("increment", 4, 7)],
    ),
    (
        "small module stays whole",
        """\
module Util {
  export circuit one(): Field { return 1; }
}
""",
        [("Util", 1, 3)],
    ),
]


@pytest.mark.parametrize("name,src,expected", CASES, ids=[c[0] for c in CASES])
def test_declarations(name, src, expected):
    assert spans(run(src)) == expected


def test_ledger_group_respects_target():
    src = "\n".join(f"export ledger field{i}: Uint<64>;" for i in range(40)) + "\n"
    result = run(src, target=40)
    assert len(result.chunks) > 1
    assert all(ch.token_count <= 40 for ch in result.chunks)
    assert result.chunks[0].symbol_path.startswith("field0, field1")


def test_large_module_splits_into_members():
    body = "\n".join(f"  export circuit c{i}(x: Field): Field {{ return x + {i}; }}" for i in range(30))
    src = f"module Big {{\n  // first\n{body}\n}}\n"
    result = run(src, max_tokens=80, target=60)
    paths = [ch.symbol_path for ch in result.chunks]
    assert paths[0] == "Big.c0"  # the short header `module Big {` joins the first member
    assert result.chunks[0].text.startswith("module Big {\n  // first")
    assert "Big.c29" in paths
    assert result.chunks[-1].text.endswith("}")  # the closing brace goes with the last member


def test_long_circuit_windows_keep_symbol_path():
    body = "\n".join(f"  const v{i} = x + {i};" for i in range(60))
    src = f"export circuit long(x: Field): Field {{\n{body}\n  return x;\n}}\n"
    result = run(src, max_tokens=64, target=50)
    paths = [ch.symbol_path for ch in result.chunks]
    assert paths[0] == "long" and paths[1] == "long#2" and len(paths) >= 4
    assert all(ch.token_count <= 64 for ch in result.chunks)


@pytest.mark.parametrize(
    "src,error_line",
    [
        ("export circuit ok(): [] { }\ncircuit broken( {\nexport circuit after(): [] { }\n", 2),
        ("pragma language_version >= 0.16;\nthis is not compact at all\n", 2),
    ],
)
def test_broken_syntax_keeps_chunks_and_warns(src, error_line):
    result = run(src)
    assert result.chunks
    assert len(result.warnings) == 1 and f"line {error_line}" in result.warnings[0]
    if "after" in src:
        assert "after" in [ch.symbol_path for ch in result.chunks]
        assert "ok" in [ch.symbol_path for ch in result.chunks]


def test_clean_file_has_no_warning():
    assert run(LOCK).warnings == []


@pytest.mark.parametrize(
    "src",
    [
        "module A { " * 3000 + "}" * 3000,
        'export circuit f(): [] { const s = "' + "ab " * 700_000 + '"; }\n',
    ],
    ids=["deep nesting", "2 MB line"],
)
def test_pathological_input_completes(src):
    result = run(src)
    assert result.chunks


def test_many_circuits_complete():
    src = "".join(f"circuit f{i}(): [] {{}}\n" for i in range(20_000))
    result = run(src)
    assert len(result.chunks) == 20_000 and result.chunks[-1].symbol_path == "f19999"


def test_real_compact_blocks_of_the_docs():
    """Every ```compact block of the Midnight docs chunks soundly (fragments included)."""
    if not CORPUS.is_dir():
        pytest.skip("Midnight docs corpus not present")
    blocks: list[str] = []
    for path in sorted(CORPUS.rglob("*.md*")):
        text = path.read_text(errors="replace")
        if "```compact" in text:
            blocks += re.findall(r"```compact[^\n]*\n(.*?)```", text, re.S)
    assert len(blocks) > 50
    named = 0
    for src in blocks:
        named += sum(ch.symbol_path is not None for ch in run(src).chunks)
    assert named > len(blocks) // 2
