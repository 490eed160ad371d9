"""Copies across sources yield to their original (issue 43): the build marks a passage that nearly equals a passage of
another source (the ``copies`` table, warehouse/copies.py; the original: higher attribution tier, then the earlier
first commit).  A search reads the mark three ways:

- the original joins the candidate pool when a copy of it is a candidate (query/search.py ``gather``), so that the
  original, not the copy, can answer;
- a copy is one more member of its original's group of identical passages (``copy_groups``): the group's hit is its
  best-ranked passage that is no copy, and the copy is listed in that hit's ``also_in`` (query/candidates.py
  ``collapse``), whatever the copy's own score; a copy whose original is not a candidate (excluded by a version
  or a kind of content risk) stands as its own hit;
- every provenance names the original it copies (``copy_of``: ``<source>/<path>``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def copy_rows(copies: pa.Table | None, chunk_ids: pa.ChunkedArray, n: int) -> np.ndarray:
    """Per passage, the row of the original it copies (-1: none, or no ``copies`` table in the snapshot)."""
    out = np.full(n, -1, dtype=np.int64)
    if copies is not None and copies.num_rows:
        keys = chunk_ids.combine_chunks()
        copy = np.asarray(pc.index_in(copies.column("chunk_id"), value_set=keys).fill_null(-1), dtype=np.int64)
        original = np.asarray(pc.index_in(copies.column("copy_of"), value_set=keys).fill_null(-1), dtype=np.int64)
        ok = (copy >= 0) & (original >= 0)
        out[copy[ok]] = original[ok]
    out.flags.writeable = False
    return out


def copy_groups(text_groups: np.ndarray, copy_of: np.ndarray) -> np.ndarray:
    """Per passage, its group: that of identical texts (``text_groups``), a copy's being its original's."""
    if not (copy_of >= 0).any():
        return text_groups
    groups = np.where(copy_of >= 0, text_groups[np.maximum(copy_of, 0)], text_groups)
    groups.flags.writeable = False
    return groups


def with_originals(rows: np.ndarray, copy_of: np.ndarray) -> np.ndarray:
    """The candidate rows (ascending) and the originals of the copies among them."""
    originals = copy_of[rows]
    originals = originals[originals >= 0]
    return np.union1d(rows, originals) if originals.size else rows
