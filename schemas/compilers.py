"""Compilers as operator configuration: ``compilers.toml`` and the vocabulary of a compile check.

``compilers.toml`` (optional, beside ``sources.toml``, or named with ``--compilers``) lists ``[[compiler]]``
tables, each one of::

    [[compiler]]
    path = "/opt/compact/bin/compactc"      # an installed compactc (what the official installer gives)

    [[compiler]]
    source = "compact"                      # a source of sources.toml: the compiler's own repository
    tag = "compactc-v0.31.1"                # a release tag of it, built with Chez Scheme (crawl.compactc_build)
    nanopass = "toolchains/nanopass-f3100ced.tar.gz"       # the two pinned Scheme dependencies (tarball or
    rough_draft = "toolchains/rough-draft-6a5e64aa.tar.gz" # folder); relative paths: to this file

A compiler's identity is the version pair it reports (``--version``, ``--language-version``), never the name the
operator gave it: two entries that report the same pair are one compiler, and the compile cache keys on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trustindex.schemas.errors import ConfigError
from trustindex.schemas.toml_file import read_table_array

FILE_NAME = "compilers.toml"

# What a compile check comes to.  passed: exit 0 and a contract-info.json; rejected: the compiler refused the
# program with a message; timeout / limit: stopped by the sandbox (wall clock; memory, file size or output);
# crashed: any other end (a signal, no message).  Only passed and rejected are version evidence.
PASSED, REJECTED, TIMEOUT, LIMIT, CRASHED = "passed", "rejected", "timeout", "limit", "crashed"
OUTCOMES = (PASSED, REJECTED, TIMEOUT, LIMIT, CRASHED)

# The version_targets origins compile evidence is stored under (query.target_match ranks them above declarations).
ORIGIN_COMPILED, ORIGIN_REJECTED = "compiled", "compile_rejected"
COMPILE_ORIGINS = (ORIGIN_COMPILED, ORIGIN_REJECTED)
LANGUAGE_COMPONENT, COMPILER_COMPONENT = "compact-language", "compact-compiler"

# What was compiled: a .compact file (with its imports), a whole-program docs fence, or a fragment fence inside
# the documented wrapping (extractors.compact_program.wrap_fragment).
KIND_FILE, KIND_FENCE, KIND_WRAPPED = "file", "fence", "wrapped_fence"


@dataclass(frozen=True)
class CompilerIdentity:
    compiler_version: str
    language_version: str

    @property
    def key(self) -> str:
        return f"compactc {self.compiler_version} (language {self.language_version})"

    @property
    def short(self) -> str:
        return f"compactc {self.compiler_version}"


@dataclass(frozen=True)
class CompilerSpec:
    """One ``[[compiler]]`` table: ``path`` xor (``source``, ``tag``, ``nanopass``, ``rough_draft``)."""

    path: str = ""
    source: str = ""
    tag: str = ""
    nanopass: str = ""
    rough_draft: str = ""

    @property
    def label(self) -> str:
        return self.path or f"{self.source}@{self.tag}"


_KNOWN = {"path", "source", "tag", "nanopass", "rough_draft"}


def _resolve(file: Path, value: str) -> str:
    p = Path(value).expanduser()
    return str(p if p.is_absolute() else (file.parent / p).resolve())


def _spec(file: Path, key: str, t: dict, source_names: set[str] | None) -> CompilerSpec:
    if not isinstance(t, dict):
        raise ConfigError(str(file), key, "expected a [[compiler]] table")
    for k, v in t.items():
        if k not in _KNOWN:
            raise ConfigError(str(file), f"{key}.{k}", f"unknown key (known: {', '.join(sorted(_KNOWN))})")
        if not isinstance(v, str) or not v.strip():
            raise ConfigError(str(file), f"{key}.{k}", f"expected a non-empty str, got {v!r}")
    if "path" in t:
        if set(t) != {"path"}:
            raise ConfigError(str(file), key, "a compiler is either path = ... or source + tag, not both")
        return CompilerSpec(path=_resolve(file, t["path"]))
    missing = [k for k in ("source", "tag", "nanopass", "rough_draft") if k not in t]
    if missing:
        raise ConfigError(str(file), f"{key}.{missing[0]}", "missing required key (or give path = ...)")
    if source_names is not None and t["source"] not in source_names:
        raise ConfigError(str(file), f"{key}.source", f"source {t['source']!r} is not in sources.toml")
    return CompilerSpec(
        source=t["source"],
        tag=t["tag"],
        nanopass=_resolve(file, t["nanopass"]),
        rough_draft=_resolve(file, t["rough_draft"]),
    )


def load_compilers(path: str | Path | None, source_names: set[str] | None = None) -> list[CompilerSpec]:
    """The compilers of a ``compilers.toml``; none when ``path`` is None or (found beside sources) absent."""
    if path is None:
        return []
    file = Path(path)
    if not file.is_file():
        raise ConfigError(str(file), None, "compilers file not found")
    raw = read_table_array(file, "compiler")
    specs = [_spec(file, f"compiler[{i}]", t, source_names) for i, t in enumerate(raw)]
    labels = [s.label for s in specs]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise ConfigError(str(file), f"compiler[{dup[0]}]", "listed twice")
    return specs
