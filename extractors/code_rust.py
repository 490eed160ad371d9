"""Chunk Rust source by item, with doc comments, attributes and ``#[deprecated]``.

Grammar: tree-sitter-rust 0.24.2.

Symbol paths use Rust's own ``::`` syntax, prefixed with the file's module path:
* the file's module path comes from ``ctx.path``: the part after the last ``src/`` directory,
  ``.rs`` dropped, ``lib.rs`` / ``main.rs`` / ``mod.rs`` naming their directory's module
  (``src/lib.rs`` -> crate root, no prefix; ``ledger/src/state/mod.rs`` -> ``state``;
  ``src/state/ledger.rs`` -> ``state::ledger``).  Outside ``src/`` (``tests/``, ``examples/``,
  ``build.rs``) the file stem is the module (``main.rs`` / ``mod.rs``: the directory name);
* ``fn``, ``struct``, ``enum``, ``union``, ``trait``, ``const``, ``static``, ``type``, ``mod``
  -> the name (``prefix::Point``); ``macro_rules! m`` and item-level macro calls ``m! { ... }``
  -> ``m!``;
* ``impl Point`` -> ``Point`` and its items ``Point::new``; ``impl Display for Point`` ->
  ``<Point as Display>`` and ``<Point as Display>::fmt`` (the qualified-path form Rust itself uses,
  so two trait impls of one type stay distinct); generic arguments are dropped
  (``impl<T> Wrapper<T>`` -> ``Wrapper``); with a module prefix: ``<state::Point as Display>::fmt``;
* ``trait T`` items -> ``T::method``; inline ``mod m { ... }`` items -> ``m::item``.
An ``impl`` / ``trait`` / inline ``mod`` is one chunk unless it exceeds ``ctx.max_tokens`` or holds
a deprecated item; then each item is a chunk.  ``use``, ``extern crate``, ``const``, ``static``,
``type`` and ``mod m;`` are groupable.  Gap code (``//!`` inner docs, ``#![...]``, stray
statements) has the module path as symbol path (``None`` at the crate root).

Outer doc comments (``///``, ``/** */``), plain comments directly above an item and its attributes
(``#[...]``, even across blank lines) are part of its chunk.  ``#[deprecated]``,
``#[deprecated = "why"]`` and ``#[deprecated(since = "1.2", note = "why")]`` (the Rust Reference,
"The deprecated attribute") mark every chunk of the item ``Deprecation(marker="rust_attribute")``
with the note as reason (``"deprecated since 1.2"`` or ``"deprecated"`` without one).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import tree_sitter_rust
from tree_sitter import Language

from trustindex.extractors.base import Extraction, FileContext
from trustindex.extractors.code_common import (
    MAX_CONTAINER_DEPTH,
    Unit,
    extract_code,
    first_line,
    join_path,
    last_line,
    node_text,
    units_from_siblings,
)

LANGUAGE = Language(tree_sitter_rust.language())

_NAMED = {"function_item", "function_signature_item", "struct_item", "enum_item", "union_item"}
_GROUPABLE_NAMED = {"const_item", "static_item", "type_item", "associated_type"}
_GROUPABLE = {"use_declaration", "extern_crate_declaration"}
_COMMENTS = {"line_comment", "block_comment"}
_STRING = r'"((?:[^"\\]|\\.)*)"'
_DEPRECATED = re.compile(r"^#\s*\[\s*deprecated\b(.*)\]\s*$", re.S)


def module_path(path: str) -> str | None:
    """Module path of a Rust file from its repository path (rules in the module docstring)."""
    parts = list(PurePosixPath(path).parts)
    if not parts:
        return None
    if "src" in parts[:-1]:
        cut = len(parts) - 1 - parts[::-1].index("src")
        mods = parts[cut + 1 :]
    else:
        mods = parts[-2:] if len(parts) >= 2 else parts
        mods = mods if PurePosixPath(mods[-1]).stem in ("main", "mod", "lib") else mods[-1:]
    mods[-1] = PurePosixPath(mods[-1]).stem
    if mods[-1] in ("lib", "main", "mod"):
        mods = mods[:-1]
    return "::".join(mods) or None


def deprecation_reason(attribute: str) -> str | None:
    """Reason of a ``#[deprecated...]`` attribute's source text, or None for other attributes."""
    match = _DEPRECATED.match(attribute.strip())
    if match is None:
        return None
    args = match.group(1).strip()
    note = re.search(r"\bnote\s*=\s*" + _STRING, args)
    if note:
        return note.group(1)
    bare = re.match(r"=\s*" + _STRING, args)
    if bare:
        return bare.group(1)
    since = re.search(r"\bsince\s*=\s*" + _STRING, args)
    return f"deprecated since {since.group(1)}" if since else "deprecated"


def _is_leading(node) -> bool:
    if node.type == "attribute_item":
        return True
    if node.type in _COMMENTS:  # inner docs (//!, /*!) describe the module, not the next item
        return node.child_by_field_name("inner") is None
    return False


def _is_attribute(node) -> bool:
    return node.type == "attribute_item"


def _type_name(src: bytes, node) -> str:
    """Type text without generic arguments: ``Wrapper<T>`` -> ``Wrapper``, ``&'a X`` -> ``X``."""
    while node is not None and node.type in ("generic_type", "reference_type", "pointer_type"):
        node = node.child_by_field_name("type")
    if node is None:
        return "?"
    return re.sub(r"\s+", " ", node_text(src, node))


class _Walker:
    def __init__(self, src: bytes):
        self.src = src

    def items(self, nodes: list, prefix: str | None, depth: int) -> list[Unit]:
        def classify(node, lead):
            unit = self.item(node, prefix, depth)
            if unit is not None:
                unit.deprecations = [
                    ("rust_attribute", r)
                    for r in (deprecation_reason(node_text(self.src, n)) for n in lead if n.type == "attribute_item")
                    if r
                ]
            return unit

        return units_from_siblings(nodes, classify, _is_leading, _is_attribute)

    def item(self, node, prefix: str | None, depth: int) -> Unit | None:
        kind, start, end = node.type, first_line(node), last_line(node)
        name_node = node.child_by_field_name("name")
        name = node_text(self.src, name_node) if name_node is not None else None
        if kind in _NAMED and name:
            return Unit(start, end, join_path(prefix, name, "::"))
        if kind in _GROUPABLE_NAMED:
            return Unit(start, end, join_path(prefix, name, "::") if name else prefix, groupable=True)
        if kind in _GROUPABLE:
            return Unit(start, end, None, groupable=True, names=[])
        if kind == "macro_definition" and name:
            return Unit(start, end, join_path(prefix, name + "!", "::"))
        if kind in ("expression_statement", "macro_invocation"):
            call = node
            if kind == "expression_statement":
                call = node.named_children[0] if node.named_child_count == 1 else None
            if call is None or call.type != "macro_invocation":
                return None  # other statements at item level: gap code
            macro = call.child_by_field_name("macro")
            if macro is None:
                return None
            return Unit(start, end, join_path(prefix, node_text(self.src, macro) + "!", "::"))
        if kind == "mod_item" and name:
            path = join_path(prefix, name, "::")
            body = node.child_by_field_name("body")
            if body is None:  # `mod foo;`
                return Unit(start, end, path, groupable=True)
            return self.container(start, end, path, body, path, depth)
        if kind == "trait_item" and name:
            path = join_path(prefix, name, "::")
            return self.container(start, end, path, node.child_by_field_name("body"), path, depth)
        if kind == "impl_item":
            own = _type_name(self.src, node.child_by_field_name("type"))
            own = join_path(prefix, own, "::")
            trait = node.child_by_field_name("trait")
            path = f"<{own} as {_type_name(self.src, trait)}>" if trait is not None else own
            return self.container(start, end, path, node.child_by_field_name("body"), path, depth)
        if kind == "foreign_mod_item":
            return Unit(start, end, prefix)
        return None

    def container(self, start: int, end: int, path: str, body, child_prefix: str, depth: int) -> Unit:
        unit = Unit(start, end, path)
        if body is not None and depth < MAX_CONTAINER_DEPTH:
            unit.children = self.items(body.children, child_prefix, depth + 1)
        return unit


def extract_rust(data: bytes, ctx: FileContext) -> Extraction:
    """Chunks of a ``.rs`` file, one per item (see the module docstring)."""
    prefix = module_path(ctx.path)

    def units_of(src: bytes, root) -> list[Unit]:
        return _Walker(src).items(root.children, prefix, 0)

    return extract_code(data, ctx, "rust", LANGUAGE, units_of, gap_path=prefix)
