"""Passage text for the query process: read from disk when a search shows it, not held in memory.

The text is most of a snapshot's bytes (1M synthetic passages: 690 MB of the chunks table's ~1.7 GB in memory)
and a search reads it for a few hundred rows at most: the identical-passage collapse of its candidates, the
hits it returns, the answer-confidence term coverage, a reranker's depth.  ``chunks.parquet`` is one row
group without a page index, so one row cannot be read on its own: any read of the column decodes all of it.
``PassageTexts`` therefore decodes the column once, streamed in batches, into a temporary file of the texts'
UTF-8 bytes end to end (in ``TMPDIR``, unlinked at once: the open descriptor keeps it readable and the disk
space goes with the process) and keeps only each row's byte offset in memory (8 bytes a row).  A read is one
``pread`` a row: the bytes come through the page cache, which is not the process's memory.  (A memory map
was tried first: with the page cache in large folios, Linux 6.x mapped up to 2 MiB around every row read, and
300 scattered reads added 530 MiB of resident memory, madvise or not.)  Where no temporary file can be
written, the bytes stay in memory (as before this module).

Built on first use (the first search of a one-off query process) or by ``SnapshotData.warm`` (a server, through
``Passages.warm``).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import weakref
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from trustindex.schemas.errors import SnapshotError

TEXT_COLUMN = "text"
READ_BATCH_ROWS = 16_384  # rows decoded at a time (bounded temporary memory)
DIGEST_BLOCK = 8 << 20  # bytes read at a time when every row's digest is computed
_READ_BUFFER = 1 << 20  # stream the column chunk from the file instead of reading it whole


class PassageTexts:
    """The text column of ``chunks_file`` by row: ``take(rows)`` as ``chunks.take("text", rows)`` was,
    ``texts[row]``, and ``key(row)``, a value equal for two rows exactly when their texts are equal."""

    def __init__(self, chunks_file: Path, n: int):
        self.file = Path(chunks_file)
        self.n = n
        self.spilled = False  # whether the bytes live in a temporary file (False: in memory)
        self._lock = threading.Lock()
        self._offsets: np.ndarray | None = None  # per row, its first byte; then the end
        self._nulls: frozenset[int] = frozenset()
        self._fd: int | None = None
        self._memory = b""

    @property
    def built(self) -> bool:
        return self._offsets is not None

    def build(self) -> None:
        if self._offsets is None:
            with self._lock:
                if self._offsets is None:
                    self._load()

    def key(self, row: int) -> bytes | None:
        """The row's text as UTF-8 bytes (None for a null text): what the identical-passage collapse compares."""
        self.build()
        if not 0 <= row < self.n:
            raise IndexError(f"passage row {row} out of range (0..{self.n - 1})")
        if row in self._nulls:
            return None
        assert self._offsets is not None
        start, end = int(self._offsets[row]), int(self._offsets[row + 1])
        if self._fd is None:
            return self._memory[start:end]
        return os.pread(self._fd, end - start, start) if end > start else b""

    def digests(self) -> list[bytes | None]:
        """Per row, a 128-bit BLAKE2b digest of its text (None for a null text), read through the file in large
        blocks: equal exactly when the texts are equal (a collision is as likely as a random 128-bit match)."""
        self.build()
        assert self._offsets is not None
        offsets = self._offsets.tolist()
        out: list[bytes | None] = []
        buf, buf_start = b"", 0
        for row in range(self.n):
            if row in self._nulls:
                out.append(None)
                continue
            start, end = offsets[row], offsets[row + 1]
            if end > buf_start + len(buf) or start < buf_start:
                buf_start = start
                buf = self._read(start, max(end, min(start + DIGEST_BLOCK, offsets[-1])) - start)
            out.append(hashlib.blake2b(buf[start - buf_start : end - buf_start], digest_size=16).digest())
        return out

    def _read(self, start: int, length: int) -> bytes:
        if self._fd is None:
            return self._memory[start : start + length]
        return os.pread(self._fd, length, start) if length > 0 else b""

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

    def _load(self) -> None:
        pf = pq.ParquetFile(self.file, buffer_size=_READ_BUFFER)
        if TEXT_COLUMN not in pf.schema_arrow.names:
            raise SnapshotError(f"{self.file}: no {TEXT_COLUMN} column")
        try:
            fd, name = tempfile.mkstemp(prefix="trustindex-text-")
            os.unlink(name)  # the descriptor keeps the file; nothing is left behind, even after a crash
        except OSError:
            fd = None
        sink = os.fdopen(os.dup(fd), "wb", buffering=1 << 20) if fd is not None else None
        pieces: list[bytes] = []
        offsets = np.zeros(self.n + 1, dtype=np.int64)
        nulls: list[int] = []
        row = 0
        try:
            for batch in pf.iter_batches(batch_size=READ_BATCH_ROWS, columns=[TEXT_COLUMN], use_threads=False):
                arr = batch.column(0)
                m = len(arr)
                if row + m > self.n:
                    raise SnapshotError(f"{self.file}: the {TEXT_COLUMN} column has more rows than the chunks table")
                width = np.int64 if pa.types.is_large_string(arr.type) else np.int32
                own = np.frombuffer(arr.buffers()[1], dtype=width)[arr.offset : arr.offset + m + 1].astype(np.int64)
                offsets[row + 1 : row + m + 1] = offsets[row] + (own[1:] - own[0])
                if arr.null_count:
                    nulls.extend(row + int(i) for i in np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False)))
                data = arr.buffers()[2]
                if data is not None and own[m] > own[0]:
                    chunk = memoryview(data)[int(own[0]) : int(own[m])]
                    if sink is not None:
                        sink.write(chunk)
                    else:
                        pieces.append(bytes(chunk))
                row += m
            if row != self.n:
                raise SnapshotError(f"{self.file}: the {TEXT_COLUMN} column has {row} rows, the chunks table {self.n}")
        except BaseException:
            if fd is not None:
                os.close(fd)
            raise
        finally:
            if sink is not None:
                sink.close()
        if fd is not None:
            self._fd = fd
            self.spilled = True
            weakref.finalize(self, os.close, fd)
        else:
            self._memory = b"".join(pieces)
        self._nulls = frozenset(nulls)
        self._offsets = offsets
