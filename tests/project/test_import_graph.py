"""The import graph between trustindex modules, read from the source with ``ast`` (nothing is imported).

It fails on any import cycle and on any import a stage's layer does not allow (``MAY_IMPORT``). Imports inside
functions count: a lazy import is still a dependency, it only moves the failure to run time.
docs/architecture.md draws the same graph.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

from trustindex.layout import checkout_rooms

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "trustindex"
STAGES = tuple(checkout_rooms(ROOT))  # the rooms pyproject.toml's package-dir maps (trustindex/layout.py)

# What each room may import besides itself. Every arrow points down the build's layers; nothing imports cli.
MAY_IMPORT: dict[str, set[str]] = {
    "schemas": set(),  # the contract both sides share: no other room
    "runtime": set(),  # progress, durable writes, freed memory: used by every build room, uses none
    "query": {"schemas"},  # serving reads snapshots through the contract only, never the build side
    "extractors": {"schemas"},  # pure functions of one file's text
    "crawl": {"schemas", "extractors"},  # signatures checks the ledger's rows with extractors.verification
    "ingest": {"schemas", "crawl", "extractors", "runtime"},
    # encoder -> query: passages are embedded (and each ONNX export verified) by query.onnx_encoder, the same
    # encoder that embeds queries, so the two sides cannot drift.
    "encoder": {"schemas", "query", "runtime"},
    # warehouse -> query: the HNSW file is written by query.dense, which reads it.
    "warehouse": {"schemas", "query", "encoder", "runtime"},
    # calibration -> query: the fit runs the real search over judged queries (scikit-learn: the [build] extra)
    "calibration": {"schemas", "query"},
    "report": {"schemas", "warehouse", "calibration"},  # the HTML report reads the catalog
    # flows -> query: the source tasks run at once default to the cores the encoder runs on; flows -> report: a
    # refresh writes the run's HTML report beside its snapshot
    "flows": {"schemas", "crawl", "ingest", "warehouse", "encoder", "query", "runtime", "report"},
    # serve: the transports (HTTP, MCP, workers, metrics) over the search library, never the build side
    "serve": {"schemas", "query"},
    # the command line runs every room
    "cli": {"schemas", "query", "serve", "ingest", "warehouse", "encoder", "flows", "calibration", "report", "runtime"},
}

Graph = Mapping[str, Mapping[str, int]]  # module -> {imported module: line of its first import}


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the stage folders, by the name it is installed under (trustindex.<stage>...)."""
    out = {}
    for stage in STAGES:
        for path in sorted((root / stage).rglob("*.py")):  # a room's folder is named as the room (test_layout)
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join((PACKAGE, *parts))] = path
    return out


def imports_of(name: str, path: Path, known: set[str]) -> dict[str, int]:
    """The trustindex modules ``name`` imports (absolute or relative, at any depth of the file)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            # `from pkg import x` imports the module pkg.x when there is one, else a name of pkg
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # `import trustindex.query.index.Index`-like: the module holding it
                target = target.rpartition(".")[0]
            if target and target != name:
                found.setdefault(target, node.lineno)
    return found


def import_graph(root: Path = ROOT) -> dict[str, dict[str, int]]:
    files = module_files(root)
    known = set(files)
    return {name: imports_of(name, path, known) for name, path in files.items()}


def cycles(graph: Graph) -> list[list[str]]:
    """One cycle (first module repeated at the end) for every strongly connected group of modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm; the graph is a few hundred modules deep at most
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1 or v in graph.get(v, {}):
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_cycle_through(graph, group) for group in sorted(groups)]


def _cycle_through(graph: Graph, group: list[str]) -> list[str]:
    """A shortest path from the group's first module back to itself, inside the group."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, {})):
                if w == start:
                    return paths[v] + [start]
                if w in members and w not in paths:
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"{group} is not strongly connected")


def stage_of(module: str) -> str:
    return module.split(".")[1]


def upward_imports(graph: Graph, may_import: Mapping[str, set[str]] = MAY_IMPORT) -> list[str]:
    found = []
    for module, targets in sorted(graph.items()):
        stage = stage_of(module)
        for target, line in sorted(targets.items()):
            other = stage_of(target)
            if other != stage and other not in may_import[stage]:
                allowed = ", ".join(sorted(may_import[stage])) or "no other stage"
                found.append(f"{module} (line {line}) imports {target}: {stage}/ may import {allowed}")
    return found


# ------------------------------------------------------------------------------------------------ the checks


def test_the_reader_sees_the_real_graph():
    graph = import_graph()
    assert set(STAGES) == {stage_of(m) for m in graph} == set(MAY_IMPORT)
    assert "trustindex.query.query_encoder" in graph["trustindex.query.state"]  # a top-level import
    assert "trustindex.query.index" in graph["trustindex.query"]  # an import inside a function
    assert "trustindex.encoder.onnx_export" in graph["trustindex.encoder.onnx_embedder"]


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_no_upward_imports():
    found = upward_imports(import_graph())
    assert not found, (
        "imports the layering does not allow (if one is right, add it to MAY_IMPORT with the reason):\n"
        + "\n".join(found)
    )


def test_the_checks_fail_on_a_cycle_and_an_upward_import(tmp_path):
    a, b, c, d = (f"trustindex.query.{x}" for x in "abcd")
    graph = {a: {b: 1}, b: {c: 1}, c: {a: 1, d: 2}, d: {"trustindex.warehouse.build": 7}}
    assert cycles(graph) == [[a, b, c, a]]
    assert cycles({a: {a: 1}}) == [[a, a]]
    assert cycles({a: {b: 1}, b: {}}) == []
    assert upward_imports(graph) == [
        f"{d} (line 7) imports trustindex.warehouse.build: query/ may import schemas",
    ]
    # The reader follows relative imports and imports inside functions in files it has never seen.
    for stage in STAGES:
        (tmp_path / stage).mkdir()
        (tmp_path / stage / "__init__.py").write_text("")
    (tmp_path / "query" / "a.py").write_text("from . import b\n")
    (tmp_path / "query" / "b.py").write_text("def f():\n    from trustindex.warehouse.build import x\n")
    (tmp_path / "warehouse" / "build.py").write_text("from ..query.a import thing\n")
    files = import_graph(tmp_path)
    assert files["trustindex.query.a"] == {"trustindex.query.b": 1}
    assert files["trustindex.query.b"] == {"trustindex.warehouse.build": 2}
    assert cycles(files) == [
        ["trustindex.query.a", "trustindex.query.b", "trustindex.warehouse.build", "trustindex.query.a"]
    ]
