"""Memory one stage freed, handed back to the system before the next stage allocates (issue 29).

Why: glibc keeps freed heap pages in each thread's arena (every source task and encoder thread has one) and Arrow
keeps its pool's freed buffers; neither comes back on its own, and the build's large arrays are fresh mappings
that cannot reuse them.  Measured on the 45-repository refresh (issue 29): 593 -> 551 MiB at the start of the
build.  The larger share of what the sources' stage left was onnxruntime's arenas, which
``embedder_factory.release_loaded_models`` gives back before this runs.
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
