"""How many source tasks run at once, and the progress of the whole set (issue 29 item 1).

Before, every source task was submitted at once (Prefect's thread pool has no bound by default): 50 sources were
50 threads extracting side by side on 2 cores, each holding its tables and its share of the embedding work in
memory.  Here at most ``limit`` run (default: the usable cores); the rest wait in configured order and start as
others end.  ``TRUSTINDEX_SOURCES_AT_ONCE=all`` brings back every source at once (for the benches).
"""

from __future__ import annotations

import os
import queue
import time
from collections import deque
from collections.abc import Callable, Sequence

from prefect.futures import PrefectFuture

from trustindex.query.onnx_encoder import available_cores
from trustindex.runtime import progress
from trustindex.schemas.config import Source

SOURCES_ENV = "TRUSTINDEX_SOURCES_AT_ONCE"
ALL = "all"


def sources_at_once(n_sources: int, configured: int | str | None = None) -> int:
    """The cap: ``configured`` (a number or "all"), else the environment's, else the usable cores."""
    raw = str(configured if configured is not None else os.environ.get(SOURCES_ENV, "")).strip().lower()
    if not raw:
        return max(1, min(n_sources, available_cores()))
    if raw == ALL:
        return max(1, n_sources)
    if raw.isdigit() and int(raw) >= 1:
        return min(max(1, n_sources), int(raw))
    where = "--max-sources" if configured is not None else SOURCES_ENV
    raise ValueError(f"{where}={raw!r}: expected a number of sources (1 or more) or {ALL}")


def eta_text(done: int, total: int, seconds: float) -> str:
    """The time left if the sources still to finish take as long, on average, as those done did."""
    if done == 0 or done >= total:
        return "ETA unknown" if done < total else "ETA 0 s"
    left = seconds / done * (total - done)
    return f"ETA {left / 60:.1f} min" if left >= 90 else f"ETA {left:.0f} s"


def run_sources(
    sources: Sequence[Source], submit: Callable[[Source], PrefectFuture], limit: int, texts_left: Callable[[], int]
) -> dict[str, PrefectFuture]:
    """Each source's task future (``submit``), at most ``limit`` running at a time, in configured order.

    Returns once every task has ended; the caller reads each future's result.  ``texts_left``: chunk texts
    submitted to the embedding worker and not yet embedded, for the progress line."""
    waiting = deque(sources)
    ended: queue.Queue = queue.Queue()
    futures: dict[str, PrefectFuture] = {}
    running = 0
    started = time.monotonic()
    every = min(progress.progress_every(), 5.0)
    done = 0
    with progress.stage("sources", len(sources), unit="sources") as bar:
        while waiting or running or bar.done < done:
            while waiting and running < limit:
                s = waiting.popleft()
                fut = submit(s)
                fut.add_done_callback(lambda f, name=s.name: ended.put(name))
                futures[s.name] = fut
                running += 1
            # an ended source is counted once its successor has started, in one step with the status: the line's
            # count, done, running and queued then describe one moment
            text = _status(done, len(sources), running, len(waiting), texts_left(), started)
            if bar.done < done:
                bar.advance(done - bar.done, status=text)
            if not running:
                continue
            try:
                ended.get(timeout=every)
                running, done = running - 1, done + 1
            except queue.Empty:
                bar.status(_status(done, len(sources), running, len(waiting), texts_left(), started))
    return futures


def _status(done: int, total: int, running: int, queued: int, texts: int, started: float) -> str:
    eta = eta_text(done, total, time.monotonic() - started)
    return f"{done}/{total} sources done, {running} running, {queued} queued, {texts:,} texts waiting to embed, {eta}"
