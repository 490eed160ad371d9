"""What a source's compile checks are (read from the mirror's blobs at the source's commit), and their evidence.

Each ``.compact`` document is checked with the files it imports (their closure, read at the same commit) written
beside it into the scratch tree; each ``compact`` fence of a Markdown page that is a whole program is checked as
one file, and a wrappable fragment inside the wrapping (extractors.compact_program).  A check's key is the hash of
what the compiler sees (file names and bytes), so a text is compiled once per compiler however many passages
show it.  :func:`version_rows` turns a check's result into ``version_targets`` rows of origin ``compiled`` or
``compile_rejected`` (query.target_match ranks them above declarations).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import git
import pyarrow as pa

from trustindex.crawl.git import list_tree, read_blob
from trustindex.extractors.compact_program import checkable_fences, import_paths
from trustindex.schemas.compilers import (
    COMPILER_COMPONENT,
    KIND_FENCE,
    KIND_FILE,
    KIND_WRAPPED,
    LANGUAGE_COMPONENT,
    ORIGIN_COMPILED,
    ORIGIN_REJECTED,
    PASSED,
    REJECTED,
    CompilerIdentity,
)
from trustindex.schemas.versions import ConstraintSet, parse_version

MAX_IMPORTS = 64  # files of one check's import closure
MAX_BYTES = 4 << 20  # bytes of one check
FENCE_FILE = "contract.compact"
_MARKDOWN = (".md", ".mdx")


@dataclass(frozen=True)
class CheckItem:
    doc_id: str
    chunk_ids: tuple[str | None, ...]  # the passages it is evidence for (None: the whole document)
    source: str
    path: str
    kind: str  # schemas.compilers KIND_*
    files: dict[str, bytes]
    main: str
    text_sha256: str


def _key(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return h.hexdigest()


def _closure(path: str, blobs: dict[str, str], repo: git.Repo) -> dict[str, bytes] | None:
    files: dict[str, bytes] = {}
    todo = [path]
    while todo:
        p = todo.pop()
        if p in files or p not in blobs:
            continue
        data = read_blob(repo, blobs[p])
        files[p] = data
        if len(files) > MAX_IMPORTS or sum(map(len, files.values())) > MAX_BYTES:
            return None
        todo.extend(import_paths(p, data.decode("utf-8", "replace")))
    return files


def _chunks_of(chunks: pa.Table) -> dict[str, list[tuple[str, int, int]]]:
    out: dict[str, list[tuple[str, int, int]]] = {}
    cols = [chunks.column(c).to_pylist() for c in ("doc_id", "chunk_id", "start_line", "end_line")]
    for doc, cid, a, b in zip(*cols, strict=True):
        out.setdefault(doc, []).append((cid, a, b))
    return out


def select_checks(repo: git.Repo, commit: str, source: str, tables: dict[str, pa.Table], wrap: bool = True):
    """The checks of one source's ingested documents at ``commit``, and a note per document it had to skip."""
    blobs = {e.path: e.sha for e in list_tree(repo, commit) if not e.invalid and not e.missing}
    by_doc = _chunks_of(tables["chunks"])
    docs = tables["documents"]
    items: list[CheckItem] = []
    skipped: list[str] = []
    for doc_id, path in zip(docs.column("doc_id").to_pylist(), docs.column("path").to_pylist(), strict=True):
        if path.endswith(".compact"):
            files = _closure(path, blobs, repo)
            if files is None:
                skipped.append(f"{path}: more than {MAX_IMPORTS} imports or {MAX_BYTES} bytes")
                continue
            items.append(CheckItem(doc_id, (None,), source, path, KIND_FILE, files, path, _key(files)))
        elif path.endswith(_MARKDOWN) and path in blobs:
            text = read_blob(repo, blobs[path]).decode("utf-8", "replace")
            for first, last, code, wrapped in checkable_fences(text, wrap):
                hit = tuple(c for c, a, b in by_doc.get(doc_id, []) if a <= last and b >= first)
                files = {FENCE_FILE: code.encode("utf-8")}
                kind = KIND_WRAPPED if wrapped else KIND_FENCE
                items.append(CheckItem(doc_id, hit or (None,), source, path, kind, files, FENCE_FILE, _key(files)))
    return items, skipped


def _exact(version: str) -> tuple[str, str]:
    """(intervals, status) of one exact version, as the version_targets rows store it."""
    try:
        return ConstraintSet.exact(parse_version(version)).to_json(), "parsed"
    except ValueError:
        return "", "unparsed"


def version_rows(item: CheckItem, ident: CompilerIdentity, outcome: str, reason: str) -> list[dict]:
    """The evidence one check gives: none unless passed, or rejected as a whole program or file."""
    if outcome not in (PASSED, REJECTED) or (outcome == REJECTED and item.kind == KIND_WRAPPED):
        return []
    wrapped = " (wrapped: pragma and standard-library import added)" if item.kind == KIND_WRAPPED else ""
    if outcome == PASSED:
        origin, detail = ORIGIN_COMPILED, f"compiles with {ident.key}{wrapped}"
    else:
        origin, detail = ORIGIN_REJECTED, f"rejected by {ident.key}: {reason}"
    rows = []
    for component, version in (
        (LANGUAGE_COMPONENT, ident.language_version),
        (COMPILER_COMPONENT, ident.compiler_version),
    ):
        intervals, status = _exact(version)
        for chunk_id in item.chunk_ids:
            rows.append(
                {
                    "doc_id": item.doc_id,
                    "chunk_id": chunk_id,
                    "component": component,
                    "constraint": version,
                    "intervals": intervals,
                    "origin": origin,
                    "status": status,
                    "detail": detail,
                }
            )
    return rows
