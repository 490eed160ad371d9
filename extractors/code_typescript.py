"""Chunk TypeScript / TSX source by top-level symbol, with JSDoc deprecations.

Grammar: tree-sitter-typescript 0.23.2; ``.tsx`` files use ``language_tsx()``, every other path
``language_typescript()``.  What the grammar lacks it reads through ``grammar_view``: type parameters' variance
modifiers as spaces, ``typeof import("m")`` as a name; the chunks keep the file's own text.

Symbols and their paths:
* ``function`` / ``function*`` / ``declare function`` -> the name (``add``);
* ``class`` / ``abstract class`` -> the name, ``default`` for an anonymous default export.  A class
  is one chunk; when it exceeds ``ctx.max_tokens`` or holds a deprecated member it is split into
  members: methods, accessors and signatures are ``Class.method``, fields ``Class.field`` (fields
  are groupable), the class header and leftovers keep ``Class``;
* ``interface`` / ``enum`` -> the name; ``type`` aliases -> the name (groupable);
* ``const`` / ``let`` / ``var`` -> the declared names joined with ``", "``; groupable unless a value
  is an arrow function, function expression or class (``export const f = () => ...`` is ``f``);
* ``namespace N`` / ``module N`` / ``declare module "m"`` / ``declare global`` (exported or not:
  ``export declare namespace N``, Effect's companion namespaces) -> a container
  like a class, members ``N.member``;
* imports, re-exports and ``export default <expr>`` are groupable and unnamed.
Other top-level statements are gap code with symbol path ``None``.

A comment directly above a symbol (no blank line between) is part of its chunk, as are its
decorators.
A JSDoc block (``/** ... */``) with ``@deprecated`` marks every chunk of the symbol
``Deprecation(scope="chunk", marker="jsdoc")`` with the tag's text as reason (``"deprecated"``
when the tag has none).  Shared chunking rules: ``extractors.code_common``.
"""

from __future__ import annotations

import re

import tree_sitter_typescript
from tree_sitter import Language

from trustindex.extractors.base import Extraction, FileContext
from trustindex.extractors.code_common import (
    MAX_CONTAINER_DEPTH,
    Unit,
    extract_code,
    first_line,
    join_names,
    join_path,
    last_line,
    node_text,
    units_from_siblings,
)

TYPESCRIPT = Language(tree_sitter_typescript.language_typescript())
TSX = Language(tree_sitter_typescript.language_tsx())

_FUNCTIONS = {"function_declaration", "generator_function_declaration", "function_signature"}
_CLASSES = {"class_declaration", "abstract_class_declaration", "class"}
_NAMED = {"interface_declaration", "enum_declaration"}
_VARIABLES = {"lexical_declaration", "variable_declaration"}
_FUNCTION_VALUES = {"arrow_function", "function_expression", "function", "generator_function", "class"}
_MODULES = {"internal_module", "module"}
_MEMBERS = {"method_definition", "abstract_method_signature", "method_signature"}
_FIELDS = {"public_field_definition", "property_signature"}
_EXPORTABLE = (
    _CLASSES
    | _FUNCTIONS
    | _NAMED
    | _VARIABLES
    | _MODULES
    | {"type_alias_declaration", "function_expression", "generator_function"}
    | {"ambient_declaration"}  # export declare namespace N / function f / const c (Effect's companion namespaces)
)
_DEPRECATED = re.compile(r"@deprecated\b(.*?)(?=\n\s*\*?\s*@\w|\*/|$)", re.S)


def jsdoc_deprecation(comment: str) -> str | None:
    """Reason of a ``@deprecated`` tag in a JSDoc block, or None.  The reason runs to the next
    block tag or the end of the comment (JSDoc: https://jsdoc.app/tags-deprecated)."""
    if not comment.startswith("/**"):
        return None
    match = _DEPRECATED.search(comment)
    if match is None:
        return None
    reason = re.sub(r"\n\s*\*", "\n", match.group(1))
    reason = " ".join(reason.split())
    return reason or "deprecated"


def _name(src: bytes, node) -> str | None:
    child = node.child_by_field_name("name")
    if child is None:
        return None
    name = node_text(src, child)
    return name.strip("\"'`") if child.type == "string" else name


def _is_leading(node) -> bool:
    return node.type in ("comment", "decorator")


def _is_decorator(node) -> bool:
    return node.type == "decorator"


def _deprecations(src: bytes, lead: list) -> list[tuple[str, str]]:
    out = []
    for node in lead:
        if node.type == "comment":
            reason = jsdoc_deprecation(node_text(src, node))
            if reason:
                out.append(("jsdoc", reason))
    return out


class _Walker:
    def __init__(self, src: bytes, depth_cap: int = MAX_CONTAINER_DEPTH):
        self.src = src
        self.depth_cap = depth_cap

    def statements(self, nodes: list, prefix: str | None, depth: int) -> list[Unit]:
        def classify(node, lead):
            unit = self.statement(node, node, prefix, depth)
            if unit is not None:
                unit.deprecations = _deprecations(self.src, lead)
            return unit

        return units_from_siblings(nodes, classify, _is_leading, _is_decorator)

    def statement(self, outer, node, prefix: str | None, depth: int) -> Unit | None:
        """Unit spanning ``outer`` for the declaration ``node`` (``outer`` may be its export)."""
        start, end, kind = first_line(outer), last_line(outer), node.type
        if kind == "export_statement":
            inner = node.child_by_field_name("declaration") or node.child_by_field_name("value")
            if inner is not None and inner.type in _EXPORTABLE:
                unit = self.statement(outer, inner, prefix, depth)
                if unit is not None:
                    return unit
            return Unit(start, end, None, groupable=True, names=[], context=prefix)
        if kind == "expression_statement" and node.named_child_count == 1 and node.named_children[0].type in _MODULES:
            return self.statement(outer, node.named_children[0], prefix, depth)
        if kind == "ambient_declaration":
            inner = node.named_children[0] if node.named_child_count else None
            if inner is None:
                return None
            if inner.type == "statement_block":  # declare global { ... }
                return self.container(start, end, join_path(prefix, "global"), inner, depth, True)
            return self.statement(outer, inner, prefix, depth)
        name = _name(self.src, node)
        if kind in _FUNCTIONS or kind in ("function_expression", "generator_function"):
            return Unit(start, end, join_path(prefix, name or "default"))
        if kind in _CLASSES:
            path = join_path(prefix, name or "default")
            return self.container(start, end, path, node.child_by_field_name("body"), depth, False)
        if kind in _MODULES:
            path = join_path(prefix, name or "module")
            return self.container(start, end, path, node.child_by_field_name("body"), depth, True)
        if kind in _NAMED:
            return Unit(start, end, join_path(prefix, name) if name else prefix)
        if kind == "type_alias_declaration":
            return Unit(start, end, join_path(prefix, name) if name else None, groupable=True)
        if kind in _VARIABLES:
            declarators = [c for c in node.named_children if c.type == "variable_declarator"]
            names = [join_path(prefix, n) for n in (_name(self.src, d) for d in declarators) if n]
            values = [d.child_by_field_name("value") for d in declarators]
            callable_value = any(v is not None and v.type in _FUNCTION_VALUES for v in values)
            return Unit(start, end, join_names(names), groupable=not callable_value, names=names)
        if kind == "import_statement":
            return Unit(start, end, None, groupable=True, names=[])
        return None

    def container(self, start: int, end: int, path: str, body, depth: int, is_module: bool) -> Unit:
        unit = Unit(start, end, path)
        if body is None or depth >= self.depth_cap:
            return unit
        if is_module:
            unit.children = self.statements(body.children, path, depth + 1)
        else:
            unit.children = self.members(body.children, path)
        return unit

    def members(self, nodes: list, prefix: str) -> list[Unit]:
        def classify(node, lead):
            kind = node.type
            if kind not in _MEMBERS and kind not in _FIELDS:
                return None
            name = _name(self.src, node) or kind
            unit = Unit(first_line(node), last_line(node), join_path(prefix, name), groupable=kind in _FIELDS)
            unit.deprecations = _deprecations(self.src, lead)
            return unit

        return units_from_siblings(nodes, classify, _is_leading, _is_decorator)


# TypeScript 4.7's variance annotations on type parameters (``interface I<in out C, out R>``) are not in the grammar
# (tree-sitter-typescript 0.23.2, its latest; tree-sitter/tree-sitter-typescript#370, pull requests #361 and #364
# open): a declaration that uses one parses to ERROR and its symbols fell into line windows.  Effect-style code is
# full of them (midnight-js's compact-js: CompiledContract, ContractExecutable).  The grammar reads the source with
# each such modifier blanked to spaces, every byte in its place; the chunks' text keeps it.  The modifier is only
# read where a type parameter can stand: after ``<`` or ``,``, before a name and then ``extends``, ``=``, ``,`` or
# ``>``.  Elsewhere that shape is text of a comment, string or JSX, where spaces change no structure.
_VARIANCE = re.compile(
    rb"(?<=[<,])(\s*(?:const\s+)?)"  # where a type parameter starts, its own `const` kept
    rb"((?:in\s+out|in|out)\s+)"  # the modifier, blanked
    rb"(?=[A-Za-z_$][\w$]*\s*(?:extends\b|=|,|>))"  # the parameter's name, then its constraint, default or end
)


# A type query of a module, ``typeof import("m")``, as a call's type argument is not in the grammar either (vitest's
# ``importOriginal<typeof import("m")>()``, in every mocked test): the parser reads the import as one name as long.
_TYPEOF_IMPORT = re.compile(rb"(?<=\btypeof)(\s+)(import\s*\(\s*(['\"])[^'\"\n]*\3\s*\))")


def grammar_view(src: bytes) -> bytes:
    """``src`` as the grammar can read it: every type parameter's ``in`` / ``out`` / ``in out`` modifier blanked
    (line breaks kept), and every ``typeof import("m")``'s import read as a name of its length."""
    src = _VARIANCE.sub(lambda m: m[1] + re.sub(rb"[^\n]", b" ", m[2]), src)
    return _TYPEOF_IMPORT.sub(lambda m: m[1] + re.sub(rb"[^\n]", b"_", m[2]), src)


def extract_typescript(data: bytes, ctx: FileContext) -> Extraction:
    """Chunks of a ``.ts`` / ``.tsx`` file, one per top-level symbol (see the module docstring)."""
    language = TSX if ctx.path.lower().endswith(".tsx") else TYPESCRIPT
    return extract_code(data, ctx, "typescript", language, _top_level_units, parse_view=grammar_view)


def _top_level_units(src: bytes, root) -> list[Unit]:
    return _Walker(src).statements(root.children, None, 0)
