"""Unpublished pages: source files the docs site does not serve as pages of their own.

Docusaurus (the docs, blog and pages plugins' default ``exclude``) skips every file or folder whose name starts with
``_``: partials that another page may import, drafts, hidden sections.  Their text is still in the repository and
so in the index, where it competes with the pages a reader can open; ``fusion.unpublished_multiplier`` scales such
a passage's order key (its confidence is left alone), so a served page that says the same ranks first.
"""

from __future__ import annotations

import weakref

import numpy as np

_MASKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def unpublished_path(path: str) -> bool:
    """Whether a repository path has a folder or file name that starts with ``_``."""
    return any(part.startswith("_") for part in path.split("/"))


def unpublished_rows(data) -> np.ndarray:
    """Per passage of ``data`` (a SnapshotData): whether its page is unpublished (worked out once a snapshot)."""
    mask = _MASKS.get(data)
    if mask is None:
        per_doc = np.array([unpublished_path(p) for p in data.docs.table.column("path").to_pylist()] + [False])
        mask = per_doc[data.chunk_doc_row]  # a row of -1 (no document) reads the trailing False
        mask.flags.writeable = False
        _MASKS[data] = mask
    return mask


def unpublished_key(key: np.ndarray, rows: np.ndarray, data, multiplier: float) -> np.ndarray:
    """``key`` (one value a candidate passage of ``rows``) with unpublished passages' values times ``multiplier``."""
    if multiplier == 1.0 or key.size == 0:
        return key
    return np.where(unpublished_rows(data)[rows], key * multiplier, key)
