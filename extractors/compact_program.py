"""Which Compact code can be handed to the compiler, and how: whole programs, imports, the fragment wrapping.

A docs fence is a *whole program* when it carries a ``pragma language_version`` (the docs write one at the top of
every complete contract; a fragment never has one).  A *fragment* whose top level is nothing but declarations
(ledger fields, circuits, witnesses, types, structs, enums, modules) can be checked inside the documented
wrapping: ``pragma language_version >= 0.16;`` and ``import CompactStandardLibrary;`` before it.  Such a check
says it was wrapped, and only its passes count as evidence: a wrapped fragment that fails may only lack the
declarations of the page's other fences (docs/benchmarks.md has what the wrapping added on the real docs).

A ``.compact`` file's imports (``import "path" ...;``, ``include "path";``) are relative to its folder, with
``.compact`` added when missing; :func:`import_paths` lists them so the crawl can write them beside it.
"""

from __future__ import annotations

import posixpath
import re

import tree_sitter_compact
from tree_sitter import Language, Parser

from trustindex.extractors.docs_fences import COMPACT_TAGS, fences

WRAP_HEADER = "pragma language_version >= 0.16;\nimport CompactStandardLibrary;\n"
_LANGUAGE = Language(tree_sitter_compact.language())
_LANGUAGE_PRAGMA = re.compile(r"^\s*pragma\s+language_version\b", re.M)
# import "p"; import "p" prefix P_; import { a as b } from "p"; include 'p'; import M; (a module of file M.compact)
_IMPORT = re.compile(
    r"""^\s*(?:export\s+)?(?:import|include)\s+(?:\{[^}]{0,2000}\}\s*from\s+)?(?:["']([^"'\n]{1,300})["']|([A-Za-z_$][\w$]*)\s*[;p])""",
    re.M,
)
_DECLARATIONS = {"ldecl", "cdefn", "wdecl", "struct", "enumdef", "type_alias_declaration", "mdefn", "lconstructor"}
_ALLOWED_TOP = _DECLARATIONS | {"comment", "idecl", "xdecl"}


def is_whole_program(code: str) -> bool:
    return bool(_LANGUAGE_PRAGMA.search(code))


def wrappable(code: str) -> bool:
    """A fragment made of top-level declarations only (at least one), parsing without syntax errors."""
    if is_whole_program(code) or "CompactStandardLibrary" in code:
        return False
    root = Parser(_LANGUAGE).parse(code.encode("utf-8", "replace")).root_node
    if root.has_error:
        return False
    kinds = [c.type for c in root.children]
    return any(k in _DECLARATIONS for k in kinds) and all(k in _ALLOWED_TOP for k in kinds)


def wrap_fragment(code: str) -> str:
    return WRAP_HEADER + code


def import_paths(path: str, code: str) -> list[str]:
    """The repository paths a ``.compact`` file at ``path`` imports or includes (relative ones only)."""
    out = []
    folder = posixpath.dirname(path)
    for m in _IMPORT.finditer(code):
        rel = m[1] or m[2]
        if rel == "CompactStandardLibrary":
            continue
        if rel.startswith("/") or "\\" in rel:
            continue
        target = posixpath.normpath(posixpath.join(folder, rel))
        if target.startswith("../") or target == "..":
            continue  # outside the repository
        out.append(target if target.endswith(".compact") else target + ".compact")
    return out


def checkable_fences(text: str, wrap: bool = True) -> list[tuple[int, int, str, bool]]:
    """(first line, last line, program text, wrapped) of each ``compact`` fence of a Markdown text that is a whole
    program, or (``wrap``) a wrappable fragment inside the wrapping."""
    out = []
    for f in fences(text):
        if f.tag not in COMPACT_TAGS or not f.code.strip():
            continue
        if is_whole_program(f.code):
            out.append((f.first_line, f.last_line, f.code, False))
        elif wrap and wrappable(f.code):
            out.append((f.first_line, f.last_line, wrap_fragment(f.code), True))
    return out
