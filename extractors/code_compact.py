"""Chunk Compact (Midnight smart-contract language) source by top-level declaration.

Grammar: tree-sitter-compact 0.3.0 (node types read from ``tree_sitter_compact.language()``):
``pragma``, ``idecl`` (import), ``incld`` (include), ``xdecl`` (``export { ... }``), ``ldecl``
(ledger field), ``wdecl`` (witness), ``type_alias_declaration`` (``new type``), ``cdefn`` (circuit),
``lconstructor``, ``struct``, ``enumdef``, ``ecdecl`` (``contract`` declaration), ``mdefn``
(``module``), ``comment``.

Symbol paths: a circuit / witness / ledger field / struct / enum / contract / type alias is its
name (``increment``, ``round``, ``State``); the constructor is ``constructor``; a member of
``module M { ... }`` is ``M.name`` (nested modules ``A.B.name``).  Code outside declarations has
symbol path ``None`` (``M`` inside a module).

Grouping: pragmas, imports, includes, export lists, ledger fields, witnesses and type aliases are
small; consecutive ones merge into one chunk of up to ``ctx.target_tokens`` (path: the names
joined with ``", "``).  Circuits, constructors, structs, enums, contracts and modules are chunks of
their own; a module over ``ctx.max_tokens`` is split into its members.  Comments directly above
a declaration (``//`` or ``/* */``, no blank line between) belong to its chunk.  Chunking rules
shared with the other languages are in ``extractors.code_common``.
"""

from __future__ import annotations

import tree_sitter_compact
from tree_sitter import Language

from trustindex.extractors.base import Extraction, FileContext
from trustindex.extractors.code_common import (
    Unit,
    extract_code,
    first_line,
    join_path,
    last_line,
    node_text,
    units_from_siblings,
)

LANGUAGE = Language(tree_sitter_compact.language())

_GROUPABLE = {
    "pragma",
    "idecl",
    "incld",
    "xdecl",
    "ldecl",
    "wdecl",
    "type_alias_declaration",
    "contract_implements_declaration",
}
_STANDALONE = {"cdefn", "lconstructor", "struct", "enumdef", "ecdecl", "mdefn"}
# The field holding each declaration's name (node-types of tree-sitter-compact 0.3.0).
_NAME_FIELD = {
    "cdefn": "id",
    "wdecl": "id",
    "ldecl": "name",
    "struct": "name",
    "enumdef": "name",
    "ecdecl": "name",
    "mdefn": "name",
    "type_alias_declaration": "name",
}


def _name(src: bytes, node) -> str | None:
    if node.type == "lconstructor":
        return "constructor"
    fld = _NAME_FIELD.get(node.type)
    child = node.child_by_field_name(fld) if fld else None
    return node_text(src, child) if child is not None else None


def _is_comment(node) -> bool:
    return node.type == "comment"


def _units(src: bytes, nodes: list, prefix: str | None, depth: int) -> list[Unit]:
    def classify(node, _lead) -> Unit | None:
        kind = node.type
        if kind not in _GROUPABLE and kind not in _STANDALONE:
            return None  # ERROR regions and anything unknown stay gap code
        name = _name(src, node)
        path = join_path(prefix, name) if name else None
        unit = Unit(first_line(node), last_line(node), path, groupable=kind in _GROUPABLE)
        if kind == "mdefn" and depth < 8 and path:
            members = [c for c in node.named_children if c.type not in ("module_name", "gparams")]
            unit.children = _units(src, members, path, depth + 1)
        return unit

    return units_from_siblings(nodes, classify, _is_comment)


def extract_compact(data: bytes, ctx: FileContext) -> Extraction:
    """Chunks of a ``.compact`` file, one per top-level declaration (see the module docstring)."""
    return extract_code(data, ctx, "compact", LANGUAGE, _top_level_units)


def _top_level_units(src: bytes, root) -> list[Unit]:
    return _units(src, root.children, None, 0)
