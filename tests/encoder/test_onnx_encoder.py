"""The int8 ONNX query encoder against sentence-transformers, on real Midnight docs passages.

The export is cached across runs in pytest's cache directory (``ensure_encoder``), so only
the first run pays the ~15 s export; thresholds are the ones docs/embedding.md reports.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench.bench_embedding import CORPUS, corpus_passages
from tests.kits.realdata import needs_real_docs
from trustindex.encoder.onnx_export import DYNAMIC_RECIPE, RECIPE_VERSION, ensure_encoder, exporter_key
from trustindex.encoder.sentence_transformers_embedder import SentenceTransformerEncoder
from trustindex.query.onnx_encoder import (
    ENCODER_JSON,
    MODEL_FILE,
    SAME_LENGTH_TOKENS,
    TOKENIZER_FILE,
    EncoderError,
    OnnxEncoder,
    same_length_batches,
)
from trustindex.schemas.embedding_model import MODEL_ID

ROOT = Path(__file__).resolve().parents[2]
# Tests that compare on real passages skip without ../shared (needs_real_docs); the encoder's own contract (bad
# input, corrupt files, export reuse, no torch when serving) runs anywhere.

# (query, a phrase found only in the passage it should retrieve)
RETRIEVAL_PAIRS = [
    ("request test tokens from the faucet for a wallet address", "Client for interacting with the Midnight faucet"),
    ("code of conduct: a harassment-free community", "Our Pledge"),
    ("hardware needed to run the node on local virtual machines", "Minimum system requirements"),
    ("error: a witness return type includes a contract value", "witness return values cannot include contract"),
    ("insert a leaf at a given index of a Merkle tree", "insertHashIndex"),
    ("native tokens missing in Lace after restoring the wallet from its seed phrase", "Native Tokens can go missing"),
    ("proof server running in a container", "StaticProofServerContainer"),
]


@pytest.fixture(scope="session")
def encoder_dir(request, tmp_path_factory) -> Path:
    cache = request.config.cache
    root = Path(cache.mkdir("trustindex-onnx-encoder")) if cache is not None else tmp_path_factory.mktemp("enc")
    return ensure_encoder(root).directory


@pytest.fixture(scope="session")
def fast(encoder_dir) -> OnnxEncoder:
    return OnnxEncoder(encoder_dir)


@pytest.fixture(scope="session")
def dynamic(encoder_dir) -> OnnxEncoder:
    """The recipe before issue 30 (dynamic activation scales), as old snapshots carry it."""
    return OnnxEncoder(ensure_encoder(encoder_dir.parent, recipe=DYNAMIC_RECIPE).directory)


@pytest.fixture(scope="session")
def reference() -> SentenceTransformerEncoder:
    return SentenceTransformerEncoder()


@pytest.fixture(scope="session")
def passages() -> list[str]:
    if not CORPUS.is_dir():
        pytest.skip("the real Midnight docs are not at ../shared/corpus/midnight-docs")
    return corpus_passages(n=30)


@pytest.fixture(scope="session")
def both(fast, reference, passages):
    return fast.encode(passages), reference.encode(passages)


def test_equivalence_on_real_passages(fast, both):
    emb, ref = both
    assert emb.shape == ref.shape == (30, fast.dimensions) == (30, 384)
    assert emb.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    cos = (emb * ref).sum(axis=1)
    assert np.median(cos) >= 0.99, f"median cosine {np.median(cos):.4f}"
    assert cos.min() >= 0.98, f"min cosine {cos.min():.4f}"


def test_top1_retrieval_agrees_with_reference(fast, reference, passages, both):
    emb, ref = both
    queries = [q for q, _ in RETRIEVAL_PAIRS]
    q_fast, q_ref = fast.encode(queries), reference.encode(queries)
    for (query, phrase), top_fast, top_ref in zip(
        RETRIEVAL_PAIRS, (q_fast @ emb.T).argmax(1), (q_ref @ ref.T).argmax(1), strict=True
    ):
        expected = [i for i, p in enumerate(passages) if phrase in p]
        assert len(expected) == 1, f"phrase {phrase!r} should pick exactly one sample passage"
        assert top_ref == expected[0], f"reference misses {query!r}: the pair is not a fair probe"
        assert top_fast == top_ref, f"{query!r}: onnx top-1 #{top_fast}, reference #{top_ref}"


def test_rows_come_back_in_input_order(fast, passages):
    forward = fast.encode(passages, batch_size=64)
    backward = fast.encode(passages[::-1], batch_size=64)[::-1]
    np.testing.assert_array_equal(forward, backward)
    assert not np.allclose(forward[0], forward[1], atol=1e-3)


def same_length_texts(encoder: OnnxEncoder, n: int, words: int) -> list[str]:
    """``n`` different texts of one token length: sentences of single-token words, each a different mix."""
    vocab = "ledger proof circuit wallet token node block contract state witness key fee chain data user".split()
    rng = np.random.default_rng(words)
    texts = [" ".join(rng.choice(vocab, size=words)) for _ in range(n)]
    assert len(set(encoder.token_lengths(texts))) == 1 and len(set(texts)) == n
    return texts


def test_the_encoder_is_batch_independent(fast):
    assert fast.batch_independent
    meta = json.loads((fast.directory / ENCODER_JSON).read_text())
    assert meta["recipe_version"] == RECIPE_VERSION and meta["quantization"]["activation_scales"] == "static"


@needs_real_docs
@pytest.mark.parametrize("batch_size", [None, 2, 7, 64])
def test_a_vector_is_bitwise_the_one_its_text_gets_alone(fast, passages, batch_size):
    # Static activation scales: quantization is elementwise, the int8 products exact, the float parts row by row,
    # and a run holds texts of one token length (no padding).  So batch-mates cannot move a vector at all.
    short = same_length_texts(fast, 40, 12)
    long = same_length_texts(fast, 9, 150)
    texts = passages + short + long
    lengths = np.asarray(fast.token_lengths(texts))
    runs = same_length_batches(lengths, np.argsort(-lengths, kind="stable"), batch_size or 64)
    assert max(len(r) for r in runs) > 1  # texts really shared runs
    assert all(len(set(lengths[r])) == 1 and lengths[r].sum() <= max(SAME_LENGTH_TOKENS, lengths[r][0]) for r in runs)
    batched = fast.encode(texts, batch_size=batch_size)
    alone = np.vstack([fast.encode([t]) for t in texts])
    np.testing.assert_array_equal(batched, alone)
    # other batch-mates and another order: still the same bits
    mixed = fast.encode(short[::-1] + passages[5:9] + long[:3])
    np.testing.assert_array_equal(mixed[: len(short)], alone[len(passages) : len(passages) + len(short)][::-1])


def test_one_thread_and_the_intra_op_threads_give_the_same_bits(encoder_dir, fast):
    # The build embeds on single-threaded sessions, a query on the intra-op threads: the same text must give the
    # same vector on either (onnxruntime splits rows and columns among threads, never a sum).
    texts = same_length_texts(fast, 6, 30) + ["how do I deploy a contract", "x"]
    one = OnnxEncoder(encoder_dir, threads=1).encode(texts)
    two = OnnxEncoder(encoder_dir, threads=2)
    np.testing.assert_array_equal(np.vstack([two.encode([t]) for t in texts]), one)


def test_dynamic_scales_embed_one_text_per_run(dynamic, passages):
    # batch_size=1 (the default of an encoder without batch_independent, as old snapshots carry): a text's vector
    # is a function of the text alone.
    assert not dynamic.batch_independent
    alone = np.vstack([dynamic.encode([p]) for p in passages[:8]])
    among_others = dynamic.encode(passages[:8] + ["short query", "x"] + passages[20:24])[:8]
    np.testing.assert_array_equal(among_others, alone)


@pytest.mark.parametrize("batch_size", [2, 7, 32])
def test_dynamic_scales_in_larger_batches_move_vectors(dynamic, passages, batch_size):
    # Why recipe 5 exists: dynamic int8 quantizes activations with one scale per run, so in a batch a text's
    # vector depends on its batch-mates (measured cosine ≥ 0.989 against the text alone).
    alone = dynamic.encode(passages)
    batched = dynamic.encode(passages, batch_size=batch_size)
    cos = (alone * batched).sum(axis=1)
    assert cos.min() >= 0.985, f"min cosine {cos.min():.4f}"
    assert cos.min() < 1.0  # the effect exists: the test would notice if batching stopped mattering


def test_padding_is_masked(dynamic, passages):
    # A short query padded to a long passage's width in one batch (only encoders without batch_independent pad).
    # Were the mask lost in export or fusion, the query would attend to ~250 padding tokens and drift far; what
    # remains is the int8 activation scale shared with the long neighbour (~0.99).
    query = "how do I install the compact compiler"
    long_text = max(passages, key=len)
    assert dynamic.token_lengths([long_text])[0] > 200
    alone = dynamic.encode([query])[0]
    padded = dynamic.encode([long_text, query], batch_size=2)[1]
    assert float(alone @ padded) >= 0.98


def test_empty_and_bad_input(fast):
    assert fast.encode([]).shape == (0, 384)
    with pytest.raises(TypeError):
        fast.encode("a bare string is not a list of texts")
    with pytest.raises(TypeError):
        fast.encode(["ok", None])
    with pytest.raises(ValueError):
        fast.encode(["ok"], batch_size=0)


@needs_real_docs
def test_truncates_at_256_tokens_like_the_reference(fast, reference):
    words = " ".join(corpus_passages(n=3, words=1000)).split()
    assert len(words) >= 1000
    tok = fast._tokenizer
    # Cut the text where a word ends after exactly 254 content tokens ([CLS] + 254 + [SEP]
    # = 256), so that the prefix tokenizes to the same ids the truncated long text gets.
    for skip in range(40):
        long_text = " ".join(words[skip : skip + 1000])
        tok.no_truncation()
        full = tok.encode(long_text)
        tok.enable_truncation(fast.max_seq_length)
        if not full.tokens[255].startswith("##"):
            break
    prefix = long_text[: full.offsets[254][1]]
    assert fast.token_lengths([long_text, prefix]) == [256, 256]
    assert tok.encode(prefix).ids == tok.encode(long_text).ids
    long_emb, prefix_emb = fast.encode([long_text]), fast.encode([prefix])
    np.testing.assert_allclose(long_emb, prefix_emb, atol=1e-6)
    assert float(long_emb[0] @ reference.encode([long_text])[0]) >= 0.98


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _edit_json(path: Path, **changes) -> None:
    meta = json.loads(path.read_text())
    meta.update(changes)
    path.write_text(json.dumps(meta))


CORRUPTIONS = [
    ("model byte flipped", lambda d: _flip_byte(d / MODEL_FILE), MODEL_FILE),
    ("model truncated", lambda d: (d / MODEL_FILE).write_bytes((d / MODEL_FILE).read_bytes()[:1000]), MODEL_FILE),
    ("model missing", lambda d: (d / MODEL_FILE).unlink(), MODEL_FILE),
    ("tokenizer edited", lambda d: (d / TOKENIZER_FILE).write_text("{}"), TOKENIZER_FILE),
    ("manifest missing", lambda d: (d / ENCODER_JSON).unlink(), ENCODER_JSON),
    ("manifest not json", lambda d: (d / ENCODER_JSON).write_text("terminal output, not JSON"), ENCODER_JSON),
    ("manifest lacks files", lambda d: _edit_json(d / ENCODER_JSON, files={}), ENCODER_JSON),
    ("unknown format", lambda d: _edit_json(d / ENCODER_JSON, format_version=99), ENCODER_JSON),
    ("cls pooling", lambda d: _edit_json(d / ENCODER_JSON, pooling="cls"), ENCODER_JSON),
]


@pytest.mark.parametrize("name,corrupt,culprit", CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_corrupt_directory_raises_naming_the_file(encoder_dir, tmp_path, name, corrupt, culprit):
    d = _copy(encoder_dir, tmp_path / "enc")
    corrupt(d)
    with pytest.raises(EncoderError, match=culprit.replace(".", r"\.")):
        OnnxEncoder(d)


def test_ensure_encoder_reuses_a_matching_export(encoder_dir):
    before = {p.name: p.stat().st_mtime_ns for p in encoder_dir.iterdir()}
    again = ensure_encoder(encoder_dir.parent)
    assert again.directory == encoder_dir
    assert encoder_dir.name.endswith(f"-r{RECIPE_VERSION}-x{exporter_key()}")
    assert {p.name: p.stat().st_mtime_ns for p in encoder_dir.iterdir()} == before
    meta = json.loads((encoder_dir / ENCODER_JSON).read_text())
    assert meta["source_sha256"] == again.source_sha256 and meta["model_id"] == MODEL_ID
    assert (meta["dimensions"], meta["max_seq_length"], meta["pooling"], meta["normalize"]) == (384, 256, "mean", True)
    assert meta["quantization"]["per_channel"] is True


def test_serving_import_loads_no_torch(encoder_dir):
    code = (
        "import sys, json\n"
        "from trustindex.query.onnx_encoder import OnnxEncoder\n"
        f"e = OnnxEncoder({str(encoder_dir)!r}, threads=1)\n"
        "v = e.encode(['how do I deploy a contract'])\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules)\n"
        "print(json.dumps({'shape': list(v.shape), 'heavy': heavy}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"shape": [1, 384], "heavy": []}
