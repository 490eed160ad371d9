"""The compile step of a refresh: every source's checkable Compact code against every configured compiler.

Runs after the sources are ingested and before the snapshot is built.  Compilers come from ``compilers.toml``
(schemas.compilers): an installed ``compactc`` by path, or a release tag of a registered source built with Chez
Scheme (crawl.compactc_build).  Each check is looked up in the compile cache (warehouse.compile_cache) by text
hash and compiler identity and compiled only when missing, in the sandbox of ingest.compile_runner.  A compiler
that cannot be built or identified is reported and left out; a check that hangs, crashes or hits a limit is a
recorded outcome.  Neither fails the refresh.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from trustindex.crawl.compactc_build import (
    BuildError,
    build_compactc,
    build_dir_of,
    chez_version,
    compiler_argv,
    scheme_executable,
)
from trustindex.crawl.git import SourceError, ensure_mirror, mirror_path, open_mirror
from trustindex.ingest.compile_checks import CheckItem, select_checks, version_rows
from trustindex.ingest.compile_runner import CompilerUnusable, Limits, compile_text, identify
from trustindex.schemas.compilers import OUTCOMES, CompilerIdentity, CompilerSpec
from trustindex.schemas.config import Source
from trustindex.schemas.tables import table_from_rows


@dataclass(frozen=True)
class Compiler:
    label: str  # as compilers.toml names it
    argv: tuple[str, ...]
    identity: CompilerIdentity


@dataclass
class CompileReport:
    compiled: int = 0  # checks run now (the rest came from the cache)
    cached: int = 0
    seconds: float = 0.0  # compile seconds of the checks run now
    counts: dict = field(default_factory=dict)  # "source|compiler|kind" -> {outcome: n}
    notes: list[str] = field(default_factory=list)
    digest: str = ""

    def as_dict(self) -> dict:
        return {
            "compiled": self.compiled,
            "cached": self.cached,
            "seconds": round(self.seconds, 3),
            "counts": self.counts,
            "notes": self.notes,
        }


def scratch_dir(data_dir: Path) -> Path:
    return Path(data_dir) / "tmp" / "compile"


def is_built(spec: CompilerSpec, data_dir: Path) -> bool:
    """Whether a tag's build is in the cache (an installed compiler by path always is)."""
    if spec.path:
        return True
    exe = scheme_executable()
    return exe is not None and (build_dir_of(data_dir, spec.tag, chez_version(exe)) / "obj" / "compactc").is_file()


def resolve_compiler(spec: CompilerSpec, sources: dict[str, Source], data_dir: Path, fetch: bool = True) -> Compiler:
    """The runnable compiler of one spec (built now when its tag is not cached); BuildError / CompilerUnusable."""
    if spec.path:
        argv: list[str] = [spec.path]
    else:
        scheme = scheme_executable()
        if scheme is None:
            raise BuildError(f"{spec.label}: Chez Scheme is not installed (apt-get install chezscheme)")
        source = sources.get(spec.source)
        if source is None:
            raise BuildError(f"{spec.label}: no source {spec.source!r}")
        dest = mirror_path(Path(data_dir), source.name)
        try:
            repo = (
                ensure_mirror(source.url, dest, source.blob_limit) if fetch or not dest.exists() else open_mirror(dest)
            )
        except SourceError as e:
            raise BuildError(f"{spec.label}: {e}") from None
        program = build_compactc(repo, spec.tag, Path(spec.nanopass), Path(spec.rough_draft), Path(data_dir))
        argv = compiler_argv(program, scheme)
    return Compiler(spec.label, tuple(argv), identify(argv, scratch_dir(data_dir)))


def resolve_compilers(specs, sources: dict[str, Source], data_dir: Path, fetch: bool = True):
    """Every usable compiler (one per identity, in the file's order) and a line per one left out."""
    out: list[Compiler] = []
    notes: list[str] = []
    for spec in specs:
        try:
            c = resolve_compiler(spec, sources, data_dir, fetch)
        except (BuildError, CompilerUnusable, OSError) as e:
            notes.append(f"compiler {spec.label} left out: {e}")
            continue
        if any(o.identity == c.identity for o in out):
            notes.append(f"compiler {spec.label} reports {c.identity.key}, as an earlier one: left out")
            continue
        out.append(c)
    return out, notes


def check_one(item: CheckItem, c: Compiler, cache, limits: Limits, data_dir: Path, report: CompileReport) -> dict:
    ident = c.identity
    hit = cache.get(item.text_sha256, ident.compiler_version, ident.language_version)
    if hit is not None:
        report.cached += 1
        return hit
    r = compile_text(list(c.argv), item.files, item.main, limits, scratch_dir(data_dir))
    row = {
        "text_sha256": item.text_sha256,
        "compiler_version": ident.compiler_version,
        "language_version": ident.language_version,
        "outcome": r.outcome,
        "reason": r.reason,
        "seconds": r.seconds,
    }
    cache.put(row)
    report.compiled += 1
    report.seconds += r.seconds
    return row


def compile_sources(
    per_source: dict,
    source_rows: list[dict],
    data_dir: Path,
    compilers: list[Compiler],
    cache,
    limits: Limits | None = None,
    wrap: bool = True,
) -> tuple[dict, CompileReport]:
    """``per_source`` with each source's compile_checks table and its compile evidence added to version_targets."""
    limits = limits or Limits()
    report = CompileReport()
    commits = {r["source"]: r["commit"] for r in source_rows if r.get("commit")}
    out = dict(per_source)
    digest = hashlib.sha256()
    for name in sorted(per_source):
        tables = per_source[name]
        try:
            repo = open_mirror(mirror_path(Path(data_dir), name))
            items, skipped = select_checks(repo, commits[name], name, tables, wrap)
        except (SourceError, KeyError, OSError) as e:
            report.notes.append(f"source {name}: no compile checks ({e})")
            continue
        report.notes.extend(f"source {name}: {s}" for s in skipped)
        checks, evidence = [], []
        for item in items:
            for c in compilers:
                row = check_one(item, c, cache, limits, data_dir, report)
                counts = report.counts.setdefault(f"{name}|{c.identity.short}|{item.kind}", Counter())
                counts[row["outcome"]] += 1
                digest.update(json.dumps([item.text_sha256, c.identity.key, row["outcome"], row["reason"]]).encode())
                evidence.extend(version_rows(item, c.identity, row["outcome"], row["reason"]))
                base = {
                    k: row[k]
                    for k in ("text_sha256", "compiler_version", "language_version", "outcome", "reason", "seconds")
                }
                for chunk_id in item.chunk_ids:
                    checks.append(
                        {
                            "doc_id": item.doc_id,
                            "chunk_id": chunk_id,
                            "source": name,
                            "path": item.path,
                            "kind": item.kind,
                            **base,
                        }
                    )
        vt = tables["version_targets"]
        added = table_from_rows("version_targets", evidence)
        out[name] = {
            **tables,
            "version_targets": pa.concat_tables([vt, added]) if evidence else vt,
            "compile_checks": table_from_rows("compile_checks", checks),
        }
    cache.save()
    report.counts = {k: {o: v[o] for o in OUTCOMES if v[o]} for k, v in report.counts.items()}
    report.digest = digest.hexdigest()[:24] if compilers else ""
    return out, report
