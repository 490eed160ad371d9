"""The lexical channel against bm25s on the same chunks and tokenizer: time per query and top-10 agreement.

    PYTHONPATH=. .venv/bin/python bench/bench_lexical.py [--files 1200] [--rounds 5]

Chunks: real passages from the first ``--files`` files of the Midnight docs, through the
real extractors, indexed as a refresh indexes them (``warehouse.bm25.build_bm25`` over
``schemas.embedded_text.embed_text``).  Queries: section headings sampled from the same docs
(short, natural, in-domain).  Ours: ``query.lexical.LexicalIndex.scores`` (tokenize,
accumulate the saved BM25 columns) + the top 10.  Reference: bm25s loaded from the same
saved index, the query tokenized by the same tokenizer, ``BM25.get_scores`` +
``bm25s.selection.topk``.  Rounds interleave the two; the ratio is the median of the
per-round ratios of total time.  Goal: ours ≤ 1.2× bm25s per query.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import figure, print_figures, save, setup_env  # noqa: E402

GOAL = 1.2


def real_chunks(files: int) -> tuple[list[str], list[str]]:
    """Texts as build_bm25 sees them, and headings to use as queries."""
    from bench.bench_extract import corpus_files, extract_all
    from trustindex.schemas.embedded_text import embed_text

    _, _, _, _, rows = extract_all(corpus_files(limit=files), keep_chunks=True)
    texts = [embed_text(c.heading_path, c.symbol_path, rel, c.text) for rel, c in rows]
    headings = sorted({c.heading_path[-1] for _rel, c in rows if c.heading_path and len(c.heading_path[-1]) > 8})
    return texts, headings


def run(files: int = 1200, rounds: int = 5, queries: int = 200, chunks=None) -> dict:
    import bm25s
    from bm25s import selection

    from trustindex.query.fusion import top_ranking
    from trustindex.query.lexical import LexicalIndex
    from trustindex.schemas.lexical import tokenize
    from trustindex.warehouse.bm25 import build_bm25

    texts, headings = chunks or real_chunks(files)
    qs = random.Random(0).sample(headings, min(queries, len(headings)))
    with tempfile.TemporaryDirectory(prefix="bench-lexical-") as tmp:
        d = Path(tmp)
        t0 = time.perf_counter()
        build_bm25(texts, d)
        build_s = time.perf_counter() - t0
        ours = LexicalIndex(d)
        ref = bm25s.BM25.load(str(d))
        vocab = ref.vocab_dict

        def ours_top(q):
            s, n = ours.scores(q)
            return top_ranking(s, 10, positive_only=True) if n else np.zeros(0, np.int64), s

        def ref_top(q):
            ids = [vocab[t] for t in tokenize(q) if t in vocab]
            if not ids:
                return np.zeros(0, np.int64), None
            s = ref.get_scores(ids)
            _vals, idx = selection.topk(s, k=min(10, len(s)), backend="numpy", sorted=True)
            return idx, s

        agree, same_ids, max_diff, known = [], [], 0.0, 0
        for q in qs:  # correctness first (also warms both)
            (a, sa), (b, sb) = ours_top(q), ref_top(q)
            if sb is None:
                continue
            known += 1
            max_diff = max(max_diff, float(np.abs(sa - sb).max()))
            b = b[sb[b] > 0]  # bm25s's top-k includes zero scores when fewer documents match; ours does not
            k = max(1, min(10, len(b)))
            same_ids.append(len(set(a.tolist()) & set(b.tolist())) / k)
            # Equal scores at the cut may be ordered either way: a passage scoring at least bm25s's k-th counts.
            cut = sb[b[k - 1]] - 1e-6 if len(b) else np.inf
            agree.append(sum(1 for x in a[:k].tolist() if sb[x] >= cut) / k)
        ratios, ours_s, ref_s = [], [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            for q in qs:
                ref_top(q)
            r = time.perf_counter() - t0
            t0 = time.perf_counter()
            for q in qs:
                ours_top(q)
            o = time.perf_counter() - t0
            ours_s.append(o / len(qs))
            ref_s.append(r / len(qs))
            ratios.append(o / r)
    ratio = float(np.median(ratios))
    figures = [
        figure(
            "lexical query time",
            np.median(ours_s) * 1e6,
            "µs/query",
            "bm25s",
            np.median(ref_s) * 1e6,
            ratio,
            f"≤ {GOAL}× bm25s",
            ratio <= GOAL,
        ),
        figure(
            "lexical top-10 agreement with bm25s (ties at the cut count)",
            float(np.mean(agree)) if agree else 0.0,
            "",
            goal="1.0",
            met=bool(agree) and float(np.mean(agree)) >= 0.999,
        ),
        figure("lexical top-10 same passages as bm25s", float(np.mean(same_ids)) if same_ids else 0.0, ""),
        figure("lexical max abs score difference vs bm25s", max_diff, ""),
    ]
    return {
        "figures": figures,
        "chunks": len(texts),
        "queries": len(qs),
        "queries_with_known_terms": known,
        "rounds": rounds,
        "ratios": [round(r, 3) for r in ratios],
        "bm25_build_s": build_s,
        "method": f"{len(texts)} real passages (first {files} files of the Midnight docs, real extractors), "
        f"{len(qs)} section headings as queries, the same tokenizer (schemas.lexical) on both sides; "
        f"ours = LexicalIndex.scores + top 10, reference = bm25s get_scores + selection.topk on the "
        f"same saved index; ratio = our time / bm25s's (median of {rounds} interleaved rounds); "
        f"agreement = share of our top 10 that scores at least bm25s's 10th (equal scores at the cut may "
        f"be ordered either way); 'same passages' = plain overlap of the two top-10 sets.",
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=1200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args(argv)
    setup_env()
    r = run(a.files, a.rounds, a.queries)
    print_figures("lexical", r["figures"])
    if not a.no_save:
        save("lexical", r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
