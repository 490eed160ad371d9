"""A snapshot's tables as a search reads them: Arrow in memory, a Python object made only for a row or column asked
for (``RowMap``: rows by key; ``Columns``: the chunks table's columns, the passage text read by row from its own
store).  Converting 100k passages to Python lists and dicts at open took ~0.3 s of a cold query and ~200 MiB, and a
search needs a few hundred rows.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from trustindex.query.passage_text import PassageTexts


def row_positions(values: pa.ChunkedArray, keys: pa.ChunkedArray) -> np.ndarray:
    """For each value, its row in ``keys`` (-1 where absent)."""
    idx = pc.index_in(values, value_set=keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys)
    return np.asarray(idx.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)


class RowMap:
    """A read-only ``{key: row dict}`` over an Arrow table; a row becomes a dict when first asked for."""

    def __init__(self, table: pa.Table, key: str):
        self.table = table
        keys = table.column(key).to_pylist()
        self._row = {k: i for i, k in enumerate(keys)}  # the last row of a repeated key wins, as dict() would
        self._cache: dict[str, dict] = {}

    def row_of(self, key) -> int | None:
        return self._row.get(key)

    def __getitem__(self, key) -> dict:
        hit = self._cache.get(key)
        if hit is None:
            i = self._row[key]  # KeyError for an unknown key, as a dict
            hit = self._cache[key] = self.table.slice(i, 1).to_pylist()[0]
        return hit

    def get(self, key, default=None):
        return self[key] if key in self._row else default

    def read(self, key) -> dict:
        """One row as a dict, not kept (for a reader that keeps its own typed row)."""
        hit = self._cache.get(key)
        return hit if hit is not None else self.table.slice(self._row[key], 1).to_pylist()[0]

    def __contains__(self, key) -> bool:
        return key in self._row

    def __len__(self) -> int:
        return len(self._row)

    def __iter__(self):
        return iter(self._row)

    def keys(self):
        return self._row.keys()

    def items(self):
        return ((k, self[k]) for k in self._row)

    def values(self):
        return (self[k] for k in self._row)


class Columns:
    """``chunks[column][row]`` as before, with each column converted to a Python list on first use; ``lazy``
    columns (the text) are read by row from their own store and never converted whole."""

    def __init__(self, table: pa.Table, lazy: dict[str, PassageTexts] | None = None):
        self.table = table
        self._lists: dict[str, list] = {}
        self._lazy = lazy or {}

    def __getitem__(self, name: str) -> list:
        if name in self._lazy:
            return self._lazy[name]  # type: ignore[return-value]  # a read-only sequence, read by row
        col = self._lists.get(name)
        if col is None:
            col = self._lists[name] = self.table.column(name).to_pylist()
        return col

    def shared_strings(self, name: str) -> list:
        """``self[name]`` with one Python string per distinct value (a document's id once, not once per passage:
        ~60 MiB less at 1M passages of 8 per page)."""
        col = self._lists.get(name)
        if col is None:
            column = self.table.column(name)
            if column.null_count or not len(column):
                return self[name]
            enc = pc.dictionary_encode(column).combine_chunks()
            values = enc.dictionary.to_pylist()
            col = self._lists[name] = [values[c] for c in enc.indices.to_numpy().tolist()]
        return col

    def value(self, name: str, row: int):
        """One value, without converting the column."""
        if name in self._lazy:
            return self._lazy[name][row]
        if name in self._lists:
            return self._lists[name][row]
        return self.table.column(name)[row].as_py()

    def take(self, name: str, rows) -> list:
        """The values of ``rows`` (any order) without converting the whole column."""
        if name in self._lazy:
            return self._lazy[name].take(rows)
        if name in self._lists:
            col = self._lists[name]
            return [col[i] for i in rows]
        return self.table.column(name).take(pa.array(np.asarray(rows, dtype=np.int64))).to_pylist()
