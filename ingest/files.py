"""Which files of a commit are read, and by which rule the others are skipped.

Every tree entry gets exactly one outcome here: a reason to skip it (a named
rule) or ``None`` (read it).  Git LFS pointers, binaries and files over the
policy's size cap are recognised from the blob itself.
"""

from __future__ import annotations

from trustindex.crawl.git import TreeEntry
from trustindex.extractors.globs import first_match
from trustindex.ingest.dispatch import kind_of
from trustindex.schemas.config import Source

LFS_HEADER = b"version https://git-lfs.github.com/spec/"
# Kinds whose extractor decodes strictly and names the offending byte offset
# (extractors.markdown.decode_markdown, extractors.code_common.decode_lines): a
# NUL in a file that claims to be Markdown or code is a broken document, so it
# is reported as failed (stage extract) rather than quietly skipped as binary.
STRICT_TEXT_KINDS = ("markdown", "restructuredtext", "compact", "typescript", "rust")


def skip_rule_for_entry(entry: TreeEntry, source: Source, max_bytes: int) -> str | None:
    if entry.is_submodule:
        return "submodule"
    if entry.is_symlink:
        return "symlink"
    if entry.invalid:
        # A name no checkout could hold (crawl.git.TreeEntry.invalid): listed, never read.
        return entry.invalid
    excluded = first_match(entry.path, source.exclude)
    if excluded:
        return f"excluded:{excluded}"
    if first_match(entry.path, source.include) is None:
        return "not_included"
    if entry.missing and source.blob_limit is not None:
        # The partial clone left the blob out, so it is at least blob_limit bytes: never downloaded.
        return f"too_large:>={source.blob_limit} (blob_limit)"
    if entry.size > max_bytes:
        return f"too_large:{entry.size}>{max_bytes}"
    return None


def skip_rule_for_bytes(data: bytes, path: str | None = None) -> str | None:
    """``path`` (optional for old callers) lets Markdown/code with a NUL reach its extractor."""
    if data.startswith(LFS_HEADER):
        return "lfs_pointer"
    if b"\0" in data[:8192]:
        if path is not None and kind_of(path) in STRICT_TEXT_KINDS:
            return None
        return "binary"
    return None
