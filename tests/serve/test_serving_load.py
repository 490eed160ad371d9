"""Serving under load (issue item 6): one loaded Index, many threads, same answers; corrupt files refused.

* 8 threads × 500 queries (``TRUSTINDEX_LOAD_QUERIES`` per thread) over ~20 distinct
  queries, targets and strict mode included, on the session's loaded ``Index``: no
  error, and every response byte-identical (as JSON) to a single-threaded run.  The
  query encoder is a few ms to ~1 s a call on a loaded 2-core machine, so the long
  run goes through ``Index.search`` on a second handle that shares the loaded
  snapshot and memoises the real encoder's vectors per input list; a shorter run
  drives the real encoder itself from all threads.
* A copy of the live snapshot with one flipped byte is refused at ``Index.open`` with a
  SnapshotError naming the file (the manifest's sha256, schemas/snapshot.py).
* Hostile query text: QueryError for empty or over-long text, results otherwise.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from tests.kits.servekit import QUERIES
from trustindex.query.index import MAX_QUERY_CHARS, Index
from trustindex.query.state import SearchState
from trustindex.schemas.errors import QueryError, SnapshotError
from trustindex.schemas.response import validate_response
from trustindex.schemas.snapshot import resolve_current

pytestmark = pytest.mark.serving_load

THREADS = 8
PER_THREAD = int(os.environ.get("TRUSTINDEX_LOAD_QUERIES", 500))


def as_json(response: dict) -> str:
    return json.dumps(response, sort_keys=True)


class MemoEncoder:
    """The real encoder's output, computed once per exact input list (batch padding can move floats)."""

    def __init__(self, real):
        self.real, self.memo, self.lock, self.calls = real, {}, threading.Lock(), 0

    def encode(self, texts: list[str]) -> np.ndarray:
        key = tuple(texts)
        with self.lock:
            hit = self.memo.get(key)
        if hit is None:
            hit = np.asarray(self.real.encode(list(texts)))
            with self.lock:
                self.memo[key] = hit
                self.calls += 1
        return hit.copy()


@pytest.fixture(scope="module")
def baseline(index):
    """Single-threaded answers through a handle that shares the loaded snapshot and memoises the encoder."""
    memo = copy.copy(index)  # same SnapshotData and Policy objects: nothing reloaded
    memo.state = SearchState(index.data, index.policy, index.dense, MemoEncoder(index.encoder))
    expected = [as_json(memo.search(q, **kw)) for q, kw in QUERIES]
    for text in expected:
        validate_response(json.loads(text))
    return memo, expected


def _hammer(search, expected, per_thread: int) -> list[str]:
    """Every thread runs its own shuffled walk through QUERIES; returns the mismatches."""
    mismatches, start = [], threading.Barrier(THREADS)

    def worker(t: int) -> None:
        rng = np.random.default_rng(t)
        start.wait()  # all threads in flight together
        for j in rng.integers(0, len(QUERIES), per_thread):
            q, kw = QUERIES[j]
            got = as_json(search(q, **kw))
            if got != expected[j]:
                mismatches.append(f"thread {t}, query {j}: {got[:200]}")

    with ThreadPoolExecutor(THREADS) as pool:
        for f in [pool.submit(worker, t) for t in range(THREADS)]:
            f.result()  # re-raises any exception a query raised
    return mismatches


def test_concurrent_queries_match_single_threaded(baseline):
    memo, expected = baseline
    calls = memo.encoder.calls
    assert not _hammer(memo.search, expected, PER_THREAD)
    assert memo.encoder.calls == calls  # every query was one of the twenty


def test_real_encoder_under_concurrency_matches(index, baseline):
    _memo, expected = baseline
    assert not _hammer(index.search, expected, 25)


# ---------------------------------------------------------------- corrupt snapshot files
def _flip(path, offset=None) -> None:
    data = bytearray(path.read_bytes())
    i = len(data) // 2 if offset is None else offset
    data[i] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "name",
    [
        "chunks.parquet",
        "documents.parquet",
        "embeddings.npy",
        "bm25/vocab.index.json",
        "bm25/data.csc.index.npy",
        "encoder/model.int8.onnx",
    ],
)
def test_flipped_byte_is_refused_naming_the_file(refreshed, tmp_path, name):
    live = resolve_current(refreshed["data"])
    if not (live / name).is_file():
        pytest.skip(f"this snapshot has no {name} (its embedding backend carries no such file)")
    data = tmp_path / "data"
    shutil.copytree(live, data / "snapshots" / live.name)  # a real copy: never touch the shared snapshot
    shutil.copy(refreshed["data"] / "CURRENT", data / "CURRENT")
    _flip(data / "snapshots" / live.name / name)
    with pytest.raises(SnapshotError, match=rf"snapshot {live.name}: file {name} fails its sha256 check"):
        Index.open(data_dir=data)
    with pytest.raises(SnapshotError, match=name):
        Index.open(data / "snapshots" / live.name)


@pytest.mark.parametrize(
    "section, key",
    [
        ('"files": {', '"sha256": "'),  # a file's checksum: the id no longer matches
        ('"files": {', '"size": '),  # a file's size: the file disagrees
        ('"embedding_model": {', '"sha256": "'),  # covered by the manifest's own checksum
        ('"row_counts": {', '"chunks": '),
    ],
    ids=["file-sha256", "file-size", "model-sha256", "row-count"],
)
def test_flipped_manifest_byte_is_refused(refreshed, tmp_path, section, key):
    live = resolve_current(refreshed["data"])
    snap = tmp_path / "snapshots" / live.name
    shutil.copytree(live, snap)
    text = (snap / "manifest.json").read_text()
    at = text.index(key, text.index(section)) + len(key)  # a digit or hex character: still valid JSON
    _flip(snap / "manifest.json", len(text[:at].encode()))
    # a flipped bit can leave a checksum that is no hex ("a" -> "`", "f" -> "g"): refused by the manifest's format then
    with pytest.raises(SnapshotError, match=rf"{live.name}.*(does not match|manifest says|needs a size)"):
        Index.open(snap)


# ---------------------------------------------------------------- hostile query text
@pytest.mark.parametrize(
    "text, words",
    [
        ("", "empty"),
        (" \t\n\r ", "empty"),
        ("\x00\x01\x02\x1f\x7f", "empty"),
        ("x" * (MAX_QUERY_CHARS + 1), "limit"),
        ("proof server " * 1000, "limit"),
    ],
    ids=["empty", "whitespace", "control-only", "one-over-limit", "13k-chars"],
)
def test_unusable_query_text_is_a_query_error(index, text, words):
    with pytest.raises(QueryError, match=words):
        index.search(text)
    with pytest.raises(QueryError, match=words):
        index.search("proof server", also=[text])


@pytest.mark.parametrize(
    "text",
    [
        "p" * MAX_QUERY_CHARS,  # exactly at the limit
        ("proof server memory " * 600)[:MAX_QUERY_CHARS],
        "install\x00the\x08Compact\x1bcompiler\x7f",
        "Compact コンパイラ компилятор 编译器 مترجم कंपाइलर 🚀 install",
        "\u202ereversed\u202c zero\u200bwidth\ufeff joiner\u200d",
        "𝕮𝖔𝖒𝖕𝖆𝖈𝖙 🧪🧪🧪",
        "' OR 1=1; -- DROP TABLE chunks; <script>alert(1)</script> ${jndi:ldap://x}",
        "....,,,;;;!!!",
    ],
    ids=[
        "at-limit",
        "long-prose",
        "control-chars",
        "mixed-scripts",
        "bidi-zero-width",
        "math-letters-emoji",
        "injection-strings",
        "punctuation-only",
    ],
)
def test_odd_query_text_gets_results(index, text):
    r = index.search(text, k=3)
    validate_response(r)
    assert not any(ord(c) < 0x20 or ord(c) == 0x7F for c in r["query"])


@pytest.mark.parametrize("text", ["install \ud800 compiler", "\udfff"], ids=["high", "low"])
def test_lone_surrogate_is_a_query_error(index, text):
    with pytest.raises(QueryError, match="Unicode"):
        index.search(text)
