"""Extraction → embedding as a bounded pipeline within a build (issue 17 item 1).

While a source task extracts its files on one core, a worker thread embeds the chunk texts of the documents
already extracted (onnxruntime and the tokenizer release the GIL), so the two cores are not idle on either
side of the line between the source task and the embed-index-publish task.  The queue between them is
bounded: extraction waits when embedding falls that far behind, and memory stays bounded.

Output does not depend on scheduling: a text's vector is a function of the text alone (the int8 encoder
runs texts of one token length together with static activation scales, or, before recipe 5, each text on its
own: docs/embedding.md), the worker only fills the content-hash
embedding cache, and the build still embeds, in its stable row order, whatever the cache lacks (everything
when the overlap is off).  The worker runs inside the source task (Prefect's thread, or a Dask worker with the
data directory) and is drained before the task returns, so tasks stay coarse and nothing crosses processes.

Since issue 29 the worker is by default one per process, shared by every source (encoder/worker.py);
``TRUSTINDEX_EMBED_WORKER=per-source`` brings back a worker per source task for the benches.
"""

from __future__ import annotations

import contextvars
import logging
import os
import queue
import threading
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trustindex.encoder.embedding_cache import EmbeddingCache, PendingVectors
from trustindex.encoder.factory import make_embedder
from trustindex.encoder.worker import MAX_TEXTS_PER_CALL, QUEUE_DOCUMENTS, Feed, shared_worker
from trustindex.runtime import progress
from trustindex.schemas.embedded_text import embed_text
from trustindex.schemas.embedding_model import encoder_cache_dir

Row = Mapping[str, Any]  # a chunks-table row as ingest makes it (ingest/rows.py)

log = logging.getLogger(__name__)

# The switch: "off" (or 0/false/no) embeds only after every source is extracted, as before the pipeline.
OVERLAP_ENV = "TRUSTINDEX_OVERLAP"
_ON, _OFF = ("1", "on", "true", "yes"), ("0", "off", "false", "no")
# "shared" (the default): one worker per process fed by every source (encoder/worker.py); "per-source": a
# worker thread per source task, as before issue 29 (kept for the benches that measure the difference).
WORKER_ENV = "TRUSTINDEX_EMBED_WORKER"
SHARED, PER_SOURCE = "shared", "per-source"
_DONE = object()


def overlap_enabled() -> bool:
    raw = os.environ.get(OVERLAP_ENV, "on").strip().lower()
    if raw in _ON:
        return True
    if raw in _OFF:
        return False
    raise ValueError(f"{OVERLAP_ENV}={raw!r}: expected on or off")


def worker_mode() -> str:
    raw = os.environ.get(WORKER_ENV, SHARED).strip().lower()
    if raw not in (SHARED, PER_SOURCE):
        raise ValueError(f"{WORKER_ENV}={raw!r}: expected {SHARED} or {PER_SOURCE}")
    return raw


@dataclass
class PipelineStats:
    texts: int = 0  # chunk texts submitted
    cache_hits: int = 0  # distinct texts the cache held already
    encoded: int = 0  # distinct texts embedded by the worker (and put in the cache)
    failed: str | None = None  # the worker's error: the build embeds what it left
    waited: bool = True  # False: the source ended before its texts were embedded (the worker counts them)


def EmbedPipeline(backend: str, data_dir: Path, source: str, mode: str = SHARED):  # noqa: N802 (was the class)
    """A source's way into embedding: ``submit`` each extracted document's chunk rows, ``close`` when done."""
    if mode == PER_SOURCE:
        return PerSourcePipeline(backend, data_dir, source)
    return SharedPipeline(backend, data_dir, source)


def _pairs(chunks: list[Row]) -> list[tuple[str, str]]:
    return [
        (r["content_sha256"], embed_text(r["heading_path"] or [], r["symbol_path"], r["path"], r["text"]))
        for r in chunks
    ]


class SharedPipeline:
    """A source's feed into the process's one embedding worker; its "model" stage is the wait for the one load
    (free after the first source), its "embed" stage runs from its first document to its last text embedded."""

    def __init__(self, backend: str, data_dir: Path, source: str):
        self.source = source
        self.worker = shared_worker(backend, Path(data_dir))
        self.feed = Feed(source)
        self.stats = PipelineStats()
        self._stages = ExitStack()
        self._bar: progress._Stage | None = None

    def submit(self, chunks: list[Row]) -> None:
        pairs = _pairs(chunks)
        if not pairs:
            return
        if self._bar is None:
            with progress.stage("model", source=self.source):
                self.worker.embedder()
            self._bar = self._stages.enter_context(progress.stage("embed", unit="texts", source=self.source))
            self.feed.on_encoded = self._bar.advance
        self.worker.submit(self.feed, pairs)

    def close(self) -> PipelineStats:
        """The source's last texts handed over.  When the flow drains the worker before its build, the source does
        not wait for them (its "embed" stage ends here and its counts are what was embedded so far; the flow counts
        the run's total from the worker); otherwise it waits until they are in the cache."""
        if self._bar is not None:
            wait = not self.worker.drained_by_flow
            if not wait:
                self.feed.on_encoded = None  # the stage ends now: the worker must not advance it later
            f = self.worker.finish(self.feed, wait=wait)
            self._bar.note(cache_hits=f.cache_hits, shared=f.shared, distinct=len(f.seen), waited=wait)
            self._stages.close()
            self.stats = PipelineStats(f.texts, f.cache_hits, f.encoded, f.failed, wait)
        return self.stats


class PerSourcePipeline:
    """``submit`` each extracted document's chunk rows; ``close`` waits for the worker and fills the cache.

    The model is loaded by the worker on the first document, so a source with nothing to extract (its tables
    reused) loads nothing.  A worker error is logged and leaves the texts to the build's own embedding pass:
    it never fails the source."""

    def __init__(self, backend: str, data_dir: Path, source: str):
        self.backend, self.data_dir, self.source = backend, Path(data_dir), source
        self.stats = PipelineStats()
        self._queue: queue.Queue = queue.Queue(maxsize=QUEUE_DOCUMENTS)
        self._started = False
        # the task's context: the worker's stage records land in the task's list (progress.recording)
        self._thread = threading.Thread(
            target=contextvars.copy_context().run, args=(self._run,), name=f"embed-{source}", daemon=True
        )

    def submit(self, chunks: list[Row]) -> None:
        pairs = _pairs(chunks)
        if not pairs:
            return
        if not self._started:
            self._started = True
            self._thread.start()
        self.stats.texts += len(pairs)
        self._queue.put(pairs)  # blocks while the queue is full: extraction waits for embedding

    def close(self) -> PipelineStats:
        if self._started:
            self._queue.put(_DONE)
            self._thread.join()
        return self.stats

    def _run(self) -> None:
        try:
            self._embed_all()
        except Exception as exc:  # the build's own pass embeds whatever is missing; say why it has to
            self.stats.failed = f"{type(exc).__name__}: {exc}"
            log.warning("embedding during extraction of %s stopped (%s); the build embeds the rest", self.source, exc)
            while self._queue.get() is not _DONE:  # keep draining so that extraction never blocks on a dead worker
                pass

    def _embed_all(self) -> None:
        with progress.stage("model", source=self.source):  # free when this process has loaded it already
            embedder = make_embedder(self.backend, cache_dir=encoder_cache_dir(self.data_dir))
        cache = EmbeddingCache(self.data_dir / "cache" / "embeddings", embedder.cache_key, embedder.dimensions)
        seen: set[str] = set()
        new = PendingVectors(cache)  # committed every COMMIT_TEXTS texts: a kill keeps what was encoded
        with progress.stage("embed", unit="texts", source=self.source) as bar:
            done = False
            while not done:
                pairs, done = self._take()
                fresh = {}
                for sha, text in pairs:
                    if sha not in seen:
                        seen.add(sha)
                        fresh[sha] = text
                hits = cache.get(list(fresh))
                self.stats.cache_hits += len(hits)
                todo = [s for s in fresh if s not in hits]
                if todo:
                    new.add(todo, embedder.encode([fresh[s] for s in todo]))
                    self.stats.encoded += len(todo)
                    bar.advance(len(todo))
            new.commit()
            bar.note(cache_hits=self.stats.cache_hits, distinct=len(seen))

    def _take(self) -> tuple[list[tuple[str, str]], bool]:
        """What has queued up (waiting for at least one document), up to MAX_TEXTS_PER_CALL; True at the end."""
        item = self._queue.get()
        if item is _DONE:
            return [], True
        pairs = list(item)
        while len(pairs) < MAX_TEXTS_PER_CALL:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is _DONE:
                return pairs, True
            pairs.extend(item)
        return pairs, False
