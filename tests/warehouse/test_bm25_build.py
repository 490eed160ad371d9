"""The build's vectorised BM25 index (warehouse/bm25.py) writes exactly the files bm25s's own loop writes."""

import random

import bm25s
import pytest
from bm25s.tokenization import Tokenized

from tests.kits.realdata import REAL_DOCS, needs_real_docs
from trustindex.schemas.lexical import tokenize
from trustindex.warehouse.bm25 import K1, METHOD, B, build_bm25, corpus_ids

WORDS = [f"w{i}" for i in range(400)] + ["ledger", "circuit", "compact", "proof", "wallet", "disclose"]


def reference_files(texts: list[str], out) -> dict[str, bytes]:
    """bm25s's own index on the same ids and vocabulary as build_bm25 (the saved files, by name)."""
    ids, vocab = corpus_ids([tokenize(t) for t in texts])
    retriever = bm25s.BM25(k1=K1, b=B, method=METHOD)
    retriever.index(Tokenized(ids=ids, vocab=vocab), show_progress=False)
    retriever.save(str(out), show_progress=False)
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def built_files(texts: list[str], out) -> dict[str, bytes]:
    build_bm25(texts, out)
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.name != "tokenizer.json"}


def generated(seed: int, n: int) -> list[str]:
    """Passages of skewed length and vocabulary: repeated terms, one-word and empty passages, a long one."""
    rng = random.Random(seed)
    texts = []
    for i in range(n):
        length = rng.choice([0, 1, 3, 20, 80, 200]) if i % 50 else 1500
        texts.append(" ".join(rng.choices(WORDS, weights=[1 / (k + 1) for k in range(len(WORDS))], k=length)))
    return texts


@pytest.mark.parametrize("seed,n", [(0, 1), (1, 7), (2, 300), (3, 1200)])
def test_saved_files_are_bm25s_own_byte_for_byte(tmp_path, seed, n):
    texts = generated(seed, n)
    ours = built_files(texts, tmp_path / "ours")
    ref = reference_files(texts, tmp_path / "ref")
    assert ours.keys() == ref.keys() and "data.csc.index.npy" in ours
    different = [name for name in ref if ours[name] != ref[name]]
    assert not different, f"files differ from bm25s's: {different}"


@pytest.mark.parametrize("block", [1, 7, 64, 5000])
def test_the_index_built_a_block_at_a_time_is_the_same(tmp_path, monkeypatch, block):
    """Issue 29: the (passage, term) pairs and the scores are made a block of tokens at a time (a passage longer
    than the block is a block of its own); any block size gives bm25s's own files."""
    import trustindex.warehouse.bm25 as bm25

    monkeypatch.setattr(bm25, "BLOCK", block)
    texts = generated(4, 400)
    assert built_files(texts, tmp_path / "ours") == reference_files(texts, tmp_path / "ref")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # bm25s's mean length of no passages, both ways
def test_no_passages_still_builds(tmp_path):
    assert built_files([], tmp_path / "ours") == reference_files([], tmp_path / "ref")


@needs_real_docs
def test_real_docs_passages_match_bm25s(tmp_path):
    texts = [f.read_text(errors="replace")[:4000] for f in sorted(REAL_DOCS.rglob("*.md*"))[:600]]
    assert built_files(texts, tmp_path / "ours") == reference_files(texts, tmp_path / "ref")
