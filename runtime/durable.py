"""Writes that survive a power loss: fsync a path, and replace a small file atomically.

A rename is only durable once the directory holding it is synced, and a file's contents only once
the file is; snapshot publishing, export and the encoder cache all rely on both.
"""

from __future__ import annotations

import os
from pathlib import Path


def fsync_path(path: Path) -> None:
    """Flush a file's or a directory's contents and metadata to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_durably(target: Path, payload: bytes, tmp: Path) -> None:
    """Make ``target`` hold ``payload``: write ``tmp`` (in the same directory), fsync it, rename it
    over ``target`` and fsync the directory.  A reader sees the old file or the new, never a part."""
    with open(tmp, "wb") as f:
        f.write(payload)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, target)
    fsync_path(target.parent)
