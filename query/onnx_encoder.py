"""Query-side sentence encoder: all-MiniLM-L6-v2 as int8 ONNX, no torch.

Serving processes load this instead of sentence-transformers: importing torch costs
~6 s and a query ~12 ms, this loads in ~0.3 s and embeds a query in a few ms
(measurements in docs/embedding.md).  It imports only numpy, onnxruntime, tokenizers
and the standard library (and the snapshot contract in ``schemas/``), so a serving tier
never pulls in the build stack.

The directory it reads is written by ``encoder.onnx_export.export_encoder``:

    encoder.json      model id, dimensions, max_seq_length, pooling, normalize,
                      quantization, sha256 of every file, sha256 of the source weights,
                      batch_independent (recipe 5: static activation scales, so texts
                      of one token length may share a run; absent before)
    model.int8.onnx   the transformer (inputs input_ids, attention_mask,
                      token_type_ids; output last_hidden_state)
    tokenizer.json    the model's WordPiece tokenizer (truncation 256, no fixed padding)

Pooling and normalisation follow sentence-transformers' ``Pooling(mode="mean")`` and
``Normalize`` modules: the mean of the token vectors under the attention mask, then
division by the L2 norm.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from trustindex.schemas.embedding_model import TOKENIZER_FILE  # the export keeps the model's file name

ENCODER_JSON = "encoder.json"
MODEL_FILE = "model.int8.onnx"
# Bumped when encoder.json changes shape; readers refuse a format they do not know.
FORMAT_VERSION = 1
# Texts per onnxruntime run for an encoder with dynamic activation scales (encoder.json without
# ``batch_independent``, recipe 4 and older): one, because dynamic int8 quantizes activations
# with one scale per run, so in a batch a text's vector moves with its batch-mates (cosine
# ~0.99); alone, it is a function of the text only, which the embedding cache (keyed by
# content hash) and the query side (a query is always embedded alone) rely on.
DEFAULT_BATCH_SIZE = 1
# A ``batch_independent`` encoder (static activation scales, encoder/static_quantization.py) runs
# texts of the same token length together, without padding: each vector is bitwise the one
# the text gets alone.  A run holds up to this many tokens (and SAME_LENGTH_BATCH texts).
SAME_LENGTH_TOKENS = 4096
SAME_LENGTH_BATCH = 64
_REQUIRED_KEYS = ("format_version", "model_id", "dimensions", "max_seq_length", "pooling", "normalize", "files")


class EncoderError(Exception):
    """The encoder directory is missing, corrupt or inconsistent; the message names the file."""


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def available_cores() -> int:
    """Cores this process may run on (the affinity mask, which containers narrow), else os.cpu_count()."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def session_options(threads: int) -> ort.SessionOptions:
    """onnxruntime options for this module's graphs (and query.dense_int8's): ``threads`` intra-op threads."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    # One graph, one request at a time: parallel execution only adds scheduling overhead.
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # Idle intra-op threads sleep instead of spinning: on a shared or busy machine (a server answering several
    # searches at once) spinning threads take the cores the other searches need.  Measured in `trustindex serve`
    # on the 2-core machine at load ~10, 20k passages, every query embedded: p50 81 -> 29 ms at 1 client, server CPU per
    # request 24 -> 19 ms at 16 clients (docs/benchmarks.md, serve).
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.log_severity_level = 3
    return opts


def read_manifest(directory: Path) -> dict:
    """Load and validate encoder.json (shape only; file hashes are checked by verify_files)."""
    path = Path(directory) / ENCODER_JSON
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EncoderError(f"{path}: missing (export the encoder with encoder.onnx_export)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EncoderError(f"{path}: unreadable: {exc}") from None
    if not isinstance(meta, dict):
        raise EncoderError(f"{path}: expected a JSON object")
    missing = [k for k in _REQUIRED_KEYS if k not in meta]
    if missing:
        raise EncoderError(f"{path}: missing keys {missing}")
    if meta["format_version"] != FORMAT_VERSION:
        raise EncoderError(f"{path}: format_version {meta['format_version']!r}, this reader knows {FORMAT_VERSION}")
    if meta["pooling"] != "mean":
        raise EncoderError(f"{path}: pooling {meta['pooling']!r} is not supported (only 'mean')")
    files = meta["files"]
    if not isinstance(files, dict) or set(files) != {MODEL_FILE, TOKENIZER_FILE}:
        raise EncoderError(f"{path}: 'files' must list exactly {MODEL_FILE} and {TOKENIZER_FILE} with their sha256")
    if not (isinstance(meta["dimensions"], int) and meta["dimensions"] > 0):
        raise EncoderError(f"{path}: dimensions must be a positive integer")
    if not (isinstance(meta["max_seq_length"], int) and meta["max_seq_length"] > 2):
        raise EncoderError(f"{path}: max_seq_length must be an integer above 2")
    return meta


def verify_files(directory: Path, meta: dict) -> None:
    """Every file named in encoder.json exists and has the recorded sha256."""
    for name, expected in meta["files"].items():
        path = Path(directory) / name
        if not path.is_file():
            raise EncoderError(f"{path}: missing")
        actual = sha256_file(path)
        if actual != expected:
            raise EncoderError(
                f"{path}: sha256 mismatch (encoder.json says {expected[:12]}…, file is {actual[:12]}…); "
                "the file is corrupt or was replaced: re-export the encoder"
            )


def same_length_batches(lengths: np.ndarray, order: np.ndarray, most: int) -> list[np.ndarray]:
    """``order`` (indices sorted by length) cut into runs of one token length each, of at most ``most`` texts and
    SAME_LENGTH_TOKENS tokens."""
    batches: list[np.ndarray] = []
    start = 0
    while start < len(order):
        n = int(lengths[order[start]])
        end = start + 1
        cap = min(most, max(1, SAME_LENGTH_TOKENS // n))
        while end < len(order) and end - start < cap and int(lengths[order[end]]) == n:
            end += 1
        batches.append(order[start:end])
        start = end
    return batches


class OnnxEncoder:
    """Embeds texts with the exported int8 model; output matches SentenceTransformer.encode (cosine ≥ 0.98).

    ``threads`` defaults to the number of usable cores.  Texts longer than
    ``max_seq_length`` tokens are truncated, exactly as sentence-transformers does.
    """

    def __init__(self, directory: Path, threads: int | None = None, verify: bool = True):
        """``verify=False`` skips the files' sha256 (for a caller that has just checked them, as a snapshot does)."""
        self.directory = Path(directory)
        meta = read_manifest(self.directory)
        if verify:
            verify_files(self.directory, meta)
        self.meta = meta
        self.model_id: str = meta["model_id"]
        self.dimensions: int = meta["dimensions"]
        self.max_seq_length: int = meta["max_seq_length"]
        self.normalize: bool = bool(meta["normalize"])
        # absent in encoders exported before recipe 5: those embed one text per run
        self.batch_independent: bool = meta.get("batch_independent") is True
        self.threads = threads if threads is not None else available_cores()
        if self.threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        try:
            tok = Tokenizer.from_file(str(self.directory / TOKENIZER_FILE))
        except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
            raise EncoderError(f"{self.directory / TOKENIZER_FILE}: cannot load tokenizer: {exc}") from None
        # Set explicitly rather than trusting the file: the upstream tokenizer.json pads and
        # truncates to a fixed 128, which silently changes the embeddings.  Padding is done
        # here per batch (after length sorting), so the tokenizer itself must not pad.
        tok.enable_truncation(self.max_seq_length)
        tok.no_padding()
        self._tokenizer = tok
        self._pad_id = int(meta.get("pad_id", 0))
        self._session: ort.InferenceSession | None = self._open_session(self.threads)
        self._lock = threading.Lock()
        self._pool_session: ort.InferenceSession | None = None
        self._executor: ThreadPoolExecutor | None = None
        names = {i.name for i in self._session.get_inputs()}  # the session just opened
        if not {"input_ids", "attention_mask"} <= names:
            raise EncoderError(f"{self.directory / MODEL_FILE}: inputs {sorted(names)} lack input_ids/attention_mask")
        self._wants_token_types = "token_type_ids" in names

    def _open_session(self, threads: int) -> ort.InferenceSession:
        try:
            return ort.InferenceSession(
                str(self.directory / MODEL_FILE), session_options(threads), providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph types
            raise EncoderError(f"{self.directory / MODEL_FILE}: onnxruntime cannot load it: {exc}") from None

    def _main_session(self) -> ort.InferenceSession:
        """The session on the intra-op threads, opened again after ``release_sessions``."""
        with self._lock:
            if self._session is None:
                self._session = self._open_session(self.threads)
            return self._session

    def _parallel(self) -> tuple[ort.InferenceSession, ThreadPoolExecutor]:
        """A single-threaded session shared by ``threads`` workers, each running its own batches.

        Why not intra-op threads for bulk work: every operator then ends in a barrier
        across the threads, ~100 barriers a batch; when a core is busy elsewhere (a shared
        or oversubscribed machine) each barrier waits for the slowest thread.  Whole
        batches in parallel synchronise once per batch.  Measured in docs/embedding.md.
        """
        with self._lock:
            if self._pool_session is None or self._executor is None:  # both are set and cleared together
                self._pool_session = self._open_session(1)
                self._executor = ThreadPoolExecutor(self.threads, thread_name_prefix="onnx-encoder")
            return self._pool_session, self._executor

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """Token count of each text after truncation, special tokens included."""
        return [len(e.ids) for e in self._tokenizer.encode_batch(list(texts))]

    def encode(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        """Embed ``texts``: float32 array of shape (len(texts), dimensions), rows L2-normalised.

        Texts are tokenized once and sorted by token length, and the rows are put back in
        input order.  A batch-independent encoder runs texts of one token length together
        (no padding; ``batch_size`` caps a run, default SAME_LENGTH_BATCH texts and
        SAME_LENGTH_TOKENS tokens); an older one runs ``batch_size`` texts (default 1), each
        batch padded to its longest.  One batch runs on the intra-op threads (lowest latency
        for a query); several run ``threads`` at a time on one thread each.
        """
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise TypeError("encode expects a list of str")
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch(list(texts))
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        order = np.argsort(-lengths, kind="stable")  # longest first: a memory problem shows up at once
        if self.batch_independent:
            batches = same_length_batches(lengths, order, batch_size or SAME_LENGTH_BATCH)
        else:
            size = batch_size or DEFAULT_BATCH_SIZE
            batches = [order[i : i + size] for i in range(0, len(order), size)]

        def run(session: ort.InferenceSession, idx: np.ndarray) -> None:
            width = int(lengths[idx[0]])
            ids = np.full((len(idx), width), self._pad_id, dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, j in enumerate(idx):
                n = int(lengths[j])
                ids[row, :n] = encodings[j].ids
                mask[row, :n] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if self._wants_token_types:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = session.run(["last_hidden_state"], feeds)[0]
            out[idx] = self._pool(hidden, mask)  # disjoint rows per batch: no lock needed

        if len(batches) == 1 or self.threads == 1:
            session = self._main_session()
            for idx in batches:
                run(session, idx)
        else:
            session, executor = self._parallel()
            for _ in executor.map(lambda idx: run(session, idx), batches):
                pass  # re-raises the first worker error here
        return out

    def close(self) -> None:
        """Stop the worker threads (they are also stopped at interpreter exit)."""
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
            self._executor, self._pool_session = None, None

    def release_sessions(self) -> None:
        """Close the worker threads and every inference session; the next ``encode`` opens them again (~0.2 s).

        Why: onnxruntime keeps each session's memory arena at the size of the largest batch it ran and never
        returns it: after a bulk encode of real passages (up to 256 tokens) the two sessions held ~0.6 GB, which the
        org refresh (issue 29) carried through its whole build stage, where nothing is embedded."""
        self.close()
        with self._lock:
            self._session = None

    def _pool(self, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Masked mean over tokens, then L2 normalisation (sentence-transformers Pooling + Normalize)."""
        m = mask.astype(np.float32)
        summed = np.einsum("bs,bsd->bd", m, hidden.astype(np.float32, copy=False))
        pooled = summed / np.maximum(m.sum(axis=1, keepdims=True), 1e-9)
        if not self.normalize:
            return pooled
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)  # torch.nn.functional.normalize's eps

    def __repr__(self) -> str:
        return f"OnnxEncoder({str(self.directory)!r}, model_id={self.model_id!r}, threads={self.threads})"
