"""Fit the ranking relevance's weights on the dev half of bench/eval, choose by cross-validation, report test once.

    PYTHONPATH=. .venv/bin/python bench/fit_default_fusion.py [--data DIR] [--k 100] [--write]

1. Features (dev queries only): every hit of ``Index.search(query, k)`` under the hand-set policy, with the terms it
   shows (``ranking_terms``: passage dense/lexical/identifier, page support/page_vector/page_terms and, in a snapshot
   with the site's links, anchor/authority; trust; for a page the site does not serve, its ``served_floor``, held
   fixed) and the files it names (its own, then its ``also_in`` copies).
2. Cross-validation (5 folds by query, dev only): the pairwise fit of calibration/fusion.py at each penalty,
   reranking each held-out fold from its features; the penalty with the best mean held-out nDCG@10 is chosen
   (``inf``: the hand weights, nothing moved) when it beats the hand weights there by more than ``CV_MARGIN``; a fit
   no better than that on held-out dev queries is noise, and the hand weights stay.
3. The chosen fit on all of dev, then the real search under it on dev and test against the hand weights in the
   same run (bench_retrieval's ``trustindex_files``: the bench's own reading of a response).
4. ``--write``: the figures and the fit (with its ``fusion_id``) are saved (key "fusion_fit", docs/benchmarks.md).
   A fit ships only if it beats the hand weights on both corpora's test halves together, losing no more than 0.01
   on either (``ships``); shipping it means writing its weights as the policy's defaults (schemas/policy_sections.py)
   with its fusion_id in the comment beside them, which moves the identity test's BASE.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.bench_quality import ndcg_at_10  # noqa: E402
from bench.bench_retrieval import _file, trustindex_files  # noqa: E402
from bench.common import figure, print_figures, save, setup_env  # noqa: E402
from bench.retrieval_corpora import CORPORA, build_snapshot  # noqa: E402
from trustindex.calibration import fusion as F  # noqa: E402

PENALTIES = (0.0, 0.001, 0.01, 0.1, 1.0)
CV_MARGIN = 0.001  # mean held-out nDCG@10 a fit must gain over the hand weights to be chosen
FOLDS = 5


def page_term_names(policy, links: bool) -> tuple[str, ...]:
    """The page terms a hit shows under this policy (query/score.py ``PageTerms.explained``), in its order;
    ``links``: every snapshot has the site's links indexed (the anchor and authority terms)."""
    from trustindex.query.score import weights_in_use

    return tuple(weights_in_use(policy, True, links)[0].in_use())


def has_links(index) -> bool:
    """Whether this snapshot has the site's links indexed: its hits then show the anchor and authority terms
    (query/score.py reads the same part)."""
    return index.data.page_links is not None


def hand_weights(policy, page_terms) -> F.Weights:
    from trustindex.query.score import weights_in_use

    r = policy.relevance
    w, _ = weights_in_use(policy, True, links=True)
    return F.Weights(
        passage={"dense": r.dense_weight, "lexical": r.lexical_weight, "identifier": r.identifier_weight},
        page={t: getattr(w, t) for t in page_terms},
        trust_weight=policy.confidence.trust_weight,
    )


def features(index, queries, k: int, page_terms, source: str) -> list[F.QueryHits]:
    out = []
    for q in queries:
        hits = index.search(q.query, k=k)["hits"]
        passage = np.full((len(hits), len(F.PASSAGE_TERMS)), np.nan)
        page = np.zeros((len(hits), len(page_terms)))
        trust, floor, files = np.zeros(len(hits)), np.ones(len(hits)), []
        for j, h in enumerate(hits):
            terms = h["ranking_terms"]
            for i, t in enumerate(F.PASSAGE_TERMS):
                if t in terms["passage"]:
                    passage[j, i] = terms["passage"][t]["value"]
            pg = terms.get("page", {})
            for i, t in enumerate(page_terms):
                page[j, i] = pg.get(t, {}).get("value", 0.0)
            route = terms.get("route", {})  # an unrouted page's cap below the served ones, held as it was shown
            floor[j] = route.get("served_floor") or 1.0 if route.get("status") == "unrouted" else 1.0
            trust[j] = h["trust_score"]
            names = [_file(h["provenance"], source), *(_file(c, source) for c in h["also_in"])]
            files.append(tuple(dict.fromkeys(names)))
        out.append(F.QueryHits(q.id, passage, page, trust, floor, tuple(files), dict(q.relevant)))
    return out


# The policy key of each page term's weight (query/score.py weights_in_use).
PAGE_KEYS = {
    "support": "page_weight",
    "page_vector": "page_vector_weight",
    "page_terms": "page_terms_weight",
    "anchor": "anchor_weight",
    "authority": "authority_weight",
}


def policy_file(w: F.Weights, path: Path) -> Path:
    """A policy.toml that sets the fitted weights (everything else as the built-in policy)."""
    lines = [
        "[relevance]",
        f"dense_weight = {w.passage['dense']}",
        f"lexical_weight = {w.passage['lexical']}",
        f"identifier_weight = {min(w.passage['identifier'], 1.0)}",
        "[fusion]",
        *(f"{PAGE_KEYS[t]} = {v}" for t, v in w.page.items()),
        "[confidence]",
        f"trust_weight = {w.trust_weight}",
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def real_ndcg(index, queries, source: str) -> dict[str, float]:
    per: dict[str, list[float]] = {}
    for q in queries:
        per.setdefault(q.split, []).append(ndcg_at_10(trustindex_files(index, q.query, source=source), q.relevant))
    return {s: float(np.mean(v)) for s, v in sorted(per.items())}


def open_corpus(name: str, data: Path | None):
    """(the corpus, its index under the built-in policy, its in-domain queries); None where it cannot be built."""
    from trustindex.query.index import Index

    corpus = CORPORA[name]
    if data is None:
        why = corpus.missing()
        if why:
            print(f"fusion fit: corpus {name} skipped: {why}")
            return None
        data = build_snapshot(corpus)
    queries = [q for q in corpus.questions() if q.in_domain]
    return corpus, Index.open(data_dir=data, warm=True), queries


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data",
        nargs="*",
        default=[],
        metavar="CORPUS=DIR",
        help="an existing data directory of a corpus (default: build each under the bench work folder)",
    )
    ap.add_argument("--corpora", nargs="+", default=sorted(CORPORA), choices=sorted(CORPORA))
    ap.add_argument("--k", type=int, default=100, help="hits read per dev query (default 100)")
    ap.add_argument("--write", action="store_true", help="save the result (and the shipped weights if they ship)")
    a = ap.parse_args(argv)
    setup_env()
    given = dict(x.split("=", 1) for x in a.data)
    t0 = time.perf_counter()
    opened = [c for name in a.corpora if (c := open_corpus(name, Path(given[name]) if name in given else None))]
    if not opened:
        return 0
    hand_policy = opened[0][1].policy
    terms = page_term_names(hand_policy, all(has_links(ix) for _, ix, _ in opened))
    hand = hand_weights(hand_policy, terms)
    groups = [features(ix, [q for q in qs if q.split == "dev"], a.k, terms, c.source) for c, ix, qs in opened]
    start = np.maximum(hand.vector(terms), 1e-3)  # a weight of 0 cannot move in log space: start it just above
    start[-1] = hand.trust_weight
    cv = F.cross_validate(groups, start, PENALTIES, FOLDS)
    best = max(cv, key=lambda lam: (cv[lam], -lam if math.isfinite(lam) else -1e9))
    if cv[best] <= cv[math.inf] + CV_MARGIN:
        best = math.inf
    print(f"  cross-validation (mean held-out nDCG@10 over corpora, reranked from features): {cv}; chosen {best}")
    fitted = hand if not math.isfinite(best) else F.Weights.of(F.fit(groups, start, best), terms).normalised()
    real = {}
    with tempfile.TemporaryDirectory() as tmp:
        pol = policy_file(fitted, Path(tmp) / "fitted.toml")
        for c, ix, qs in opened:
            before = real_ndcg(ix, qs, c.source)
            ix.reload_policy(str(pol))
            real[c.name] = {"hand": before, "fitted": real_ndcg(ix, qs, c.source)}
    wall = time.perf_counter() - t0
    gains = {n: r["fitted"]["test"] - r["hand"]["test"] for n, r in real.items()}
    ship = all(g >= -0.01 for g in gains.values()) and sum(gains.values()) > 0
    result = {
        "hand": hand.__dict__,
        "fitted": fitted.__dict__,
        "fusion_id": F.fusion_id(fitted, "dev of " + ", ".join(f"{c.name}@{ix.snapshot_id}" for c, ix, _ in opened)),
        "cross_validation": {str(k): v for k, v in cv.items()},
        "chosen_penalty": str(best),
        "real_search": real,
        "ships": ship,
        "wall_s": wall,
    }
    print(json.dumps(result, indent=1))
    figs = [
        figure(f"nDCG@10 {n}, {side} weights ({s})", v, "")
        for n, r in real.items()
        for side in ("hand", "fitted")
        for s, v in r[side].items()
    ]
    print_figures("fusion fit", figs)
    if a.write:
        save("fusion_fit", {"figures": figs, **result})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
