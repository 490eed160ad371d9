"""TypeScript chunker: symbols, classes split by size, JSDoc deprecations, bad input."""

from __future__ import annotations

import re

import pytest

from trustindex.extractors.base import FileContext
from trustindex.extractors.code_common import decode_lines
from trustindex.extractors.code_text import chunk_problems
from trustindex.extractors.code_typescript import extract_typescript, jsdoc_deprecation


def wordpiece_like(text: str) -> int:
    """Stand-in for the MiniLM tokenizer: words and punctuation apart, plus [CLS] and [SEP]."""
    return len(re.findall(r"\w+|[^\w\s]", text)) + 2


def run(src: str, path: str = "src/index.ts", max_tokens: int = 256, target: int = 200):
    c = FileContext(source="t", path=path, count_tokens=wordpiece_like, max_tokens=max_tokens, target_tokens=target)
    result = extract_typescript(src.encode(), c)
    assert result.kind == "typescript"
    assert chunk_problems(decode_lines(src.encode(), c.path), result.chunks, c) == []
    return result


def spans(result) -> list[tuple]:
    return [(ch.symbol_path, ch.start_line, ch.end_line) for ch in result.chunks]


CASES = [
    (
        "function with JSDoc",
        """\
/**
 * Adds one.
 */
export function inc(x: number): number {
  return x + 1;
}
""",
        [("inc", 1, 6)],
    ),
    (
        "small class is one chunk",
        """\
// A counter.
export class Counter {
  private n = 0;
  increment(by: number): void { this.n += by; }
}
""",
        [("Counter", 1, 5)],
    ),
    (
        "interface, type alias, enum",
        """\
export interface Options { verbose: boolean }

export enum Mode { Fast, Safe }

type Id = string;
""",
        [("Options", 1, 1), ("Mode", 3, 3), ("Id", 5, 5)],
    ),
    (
        "imports group, arrow const is a symbol",
        """\
import { a } from "a";
import b from "b";

export const double = (x: number) => x * 2;
const g = function () { return 1; };
""",
        [(None, 1, 2), ("double", 4, 4), ("g", 5, 5)],
    ),
    (
        "plain consts group under their names",
        """\
export const A = 1;
export const B = "two";
""",
        [("A, B", 1, 2)],
    ),
    (
        "default exports and generators",
        """\
export default class { m() {} }

export default function () {}

function* gen() { yield 1; }
""",
        [("default", 1, 1), ("default", 3, 3), ("gen", 5, 5)],
    ),
    (
        "namespace and declare module",
        """\
namespace NS { export const q = 1; }

declare module "pkg" { export function z(): void; }

declare global { interface Window { x: number } }
""",
        [("NS", 1, 1), ("pkg", 3, 3), ("global", 5, 5)],
    ),
    (
        "decorated class keeps its decorator",
        """\
@Component({ selector: "x" })
export class View {}
""",
        [("View", 1, 2)],
    ),
    (
        "top-level statements are gap code",
        """\
console.log("start");
run();
""",
        [(None, 1, 2)],
    ),
]


@pytest.mark.parametrize("name,src,expected", CASES, ids=[c[0] for c in CASES])
def test_symbols(name, src, expected):
    assert spans(run(src)) == expected


def test_tsx_file_uses_tsx_grammar():
    src = 'export function App() {\n  return <div className="a">hi</div>;\n}\n'
    result = run(src, path="src/App.tsx")
    assert spans(result) == [("App", 1, 3)] and result.warnings == []


LARGE_CLASS = (
    "/** A store. */\nexport class Store {\n  private items: string[] = [];\n"
    + "".join(
        f"  /** Method {i}. */\n  method{i}(x: number): number {{\n    return x * {i} + this.items.length;\n  }}\n"
        for i in range(12)
    )
    + "}\n"
)


def test_large_class_is_split_per_method():
    result = run(LARGE_CLASS, max_tokens=60, target=50)
    paths = [ch.symbol_path for ch in result.chunks]
    assert paths[0] == "Store.items"  # the header and the field group
    assert paths[1:] == [f"Store.method{i}" for i in range(12)]
    assert result.chunks[1].text.startswith("  /** Method 0. */")
    assert result.chunks[-1].text.endswith("}\n}") or result.chunks[-1].text.endswith("  }\n}")


@pytest.mark.parametrize(
    "comment,reason",
    [
        ("/** @deprecated use inc2 */", "use inc2"),
        (
            "/**\n * Adds.\n * @deprecated Since 2.0: use\n *   inc2 instead.\n * @param x value\n */",
            "Since 2.0: use inc2 instead.",
        ),
        ("/** @deprecated */", "deprecated"),
        ("/**\n * @deprecated\n * @see inc2\n */", "deprecated"),
        ("/* @deprecated not JSDoc */", None),
        ("// @deprecated not JSDoc", None),
        ("/** @deprecatedness is not the tag */", None),
    ],
)
def test_jsdoc_deprecation_reason(comment, reason):
    assert jsdoc_deprecation(comment) == reason


def test_deprecated_function_marks_its_chunk():
    src = "export function a() {}\n\n/** @deprecated use c */\nexport function b() {}\n"
    result = run(src)
    assert [(d.chunk_ordinal, d.marker, d.reason, d.scope) for d in result.deprecations] == [
        (1, "jsdoc", "use c", "chunk")
    ]


def test_deprecated_method_splits_small_class_and_marks_only_it():
    src = """\
export class Api {
  /** Fetches. */
  get(): void {}
  /** @deprecated use get */
  fetch(): void {}
}
"""
    result = run(src)
    assert [ch.symbol_path for ch in result.chunks] == ["Api.get", "Api.fetch"]
    assert [(d.chunk_ordinal, d.reason) for d in result.deprecations] == [(1, "use get")]


def test_deprecated_large_class_marks_every_part():
    src = LARGE_CLASS.replace("/** A store. */", "/** @deprecated use NewStore */")
    result = run(src, max_tokens=60, target=50)
    assert len(result.chunks) > 5
    assert sorted(d.chunk_ordinal for d in result.deprecations) == list(range(len(result.chunks)))


def test_deprecated_const_is_not_grouped():
    src = "export const A = 1;\n/** @deprecated */\nexport const B = 2;\nexport const C = 3;\n"
    result = run(src)
    assert spans(result) == [("A", 1, 1), ("B", 2, 3), ("C", 4, 4)]
    assert [d.chunk_ordinal for d in result.deprecations] == [1]


def test_broken_syntax_keeps_symbols_and_warns():
    src = "export function ok() {}\n\nlet = = ;\n\nexport function after() {}\n"
    result = run(src)
    paths = [ch.symbol_path for ch in result.chunks]
    assert "ok" in paths and "after" in paths
    assert len(result.warnings) == 1 and "line 3" in result.warnings[0]


def test_long_function_windows():
    body = "".join(f"  const v{i} = compute({i}, v{max(i - 1, 0)});\n" for i in range(80))
    result = run(f"export function big() {{\n{body}}}\n", max_tokens=100, target=80)
    paths = [ch.symbol_path for ch in result.chunks]
    assert paths[:3] == ["big", "big#2", "big#3"]


@pytest.mark.parametrize(
    "src",
    [
        "const x = " + "(" * 30_000 + "1" + ")" * 30_000 + ";\n",
        'const s = "' + "a b " * 500_000 + '";\n',
        "".join(f"function f{i}(){{return {i}}}" for i in range(20_000)),
    ],
    ids=["deep nesting", "2 MB line", "minified"],
)
def test_pathological_input_completes(src):
    assert run(src).chunks


def test_many_functions_complete():
    src = "".join(f"function f{i}() {{}}\n" for i in range(20_000))
    result = run(src)
    assert len(result.chunks) == 20_000 and result.chunks[-1].symbol_path == "f19999"


EFFECT_STYLE = """\
/**
 * A compiled contract (Effect style: variance annotations on its type parameters).
 */
export interface CompiledContract<in out C extends Contract<PS>, in out PS, out R = never>
  extends Pipeable {
  readonly tag: string;
}

export declare namespace CompiledContract {
  export type Variance<in out C, out R> = {
    readonly c: C;
    readonly r: R;
  };
}

// a comment that reads like one, out of place: a, out B, c
export class Witnessed<const in T> {
  run(x: T): void {}
}
"""


def test_variance_annotations_parse_cleanly_and_keep_their_text():
    # tree-sitter-typescript 0.23.2 lacks TS 4.7's `in` / `out` modifiers (tree-sitter-typescript#370): the parser
    # reads them as spaces, the chunks keep the file's own text
    result = run(EFFECT_STYLE)
    assert result.warnings == []
    assert [ch.symbol_path for ch in result.chunks] == ["CompiledContract", "CompiledContract", "Witnessed"]
    assert "<in out C extends Contract<PS>, in out PS, out R = never>" in result.chunks[0].text
    assert "Variance<in out C, out R>" in result.chunks[1].text
    assert "a, out B, c" in result.chunks[2].text and "<const in T>" in result.chunks[2].text


def test_a_parse_view_keeps_every_byte_in_its_place():
    from trustindex.extractors.code_typescript import grammar_view

    src = EFFECT_STYLE.encode()
    view = grammar_view(src)
    assert len(view) == len(src) and view.count(b"\n") == src.count(b"\n")
    assert b"<       C extends Contract<PS>,        PS,     R = never>" in view
    # a type parameter named like a modifier is a name, not a modifier
    assert grammar_view(b"interface Z<out extends X, in2 T> {}") == b"interface Z<out extends X, in2 T> {}"


@pytest.mark.parametrize(
    "src, names",
    [
        ("export declare namespace N {\n  export type V = { c: string };\n}\n", ["N"]),
        ("export declare function f(x: number): void;\n", ["f"]),
        ("export declare const version: string;\n", ["version"]),
    ],
)
def test_an_exported_ambient_declaration_is_named(src, names):
    # a compiler's .d.ts and Effect's companion namespaces export `declare` forms: they were nameless gap code
    assert [ch.symbol_path for ch in run(src).chunks] == names


def test_a_type_query_of_a_module_as_a_type_argument_parses_cleanly():
    # vitest's idiom in every mocked test; tree-sitter-typescript 0.23.2 cannot read `g<typeof import("m")>()`
    src = """\
vi.mock("@/config/runtime-config", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/config/runtime-config")>();
  return { ...actual };
});

export function load(): void {}
"""
    result = run(src)
    assert result.warnings == []
    assert [ch.symbol_path for ch in result.chunks][-1] == "load"
    assert 'importOriginal<typeof import("@/config/runtime-config")>()' in result.chunks[0].text
