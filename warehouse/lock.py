"""One writer per data directory: an advisory lock held for a whole refresh, backfill or gc.

flock is released by the kernel when the holder dies (even by SIGKILL), so a
crash never leaves the directory locked.
"""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path

from trustindex.schemas.errors import TrustIndexError

LOCK_FILE = ".lock"


class LockBusy(TrustIndexError):
    pass


@contextmanager
def data_dir_lock(data_dir: Path, wait_seconds: float = 0.0, what: str = "refresh"):
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + wait_seconds
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
                    raise LockBusy(
                        f"{data_dir}: {holder} is writing this data directory; wait for it, or pass "
                        f"--wait SECONDS to queue behind it"
                    ) from None
                time.sleep(0.2)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{what} (pid {os.getpid()})".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
