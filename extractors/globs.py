"""Gitignore-style path globs: ``**`` spans directories, ``*`` and ``?`` do not."""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=1024)
def glob_regex(pattern: str) -> re.Pattern:
    i, out = 0, []
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def matches(path: str, pattern: str) -> bool:
    """True when ``path`` matches; a pattern without ``/`` also matches a basename anywhere."""
    if glob_regex(pattern).match(path):
        return True
    return "/" not in pattern and bool(glob_regex(pattern).match(path.rsplit("/", 1)[-1]))


def first_match(path: str, patterns) -> str | None:
    for p in patterns:
        if matches(path, p):
            return p
    return None
