"""Which files of a commit are read, and by which rule the others are skipped.

Every tree entry gets exactly one outcome here: a reason to skip it (a named
rule) or ``None`` (read it).  Git LFS pointers, binaries and files over the
policy's size cap are recognised from the blob itself.
"""
from __future__ import annotations

from crawl.git import TreeEntry
from extractors.globs import first_match
from schemas.config import Source

LFS_HEADER = b"version https://git-lfs.github.com/spec/"


def skip_rule_for_entry(entry: TreeEntry, source: Source, max_bytes: int) -> str | None:
    if entry.is_submodule:
        return "submodule"
    if entry.is_symlink:
        return "symlink"
    excluded = first_match(entry.path, source.exclude)
    if excluded:
        return f"excluded:{excluded}"
    if first_match(entry.path, source.include) is None:
        return "not_included"
    if entry.size > max_bytes:
        return f"too_large:{entry.size}>{max_bytes}"
    return None


def skip_rule_for_bytes(data: bytes) -> str | None:
    if data.startswith(LFS_HEADER):
        return "lfs_pointer"
    if b"\0" in data[:8192]:
        return "binary"
    return None
