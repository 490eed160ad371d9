"""Memory one stage freed, handed back to the system before the next stage allocates (issue 29).

Why: the org refresh (45 repositories, 105k passages) peaked at 2.0 GB in its build stage, though the build itself
adds ~0.8 GB to what the process holds when it starts (a rebuild from cached tables and vectors peaks at 1.3 GB).
The rest was memory the sources' stage had freed but the allocators kept: glibc keeps freed heap pages in each
thread's arena (every source task and encoder thread has one), and Arrow keeps its pool's freed buffers.  Neither
comes back on its own, and the build's own allocations land elsewhere (numpy's large arrays are fresh mappings).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """glibc, for ``malloc_trim``; None elsewhere (musl, macOS): nothing to trim there."""
    name = ctypes.util.find_library("c")
    try:
        lib = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return lib if lib is not None and hasattr(lib, "malloc_trim") else None


def return_freed_memory() -> None:
    """Collect cycles, release Arrow's unused pool buffers and trim every malloc arena (``malloc_trim(0)`` also
    returns free pages inside the heaps, not only at their tops).  Cheap: tens of milliseconds."""
    gc.collect()
    try:
        import pyarrow as pa
    except ImportError:  # the base install's search has no build stage to free for
        pass
    else:
        pa.default_memory_pool().release_unused()
    lib = _libc()
    if lib is not None:
        lib.malloc_trim(0)
