"""Unpublished pages: source files the docs site does not serve as pages of their own.

Docusaurus (the docs, blog and pages plugins' default ``exclude``) skips every file or folder whose name starts with
``_``: partials that another page may import, drafts, hidden sections.  Their text is still in the repository and
so in the index, where it competes with the pages a reader can open; ``fusion.unpublished_multiplier`` scales such
a passage's order key (its confidence is left alone), so a served page that says the same ranks first.
"""

from __future__ import annotations

import numpy as np

from trustindex.schemas.page_kinds import unpublished_path


def unpublished_mask(doc_paths: list[str], chunk_doc_row: np.ndarray) -> np.ndarray:
    """Per passage, whether its page is unpublished: ``doc_paths`` per document row, ``chunk_doc_row`` each
    passage's document row (-1: none)."""
    per_doc = np.array([unpublished_path(p) for p in doc_paths] + [False], dtype=bool)
    mask = per_doc[chunk_doc_row]  # a row of -1 (no document) reads the trailing False
    mask.flags.writeable = False
    return mask


def unpublished_key(key: np.ndarray, rows: np.ndarray, unpublished: np.ndarray, multiplier: float) -> np.ndarray:
    """``key`` (one value a candidate passage of ``rows``) with unpublished passages' values times ``multiplier``;
    ``unpublished``: every passage's mark (``unpublished_mask``, memoised by ``SnapshotData.unpublished_rows``)."""
    if multiplier == 1.0 or key.size == 0:
        return key
    return np.where(unpublished[rows], key * multiplier, key)
