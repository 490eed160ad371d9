"""One embedding worker per process, fed by every source task (issue 29 item 1).

Before, each source task ran its own worker thread (encoder/pipeline.py): with 50 sources at once that
was 50 threads calling one encoder side by side, 50 copies of the embedding cache in memory (each worker loaded
every shard) and 50 "model" stages that were mostly time spent waiting for the one load.  Here one thread takes
the chunk texts of all sources from one bounded queue, embeds what has queued up (texts of several sources in one
encoder call, each text once even when two sources share it) and fills one cache, committing it every
``embedding_cache.COMMIT_TEXTS`` texts (a killed build keeps what it encoded; issue 41 item 5).

Output does not depend on scheduling, as before: a text's vector is a function of the text alone, the worker only
fills the content-hash cache, and the build embeds in its stable order whatever the cache lacks.  A source's
``finish`` returns once everything it submitted is in the cache on disk.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from trustindex.encoder.embedding_cache import Embedder, EmbeddingCache, PendingVectors
from trustindex.encoder.factory import make_embedder
from trustindex.runtime import progress
from trustindex.schemas.embedding_model import encoder_cache_dir

log = logging.getLogger(__name__)
K = TypeVar("K")  # what a text is known by (its content hash in the worker)

# Documents waiting between all the extracting sources and the worker (each a list of its chunks' texts).
QUEUE_DOCUMENTS = 256
# Texts taken from the queue at once at most (what has queued up meanwhile, not a fixed batch) ...
MAX_TEXTS_PER_CALL = 512
# ... and handed to the encoder in parts of this many, sorted by length, each part's vectors pending a commit as
# soon as it is encoded: a kill loses the part in flight, not the whole call (~5 s of encoding on 2 cores at 512).
# Sorted first, a part keeps the same-length runs the encoder batches by; on the real mix parts of 128 ran as fast as
# one call of 512 (0.998x sorted, 1.002x in arrival order, 5 rounds at load 2; bench/encoder_call_size.py).
ENCODE_PART = 128


def encode_parts(texts: Mapping[K, str]) -> Iterator[list[K]]:
    """The keys of ``texts``, shortest text first, in parts of ``ENCODE_PART``: what the worker hands the encoder at
    once out of one call (bench/refresh_full.py and bench/encoder_call_size.py feed the encoder the same way)."""
    by_length = sorted(texts, key=lambda key: len(texts[key]))
    for i in range(0, len(by_length), ENCODE_PART):
        yield by_length[i : i + ENCODE_PART]


@dataclass
class Feed:
    """One source's side of the worker: what it submitted and what became of it."""

    source: str
    texts: int = 0  # chunk texts submitted
    cache_hits: int = 0  # distinct texts the cache held before this run
    shared: int = 0  # distinct texts another source of this run submitted first (counted there)
    encoded: int = 0  # distinct texts embedded for this source
    failed: str | None = None  # the worker's error: the build embeds what it left
    seen: set[str] = field(default_factory=set, repr=False)
    on_encoded: object = None  # a progress stage's ``advance`` (called from the worker's thread)
    _flushed: threading.Event = field(default_factory=threading.Event, repr=False)
    # monotonic clock: when the source handed over its last texts, and when the last of them was in the cache
    handed_over: float | None = None
    flushed_at: float | None = None


_FINISH = "finish"
_STOP = object()


class RunCancelled(Exception):
    """The run that owns the worker was stopped (SIGTERM, Ctrl-C, a crash): a source's next hand-over ends it."""


class SharedEmbedWorker:
    """The worker thread, its encoder and its cache; started on the first submit and then kept for the process."""

    def __init__(self, backend: str, data_dir: Path):
        self.backend, self.data_dir = backend, Path(data_dir)
        self._queue: queue.Queue = queue.Queue(maxsize=QUEUE_DOCUMENTS)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._embedder: Embedder | None = None
        self._cache: EmbeddingCache | None = None
        self._load_error: str | None = None
        self.model_seconds = 0.0
        self.pending_texts = 0  # submitted and not yet taken by the worker (progress: "texts left")
        self.encode_seconds = 0.0
        self.encoded = 0
        # True when the flow that made this worker stops it before its build (flows/refresh.py): then a source
        # hands over its last texts and ends without waiting for them, and the next source extracts meanwhile.
        # A worker in another process (a source task placed on a Dask worker) has no such owner: its sources wait.
        self.drained_by_flow = False
        self.feeds: dict[str, Feed] = {}  # every source's feed, by name: its final counts once the worker is stopped
        # every text some source submitted this run: a text is counted once, by the first source that submits it,
        # so the sources' counts add up to the run's (issue 41 item 4)
        self._claimed: set[str] = set()
        self._inflight = 0  # texts taken from the queue and not yet embedded (the drain's count)
        self._cancelled = False  # set by ``cancel``: nothing more is taken, and a source's next hand-over ends it
        self.on_taken: Callable[[int], None] | None = None  # the drain stage's ``advance``

    def embedder(self) -> Embedder | None:
        """The worker's encoder, loaded once; None (with the reason logged) when it cannot be loaded."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="embed-shared", daemon=True)
                self._thread.start()
        self._ready.wait()
        return self._embedder

    def submit(self, feed: Feed, pairs: list[tuple[str, str]]) -> None:
        if self._cancelled:  # the run is stopping: the source ends here instead of extracting on
            raise RunCancelled(f"the run was stopped; source {feed.source} ends before its remaining files")
        self.embedder()
        with self._lock:
            self.pending_texts += len(pairs)
            self.feeds[feed.source] = feed
        feed.texts += len(pairs)
        self._queue.put((feed, pairs))  # blocks while the queue is full: extraction waits for embedding

    def finish(self, feed: Feed, wait: bool = True) -> Feed:
        """The end of ``feed``'s texts; ``wait``: until every one is in the cache (or the worker has said why not),
        else only queued behind them (``stop`` drains the queue)."""
        if feed.texts and not self._cancelled:
            feed.handed_over = time.monotonic()
            self._queue.put((feed, _FINISH))
            if wait:
                feed._flushed.wait()
        return feed

    def _run(self) -> None:
        started = time.monotonic()
        try:
            self._embedder = make_embedder(self.backend, cache_dir=encoder_cache_dir(self.data_dir))
            e = self._embedder
            self._cache = EmbeddingCache(self.data_dir / "cache" / "embeddings", e.cache_key, e.dimensions)
        except Exception as exc:  # every source's texts are left to the build's own pass
            self._load_error = f"{type(exc).__name__}: {exc}"
            log.warning("the shared embedding worker cannot load its model (%s); the build embeds", exc)
        finally:
            self.model_seconds = time.monotonic() - started
            self._ready.set()
        pending = PendingVectors(self._cache)
        while True:
            batch, finished = self._take()
            if batch is None:  # stopped
                pending.commit()
                return
            self._embed(batch, pending)  # commits the cache every COMMIT_TEXTS texts as it goes
            taken, self._inflight = self._inflight, 0
            if self.on_taken is not None and taken:
                self.on_taken(taken)
            if finished:
                pending.commit()  # a finished source's texts are all in the cache on disk
                for feed in finished:
                    feed.flushed_at = time.monotonic()
                    feed._flushed.set()

    def waiting_texts(self) -> int:
        """Texts submitted and not yet embedded: queued, and taken by the encoder's current call."""
        with self._lock:
            return self.pending_texts + self._inflight

    def stop(self) -> None:
        """End the thread once the queue is drained (every source has finished by then)."""
        self._end_thread()
        # The cache's vectors in memory (every text the run embedded or found: ~165 MiB at 92k chunks) are not
        # needed once the sources have ended: the build reads the cache from disk.  The flow still holds this
        # object (for the progress line), so without this they stayed alive through the whole build.
        if self._cache is not None:
            self._cache.compact()  # the batches committed as they were encoded, merged once they are many
        self._cache = None

    def cancel(self) -> int:
        """Stop now, the run being stopped: the part being encoded is finished and committed (with every vector
        encoded before it), the rest of its call and the texts still queued are dropped (the next run encodes them),
        and each source's next hand-over raises ``RunCancelled``, so its extraction ends too.  Returns the number
        of queued texts dropped.

        Before, a stopped run drained the whole queue and its sources extracted on, feeding it: a SIGTERM 20 s into
        the real docs' build took 115 s more to end."""
        self._cancelled = True
        dropped = 0
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is _STOP:
                continue
            feed, pairs = item
            if pairs is not _FINISH:
                dropped += len(pairs)
            feed._flushed.set()  # nobody waits on a dropped hand-over
        with self._lock:
            self.pending_texts = 0
        self._end_thread()
        self._cache = None
        return dropped

    def _end_thread(self) -> None:
        """The thread ends once it takes the stop marker, behind whatever is queued (it commits what it encoded)."""
        with self._lock:
            started, self._thread = self._thread, None
        if started is not None:
            self._queue.put(_STOP)
            started.join()

    def _take(self) -> tuple[list[tuple[Feed, list[tuple[str, str]]]] | None, list[Feed]]:
        """What has queued up (at least one item), up to MAX_TEXTS_PER_CALL texts, and the sources that ended."""
        first = self._queue.get()
        if first is _STOP:
            return None, []
        items = [first]
        while sum(len(p) for f, p in items if p is not _FINISH) < MAX_TEXTS_PER_CALL:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is _STOP:  # put back: the items before it are handled first
                self._queue.put(item)
                break
            items.append(item)
        batch = [(f, p) for f, p in items if p is not _FINISH]
        with self._lock:
            self._inflight = sum(len(p) for _, p in batch)
            self.pending_texts -= self._inflight
        return batch, [f for f, p in items if p is _FINISH]

    def _embed(self, batch: list[tuple[Feed, list[tuple[str, str]]]], new: PendingVectors) -> None:
        todo: dict[str, str] = {}
        owner: dict[str, Feed] = {}
        for feed, pairs in batch:
            if self._load_error:
                feed.failed = self._load_error
                continue
            fresh = {}
            for sha, text in pairs:
                if sha not in feed.seen:
                    feed.seen.add(sha)
                    fresh[sha] = text
            assert self._cache is not None
            shared = {s for s in fresh if s in self._claimed}
            self._claimed.update(fresh)
            hits = self._cache.known([s for s in fresh if s not in shared])
            feed.shared += len(shared)
            feed.cache_hits += len(hits)
            for sha, text in fresh.items():
                if sha not in hits and sha not in shared:
                    todo[sha], owner[sha] = text, feed
        if not todo:
            return
        for part in encode_parts(todo):
            if self._cancelled:  # the run is stopping: the rest is left to the next run
                return
            self._encode_part(part, todo, owner, new)

    def _encode_part(self, shas: list[str], todo: dict[str, str], owner: dict[str, Feed], new: PendingVectors) -> None:
        started = time.monotonic()
        assert self._embedder is not None  # set whenever there was no load error
        try:
            vectors = self._embedder.encode([todo[s] for s in shas])
        except Exception as exc:  # these texts are left to the build; the next part is tried again
            for feed in {id(owner[s]): owner[s] for s in shas}.values():
                feed.failed = f"{type(exc).__name__}: {exc}"
            log.warning("embedding during extraction failed for %d texts (%s); the build embeds them", len(shas), exc)
            return
        self.encode_seconds += time.monotonic() - started
        self.encoded += len(shas)
        new.add(shas, vectors)
        counts: dict[int, tuple[Feed, int]] = {}
        for sha in shas:
            f = owner[sha]
            counts[id(f)] = (f, counts.get(id(f), (f, 0))[1] + 1)
        for f, n in counts.values():
            f.encoded += n
            if callable(f.on_encoded):
                f.on_encoded(n)


_WORKERS: dict[tuple[str, str], SharedEmbedWorker] = {}
_WORKERS_LOCK = threading.Lock()


def _key(backend: str, data_dir: Path) -> tuple[str, str]:
    return backend, str(Path(data_dir).resolve())


def _forget(backend: str, data_dir: Path) -> SharedEmbedWorker | None:
    """The process's worker for this backend and data directory, no longer the process's (None: it had none)."""
    with _WORKERS_LOCK:
        return _WORKERS.pop(_key(backend, data_dir), None)


def shared_worker(backend: str, data_dir: Path) -> SharedEmbedWorker:
    """The process's worker for this backend and data directory (its embedding cache)."""
    key = _key(backend, data_dir)
    with _WORKERS_LOCK:
        if key not in _WORKERS:
            _WORKERS[key] = SharedEmbedWorker(backend, Path(data_dir))
        return _WORKERS[key]


def cancel(backend: str, data_dir: Path) -> SharedEmbedWorker | None:
    """Stop and forget the worker of a run that is being stopped (``SharedEmbedWorker.cancel``)."""
    worker = _forget(backend, data_dir)
    if worker is not None:
        dropped = worker.cancel()
        log.warning(
            "run stopped: the embedding cache keeps the %d texts encoded; %d queued ones are left",
            worker.encoded,
            dropped,
        )
    return worker


def release(backend: str, data_dir: Path) -> SharedEmbedWorker | None:
    """Stop and forget the worker at the end of a run (the model stays loaded: embedder_factory keeps it), so that
    the next run starts from the cache on disk, not from what this one held in memory.

    Shown and recorded as a "drain" stage: the texts still queued when the last source ended (its count), and how
    many of them were encoded (the rest were found in the cache or shared): its time is part of the run's, its
    texts are counted in the sources' embed records."""
    worker = _forget(backend, data_dir)
    if worker is not None:
        encoded = worker.encoded
        with progress.stage("drain", worker.waiting_texts(), unit="texts") as bar:
            worker.on_taken = bar.advance
            worker.stop()
            bar.note(encoded=worker.encoded - encoded)
    return worker
