"""String-keyed reads in the search library and its transports (issue 39 item 1): a hit's parts are typed, so code
reads their attributes, not ``part["key"]`` or ``part.get("key")``.

A read is string-keyed when it subscripts (or calls ``.get`` on) something with a string literal, read with ``ast``
over query/ and serve/.  It reads a hit part when its key is one of the hit's vocabulary: a JSON key of the typed
hit (schemas/hit_parts.py, schemas/hit_factors.py, query/response.py ``Hit`` and ``SearchResponse``) or a column of
the documents and attribution tables a hit is shown from (schemas/tables.py).  The key set is derived from the
types, so it over-counts a little (``scope["path"]`` is an ASGI scope's path, not a provenance's); the bound below
is a ratchet: it may only come down.  ``python -m tests.project.test_keyed_reads`` lists every read.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import sys
from collections import Counter
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[2]
ROOMS = ("query", "serve")
MAX_HIT_PART_READS = 48  # the count at the last change (issue 39 item 1); lower it when reads go, never raise it


class Read(NamedTuple):
    path: str
    line: int
    key: str


def keyed_reads() -> list[Read]:
    """Every ``x["key"]`` (a load) and ``x.get("key", ...)`` in query/ and serve/."""
    out = []
    for room in ROOMS:
        for path in sorted((ROOT / room).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                key = _key(node)
                if key is not None:
                    out.append(Read(rel, node.lineno, key))
    return sorted(out)


def _key(node: ast.AST) -> str | None:
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        k = node.slice
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
        k = node.args[0]
    else:
        return None
    return k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None


def hit_vocabulary() -> frozenset[str]:
    """The JSON keys of a hit's typed parts and the columns of the rows it is shown from."""
    from trustindex.query import response
    from trustindex.schemas import hit_factors, hit_parts
    from trustindex.schemas.shape import ABSENT_FIELD
    from trustindex.schemas.tables import ATTRIBUTION, DOCUMENTS

    types = [c for m in (hit_parts, hit_factors) for _, c in inspect.getmembers(m, dataclasses.is_dataclass)]
    types += [response.Hit, response.SearchResponse]
    keys = {f.name for t in types for f in dataclasses.fields(t) if f.name != ABSENT_FIELD}
    return frozenset(keys | set(DOCUMENTS.names) | set(ATTRIBUTION.names))


def hit_part_reads() -> list[Read]:
    words = hit_vocabulary()
    return [r for r in keyed_reads() if r.key in words]


def test_hit_part_reads_only_go_down():
    reads = hit_part_reads()
    by_file = Counter(r.path for r in reads).most_common()
    assert len(reads) <= MAX_HIT_PART_READS, (
        f"{len(reads)} string-keyed reads of hit parts (bound {MAX_HIT_PART_READS}): {by_file}"
    )


def test_the_counter_sees_both_forms():
    tree = ast.parse('a["publisher"]; b.get("tier", None); c["x"] = 1; d[k]')
    assert [_key(n) for n in ast.walk(tree) if _key(n)] == ["publisher", "tier"]


if __name__ == "__main__":
    words = hit_vocabulary()
    everything = keyed_reads()
    for r in everything:
        print(f"{r.path}:{r.line}: {r.key}{'  (hit part)' if r.key in words else ''}")
    n_hit = sum(r.key in words for r in everything)
    print(f"string-keyed reads in {', '.join(ROOMS)}: {len(everything)}; of hit parts: {n_hit}", file=sys.stderr)
