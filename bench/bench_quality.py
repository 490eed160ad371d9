"""Retrieval quality of the fast embedding path against the reference: nDCG@10 on judged queries over the Midnight docs.

    PYTHONPATH=. .venv/bin/python bench/bench_quality.py [--chunks 3500] [--queries N] [--no-hybrid] [--no-save]

Queries and judgments: ``bench/eval/midnight_docs_queries.jsonl`` (how they were judged:
``bench/eval/README.md``), graded 2 (answers the question) and 1 (partly answers it).

Corpus: every judged file plus a deterministic sample of the other files of the Midnight
docs (shuffled with a fixed seed, taken whole until ``--chunks`` chunks are reached),
chunked by the real extractors with the default policy's sizes, each chunk embedded as a
refresh embeds it (``schemas.embedded_text.embed_text``: heading path + text).  Identical texts
(the corpus holds identical copies of some pages) are embedded once, as the refresh's
content-hash cache does.  Runtime: the torch reference dominates; on 2 cores it embeds
~20-30 of these chunks/s, so the default 3,500 chunks take ~2.5 min quiet, more under load.

Both sides embed the same chunk texts: the reference is plain
``SentenceTransformer(model_path, device="cpu").encode`` (torch fp32), the fast path is
``query.onnx_encoder.OnnxEncoder.encode`` (int8 ONNX, its default batch size) over the export
``encoder.onnx_export.ensure_encoder`` makes.  Each side embeds the queries with its
own model; the fast path embeds every query alone (``enc.encode([q])``), as serving does.

Ranking: files by their best chunk's cosine, the top 10 distinct files.  nDCG@10 with
graded (linear) gains is computed by ``sklearn.metrics.ndcg_score`` over the ranked files
plus the judged files that were not retrieved (so the ideal ranking counts every judged
file); recall@10 is the share of a query's grade-2 files in its top 10.  The hybrid
figure fuses, per query, the dense top 100 chunks with the BM25 top 100 (the project's
lexical channel: ``warehouse.bm25.build_bm25`` + ``query.lexical.LexicalIndex``) by
reciprocal rank fusion (``query.fusion.rrf``, the default policy's k = 60 and weights),
then ranks files by their best fused chunk.  Goal (issue 6): abs(nDCG@10 fast − reference) ≤ 0.01.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import CORPUS, ENCODER_CACHE, FAST, REFERENCE, ROOT, figure, print_figures, save, setup_env  # noqa: E402

QUERIES = ROOT / "bench" / "eval" / "midnight_docs_queries.jsonl"
K = 10
GOAL = 0.01
# The judged files alone are ~3,300 chunks (several answers live in long reference pages, which are embedded
# whole); the rest is a sample of other files.  The torch reference embeds ~20-30 of these chunks/s on 2 cores.
DEFAULT_CHUNKS = 3500
SEED = 0


def load_queries(path: Path = QUERIES) -> list[dict]:
    """The evaluation queries: [{"id", "query", "relevant": {path: grade}}], in file order."""
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            q = json.loads(line)
            if not (isinstance(q, dict) and isinstance(q.get("relevant"), dict) and q.get("query")):
                raise ValueError(f"{path}:{n}: expected {{'id', 'query', 'relevant': {{path: grade}}}}")
            out.append(q)
    return out


def _distinct(ranked, k: int) -> list:
    return list(dict.fromkeys(ranked))[:k]


def ndcg_at_10(ranked_paths, judgments: dict, k: int = K) -> float:
    """nDCG@k of a ranking of files against graded judgments (unjudged files have gain 0).

    Computed by sklearn's ``ndcg_score`` (gain = grade, discount 1/log2(rank + 1)).  Its
    ideal DCG is taken over the items it is given, so the judged files that were not
    retrieved are appended after the ranking (below rank k), and a ranking shorter than k
    is padded with gain-0 items first, so that no unretrieved file can reach the top k.
    Scores are strictly decreasing, so sklearn's tie handling never applies.
    """
    from sklearn.metrics import ndcg_score

    if not any(g > 0 for g in judgments.values()):
        raise ValueError("nDCG is undefined without a relevant judgment")
    ranked = _distinct(ranked_paths, k)
    missing = [p for p in judgments if p not in ranked]
    gains = (
        [float(judgments.get(p, 0)) for p in ranked]
        + [0.0] * (k - len(ranked))
        + [float(judgments[p]) for p in missing]
    )
    scores = np.arange(len(gains), 0, -1, dtype=np.float64)
    return float(ndcg_score(np.asarray([gains]), scores[None, :], k=k))


def recall_at_10(ranked_paths, judgments: dict, grade: int = 2, k: int = K) -> float:
    """Share of the files judged ``grade`` (or higher) that are in the top k."""
    want = {p for p, g in judgments.items() if g >= grade}
    if not want:
        raise ValueError(f"no file is judged {grade} or higher")
    return len(want & set(_distinct(ranked_paths, k))) / len(want)


def reciprocal_rank(ranked_paths, judgments: dict, grade: int = 1, k: int = K) -> float:
    """1 / rank of the first file judged ``grade`` or higher in the top k (0 when none is): one query's MRR@k."""
    for rank, path in enumerate(_distinct(ranked_paths, k), 1):
        if judgments.get(path, 0) >= grade:
            return 1.0 / rank
    return 0.0


def rank_files(chunk_scores: np.ndarray, chunk_file: np.ndarray, nfiles: int, k: int = K) -> list[int]:
    """File indices ordered by their best chunk's score, best first, at most k (ties: lower index first).

    Chunks scored -inf (not candidates) never put their file in the ranking.
    """
    best = np.full(nfiles, -np.inf)
    np.maximum.at(best, chunk_file, chunk_scores)
    idx = np.flatnonzero(np.isfinite(best))
    order = idx[np.lexsort((idx, -best[idx]))]
    return order[:k].tolist()


def corpus_chunks(queries: list[dict], total_chunks: int, root: Path = CORPUS, seed: int = SEED):
    """(texts, chunk_file, paths, judged_files): every judged file, then a seeded sample of the others.

    Files are taken whole (all their chunks) in a fixed shuffled order until ``total_chunks``
    is reached; judged files are always all included.  ``chunk_file[i]`` indexes ``paths``.
    """
    from bench.bench_extract import corpus_files, extract_all
    from trustindex.encoder.tokens import token_counter
    from trustindex.schemas.embedded_text import embed_text

    judged = sorted({p for q in queries for p in q["relevant"]})
    files = dict(corpus_files(root))
    absent = [p for p in judged if p not in files]
    if absent:
        raise SystemExit(f"{root}: judged files not in the corpus: {absent[:5]}")
    others = sorted(p for p in files if p not in set(judged))
    random.Random(seed).shuffle(others)
    counter = token_counter()
    texts: list[str] = []
    chunk_file: list[int] = []
    paths: list[str] = []

    def add(rel: str) -> int:
        *_, rows = extract_all([(rel, files[rel])], count_tokens=counter, keep_chunks=True)
        if rows:
            paths.append(rel)
            for _rel, c in rows:
                texts.append(embed_text(c.heading_path, c.symbol_path, rel, c.text))
                chunk_file.append(len(paths) - 1)
        return len(rows)

    empty = [rel for rel in judged if add(rel) == 0]
    if empty:
        raise SystemExit(f"judged files without a passage (the extractors found nothing): {empty}")
    for rel in others:
        if len(texts) >= total_chunks:
            break
        add(rel)
    return texts, np.asarray(chunk_file, dtype=np.int64), paths, len(judged)


def _normalise(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _evaluate(queries, rankings: list[list[str]]) -> dict:
    nd = [ndcg_at_10(r, q["relevant"]) for q, r in zip(queries, rankings, strict=True)]
    rc = [recall_at_10(r, q["relevant"]) for q, r in zip(queries, rankings, strict=True)]
    return {"ndcg": nd, "recall": rc, "ndcg_mean": float(np.mean(nd)), "recall_mean": float(np.mean(rc))}


def run(total_chunks: int = DEFAULT_CHUNKS, n_queries: int | None = None, hybrid: bool = True) -> dict:
    from sentence_transformers import SentenceTransformer

    from trustindex.encoder.onnx_export import ensure_encoder
    from trustindex.query.fusion import rrf, top_ranking
    from trustindex.query.onnx_encoder import OnnxEncoder
    from trustindex.schemas.embedding_model import model_path
    from trustindex.schemas.policy import Policy

    t_all = time.perf_counter()
    queries = load_queries()[:n_queries] if n_queries else load_queries()
    t0 = time.perf_counter()
    texts, chunk_file, paths, n_judged = corpus_chunks(queries, total_chunks)
    extract_s = time.perf_counter() - t0
    qtexts = [q["query"] for q in queries]

    # Identical chunk texts (the corpus holds identical copies of pages) are embedded once and shared, as the
    # refresh's embedding cache (keyed by content hash) shares them; both sides see the same unique texts.
    first: dict[str, int] = {}
    inverse = np.fromiter((first.setdefault(t, len(first)) for t in texts), np.int64, len(texts))
    unique = list(first)

    weights = model_path()
    files = ensure_encoder(ENCODER_CACHE, weights)
    fast = OnnxEncoder(files.directory)
    t0 = time.perf_counter()
    fast_chunks = _normalise(fast.encode(unique))[inverse]
    fast_s = time.perf_counter() - t0
    fast_q = _normalise(np.vstack([fast.encode([q]) for q in qtexts]))

    st = SentenceTransformer(str(weights), device="cpu", local_files_only=True)
    t0 = time.perf_counter()
    ref_chunks = _normalise(st.encode(unique))[inverse]
    ref_s = time.perf_counter() - t0
    ref_q = _normalise(st.encode(qtexts))

    chunk_cos = (fast_chunks * ref_chunks).sum(axis=1)
    query_cos = (fast_q * ref_q).sum(axis=1)
    nfiles = len(paths)
    dense = {}
    for side, chunks, qv in (("reference", ref_chunks, ref_q), ("fast", fast_chunks, fast_q)):
        scores = qv @ chunks.T
        dense[side] = [[paths[i] for i in rank_files(s, chunk_file, nfiles)] for s in scores]
    ev = {side: _evaluate(queries, r) for side, r in dense.items()}

    hyb = None
    if hybrid:
        from trustindex.query.lexical import LexicalIndex
        from trustindex.warehouse.bm25 import build_bm25

        fz = Policy.default().fusion
        depth = fz.candidate_depth
        hyb_rank = {"reference": [], "fast": []}
        with tempfile.TemporaryDirectory(prefix="bench-quality-") as tmp:
            build_bm25(texts, Path(tmp))
            lex = LexicalIndex(Path(tmp))
            for j, q in enumerate(qtexts):
                bm, nterms = lex.scores(q)
                lex_rank = top_ranking(bm, depth, positive_only=True) if nterms else None
                for side, chunks, qv in (("reference", ref_chunks, ref_q), ("fast", fast_chunks, fast_q)):
                    rankings = [(top_ranking(chunks @ qv[j], depth), fz.dense_weight)]
                    if lex_rank is not None:
                        rankings.append((lex_rank, fz.lexical_weight))
                    fused = rrf(rankings, fz.rrf_k)
                    s = np.full(len(texts), -np.inf)
                    s[np.fromiter(fused.keys(), np.int64)] = np.fromiter(fused.values(), np.float64)
                    hyb_rank[side].append([paths[i] for i in rank_files(s, chunk_file, nfiles)])
        hyb = {side: _evaluate(queries, r) for side, r in hyb_rank.items()}

    per_query = []
    for j, q in enumerate(queries):
        row = {
            "id": q["id"],
            "ndcg_reference": round(ev["reference"]["ndcg"][j], 4),
            "ndcg_fast": round(ev["fast"]["ndcg"][j], 4),
            "diff": round(ev["fast"]["ndcg"][j] - ev["reference"]["ndcg"][j], 4),
            "top10_overlap": len(set(dense["reference"][j]) & set(dense["fast"][j])),
            "same_top10_order": dense["reference"][j] == dense["fast"][j],
            "query_cosine": round(float(query_cos[j]), 4),
        }
        if hyb:
            row["hybrid_diff"] = round(hyb["fast"]["ndcg"][j] - hyb["reference"]["ndcg"][j], 4)
        per_query.append(row)

    ref_nd, fast_nd = ev["reference"]["ndcg_mean"], ev["fast"]["ndcg_mean"]
    delta = fast_nd - ref_nd
    # How much of the mean difference is query sampling: a paired bootstrap over the queries (seeded).
    d = np.asarray(ev["fast"]["ndcg"]) - np.asarray(ev["reference"]["ndcg"])
    boot = d[np.random.default_rng(SEED).integers(0, d.size, (10_000, d.size))].mean(axis=1)
    ci95 = [float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))]
    figures = [
        figure(f"nDCG@10 dense ({FAST})", fast_nd, "", REFERENCE, ref_nd),
        figure(
            "nDCG@10 dense difference (onnx − reference)", delta, "", goal=f"abs(Δ) ≤ {GOAL}", met=abs(delta) <= GOAL
        ),
        figure(
            f"recall@10 of grade-2 files, dense ({FAST})",
            ev["fast"]["recall_mean"],
            "",
            REFERENCE,
            ev["reference"]["recall_mean"],
        ),
    ]
    if hyb:
        hd = hyb["fast"]["ndcg_mean"] - hyb["reference"]["ndcg_mean"]
        figures += [
            figure(
                f"nDCG@10 hybrid BM25 + dense, RRF k=60 ({FAST})",
                hyb["fast"]["ndcg_mean"],
                "",
                REFERENCE,
                hyb["reference"]["ndcg_mean"],
            ),
            figure(
                "nDCG@10 hybrid difference (onnx − reference)", hd, "", goal=f"abs(Δ) ≤ {GOAL}", met=abs(hd) <= GOAL
            ),
        ]
    figures += [
        figure("evaluation queries (judged)", len(queries), "queries"),
        figure("evaluation corpus", len(texts), "chunks"),
    ]
    n_grades = [g for q in queries for g in q["relevant"].values()]
    wall = time.perf_counter() - t_all
    return {
        "figures": figures,
        "queries": len(queries),
        "judgments": len(n_grades),
        "grade2": n_grades.count(2),
        "grade1": n_grades.count(1),
        "chunks": len(texts),
        "unique_chunk_texts": len(unique),
        "files": nfiles,
        "judged_files": n_judged,
        "sample_files": nfiles - n_judged,
        "ndcg_reference": ref_nd,
        "ndcg_fast": fast_nd,
        "ndcg_diff": delta,
        "ndcg_diff_sd_per_query": float(d.std(ddof=1)) if d.size > 1 else 0.0,
        "ndcg_diff_bootstrap_ci95": ci95,
        "ndcg_abs_diff_max_per_query": max(abs(r["diff"]) for r in per_query),
        "queries_with_different_ndcg": sum(1 for r in per_query if r["diff"] != 0),
        "queries_with_same_top10_order": sum(1 for r in per_query if r["same_top10_order"]),
        "recall2_reference": ev["reference"]["recall_mean"],
        "recall2_fast": ev["fast"]["recall_mean"],
        "hybrid_ndcg_reference": hyb["reference"]["ndcg_mean"] if hyb else None,
        "hybrid_ndcg_fast": hyb["fast"]["ndcg_mean"] if hyb else None,
        "chunk_cosine_median": float(np.median(chunk_cos)),
        "chunk_cosine_min": float(chunk_cos.min()),
        "query_cosine_min": float(query_cos.min()),
        "onnx_batch_size": "encoder default (same-length runs for a batch-independent encoder, else 1)",
        "onnx_threads": fast.threads,
        "reference_encode_s": ref_s,
        "fast_encode_s": fast_s,
        "extract_s": extract_s,
        "wall_s": wall,
        "per_query": per_query,
        "method": f"bench/bench_quality.py: {len(queries)} developer questions with {len(n_grades)} graded judgments "
        f"(bench/eval/midnight_docs_queries.jsonl; 2 = answers, 1 = partly answers) over {len(texts)} "
        f"chunks ({len(unique)} distinct texts, each embedded once) of {nfiles} Midnight docs files "
        f"({n_judged} judged files + a seeded sample of the others, real extractors, embed_text as a refresh "
        f"embeds); "
        f"reference = SentenceTransformer (torch fp32), "
        f"fast = OnnxEncoder int8 (its default batching; queries embedded alone); files "
        f"ranked by their best chunk's cosine, top 10; nDCG@10 with linear graded gains by "
        f"sklearn.metrics.ndcg_score (unretrieved judged files counted in the ideal), recall@10 = share of "
        f"grade-2 files in the top 10; hybrid = dense top {Policy.default().fusion.candidate_depth} "
        f"and BM25 top {Policy.default().fusion.candidate_depth} chunks fused by RRF (k = "
        f"{Policy.default().fusion.rrf_k}), files by best fused chunk; per-query differences and a "
        f"paired bootstrap interval of the mean difference are in results.json.",
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--chunks",
        type=int,
        default=DEFAULT_CHUNKS,
        help=f"corpus size in chunks: every judged file, then sampled files up to this (default {DEFAULT_CHUNKS})",
    )
    ap.add_argument("--queries", type=int, default=None, help="only the first N queries (a smoke run)")
    ap.add_argument("--no-hybrid", action="store_true", help="skip the BM25 + dense (RRF) figure")
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args(argv)
    setup_env()
    r = run(a.chunks, a.queries, not a.no_hybrid)
    print_figures("quality", r["figures"])
    diffs = [q for q in r["per_query"] if q["diff"] != 0]
    print(
        f"  {r['queries']} queries, {r['chunks']} chunks ({r['judged_files']} judged + {r['sample_files']} sampled "
        f"files); chunk cosine onnx vs reference: median {r['chunk_cosine_median']:.4f}, min "
        f"{r['chunk_cosine_min']:.4f}; encode: reference {r['reference_encode_s']:.0f} s, onnx "
        f"{r['fast_encode_s']:.0f} s; total {r['wall_s']:.0f} s"
    )
    lo, hi = r["ndcg_diff_bootstrap_ci95"]
    print(
        f"  nDCG@10 difference per query: sd {r['ndcg_diff_sd_per_query']:.4f}; mean difference, paired "
        f"bootstrap 95% interval over the queries: [{lo:+.4f}, {hi:+.4f}]"
    )
    print(
        f"  queries whose nDCG@10 differs: {len(diffs)}"
        + "".join(
            f"\n    {q['id']}: reference {q['ndcg_reference']:.4f}  onnx {q['ndcg_fast']:.4f}  diff {q['diff']:+.4f}"
            f"  (top-10 overlap {q['top10_overlap']})"
            for q in diffs
        )
    )
    if not a.no_save:
        save("quality", r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
