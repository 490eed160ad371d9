"""The serving-side BM25 reader against bm25s itself (reference implementation)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import bm25s
import numpy as np
import pytest

from tests.kits.realdata import REAL_DOCS, needs_real_docs
from trustindex.query.lexical import LexicalIndex
from trustindex.schemas.lexical import tokenize
from trustindex.warehouse.bm25 import build_bm25

CORPUS = REAL_DOCS
pytestmark = needs_real_docs


def passages(n=300):
    files = sorted(CORPUS.rglob("*.md"))[:120]
    out = []
    for f in files:
        words = f.read_text(errors="replace").split()
        for i in range(0, len(words), 120):
            out.append(" ".join(words[i : i + 120]))
    return out[:n]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    texts = passages()
    d = tmp_path_factory.mktemp("bm25")
    build_bm25(texts, d)
    return texts, d


QUERIES = [
    "how do I install the compact compiler",
    "ledger state witness",
    "proof server docker",
    "zswap token transfer",
    "DApp connector wallet API",
    "pragma language_version",
    "circuit circuit circuit",
]


def test_scores_equal_bm25s(built):
    texts, d = built
    ours = LexicalIndex(d)
    ref = bm25s.BM25.load(str(d))
    for q in QUERIES:
        mine, n = ours.scores(q)
        assert n > 0
        theirs = ref.get_scores([t for t in tokenize(q) if t in ref.vocab_dict])
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)


def test_build_is_byte_identical_across_processes(built, tmp_path):
    """bm25s orders its vocabulary by set iteration; ours must not depend on PYTHONHASHSEED."""
    texts, d = built
    (tmp_path / "texts.json").write_text(json.dumps(texts))
    root = Path(__file__).resolve().parents[2]
    for seed in ("1", "2"):
        code = (
            "import json,sys; from pathlib import Path; from warehouse.bm25 import build_bm25; "
            f"build_bm25(json.loads(Path({str(tmp_path / 'texts.json')!r}).read_text()), Path(sys.argv[1]))"
        )
        subprocess.run(
            [sys.executable, "-c", code, str(tmp_path / seed)],
            check=True,
            cwd=root,
            env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)},
        )
    for f in sorted(d.iterdir()):
        assert f.read_bytes() == (tmp_path / "1" / f.name).read_bytes() == (tmp_path / "2" / f.name).read_bytes()


def test_unknown_terms_score_nothing(built):
    _, d = built
    scores, n = LexicalIndex(d).scores("zzzqqq xylophone")
    assert n == 0 and not scores.any()


def test_tokenizer_splits_identifiers():
    toks = tokenize("useContractState and compact_runtime.setLedger")
    assert "contract" in toks and "ledger" in toks and "runtim" in toks
    assert "and" not in toks


def test_the_build_keeps_each_terms_passages_ascending(tmp_path):
    """The BM25 files' contract the query side's page coverage relies on (schemas/lexical.py postings_ascending):
    held by what bm25s writes, and restored by the build should a matrix come out of order."""
    from trustindex.schemas.lexical import postings_ascending
    from trustindex.warehouse.bm25 import _postings_ascending

    texts = [f"contract witness {i % 3} deploy proof{i % 5} ledger" for i in range(40)]
    build_bm25(texts, tmp_path / "bm25")
    lex = LexicalIndex(tmp_path / "bm25")
    assert postings_ascending(lex.indices, lex.indptr)
    # a matrix with one term's passages out of order is put in order, each passage keeping its score
    scores = {"data": np.array([1.0, 2.0, 3.0, 4.0]), "indices": np.array([2, 0, 1, 0]), "indptr": np.array([0, 2, 4])}
    _postings_ascending(scores, 3, 2)
    assert scores["indices"].tolist() == [0, 2, 0, 1] and scores["data"].tolist() == [2.0, 1.0, 4.0, 3.0]
