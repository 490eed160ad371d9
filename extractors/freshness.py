"""Freshness evidence: which commits changed what a reader sees.

A commit is *bulk* when it touches more than ``max(bulk_min_files, bulk_share
× files in the tree)`` files (a copyright-header sweep, a versioning copy):
it makes every file look new without changing what any says.  A change is
*cosmetic* when the file differs only in front matter, whitespace or Markdown/MDX comments.  The last
substantive change is the newest touch that is neither.
"""

from __future__ import annotations

import re

_FRONT = re.compile(rb"\A(?:\xef\xbb\xbf)?---\r?\n.*?\r?\n(?:---|\.\.\.)\r?\n", re.DOTALL)
_WS = re.compile(rb"\s+")
# Markdown/MDX comments are not rendered: a licence footer added as a comment changes nothing a reader sees.
_COMMENTS = re.compile(rb"<!--.*?-->|\{/\*.*?\*/\}", re.DOTALL)


def normalise_for_substance(data: bytes | None) -> bytes:
    """The file's bytes without front matter and with all whitespace removed."""
    if data is None:
        return b""
    return _WS.sub(b"", _COMMENTS.sub(b"", _FRONT.sub(b"", data, count=1)))


def is_cosmetic_change(old: bytes | None, new: bytes | None) -> bool:
    if old is None or new is None:
        return False  # an added or deleted file is always substantive
    return normalise_for_substance(old) == normalise_for_substance(new)


def bulk_limit(tree_files: int, bulk_min_files: int, bulk_share: float) -> int:
    return max(bulk_min_files, int(bulk_share * tree_files))
