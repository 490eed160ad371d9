"""Passage text for the query process: read from disk when a search shows it, not held in memory.

The text is most of a snapshot's bytes (1M synthetic passages: 690 MB of the chunks table's ~1.7 GB in memory)
and a search reads it for a few hundred rows at most: the identical-passage collapse of its candidates, the
hits it returns, the answer-confidence term coverage, a reranker's depth.  ``chunks.parquet`` is one row
group without a page index, so one row cannot be read on its own: any read of the column decodes all of it.
``PassageTexts`` therefore decodes the column once, streamed in batches, into an uncompressed Arrow IPC file
in the temporary directory (``TMPDIR``), memory-maps it and unlinks it (the mapping stays readable; the disk
space is freed when the process ends).  A read is then a slice of the mapping: the kernel pages in the bytes
of the rows asked for, and the process's resident memory holds those pages only, which it may drop again
under pressure.  Where no temporary file can be written, the decoded batches stay in memory (as before).

Built on first use (the first search of a one-off query process) or by ``SnapshotData.warm`` (a server).
"""

from __future__ import annotations

import bisect
import os
import tempfile
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from trustindex.schemas.errors import SnapshotError

TEXT_COLUMN = "text"
READ_BATCH_ROWS = 16_384  # rows decoded at a time (bounded temporary memory)
_READ_BUFFER = 1 << 20  # stream the column chunk from the file instead of reading it whole


class _Batch:
    """One record batch of the text column as numpy offsets over its data buffer (no per-row Arrow scalars)."""

    def __init__(self, arr: pa.Array):
        width = np.int64 if pa.types.is_large_string(arr.type) else np.int32
        self.offsets = np.frombuffer(arr.buffers()[1], dtype=width)[arr.offset : arr.offset + len(arr) + 1]
        data = arr.buffers()[2]
        self.data = memoryview(data) if data is not None else memoryview(b"")
        self.nulls = np.asarray(arr.is_null().to_numpy(zero_copy_only=False)) if arr.null_count else None

    def raw(self, j: int) -> bytes | None:
        if self.nulls is not None and self.nulls[j]:
            return None
        return bytes(self.data[int(self.offsets[j]) : int(self.offsets[j + 1])])


class PassageTexts:
    """The text column of ``chunks_file`` by row: ``take(rows)`` as ``chunks.take("text", rows)`` was,
    ``texts[row]``, and ``key(row)``, a value equal for two rows exactly when their texts are equal."""

    def __init__(self, chunks_file: Path, n: int):
        self.file = Path(chunks_file)
        self.n = n
        self.mapped = False  # whether the text lives in a memory-mapped file (False: in memory)
        self._lock = threading.Lock()
        self._batches: list[_Batch] | None = None
        self._starts: list[int] = []  # first row of each batch

    @property
    def built(self) -> bool:
        return self._batches is not None

    def build(self) -> None:
        if self._batches is None:
            with self._lock:
                if self._batches is None:
                    self._batches = self._load()

    def key(self, row: int) -> bytes | None:
        """The row's text as UTF-8 bytes (None for a null text): what the identical-passage collapse compares."""
        self.build()
        if not 0 <= row < self.n:
            raise IndexError(f"passage row {row} out of range (0..{self.n - 1})")
        b = bisect.bisect_right(self._starts, row) - 1
        assert self._batches is not None
        return self._batches[b].raw(row - self._starts[b])

    def take(self, rows) -> list[str | None]:
        out = []
        for r in rows:
            raw = self.key(int(r))
            out.append(None if raw is None else raw.decode("utf-8"))
        return out

    def __getitem__(self, row: int) -> str | None:
        return self.take([row])[0]

    def __len__(self) -> int:
        return self.n

    def _load(self) -> list[_Batch]:
        pf = pq.ParquetFile(self.file, buffer_size=_READ_BUFFER)
        if TEXT_COLUMN not in pf.schema_arrow.names:
            raise SnapshotError(f"{self.file}: no {TEXT_COLUMN} column")
        batches = pf.iter_batches(batch_size=READ_BATCH_ROWS, columns=[TEXT_COLUMN], use_threads=False)
        arrays = self._spill(pf.schema_arrow.field(TEXT_COLUMN), batches)
        rows = sum(len(a) for a in arrays)
        if rows != self.n:
            raise SnapshotError(f"{self.file}: the {TEXT_COLUMN} column has {rows} rows, the chunks table {self.n}")
        self._starts = np.cumsum([0] + [len(a) for a in arrays[:-1]]).tolist() if arrays else []
        return [_Batch(a) for a in arrays]

    def _spill(self, field: pa.Field, batches) -> list[pa.Array]:
        """The column's arrays, backed by a memory-mapped temporary file when one can be written."""
        try:
            fd, name = tempfile.mkstemp(prefix="trustindex-text-", suffix=".arrow")
        except OSError:
            return [b.column(0) for b in batches]
        os.close(fd)
        try:
            with pa.OSFile(name, "wb") as sink, pa.ipc.new_file(sink, pa.schema([field])) as writer:
                for batch in batches:
                    writer.write_batch(batch)
            reader = pa.ipc.open_file(pa.memory_map(name, "r"))
            arrays = [reader.get_batch(i).column(0) for i in range(reader.num_record_batches)]
        finally:
            os.unlink(name)
        self.mapped = True
        return arrays
