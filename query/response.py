"""Build the response JSON of the contract (schemas/response.schema.json)."""

from __future__ import annotations

import math

from trustindex.schemas.answer_signals import LOW_CONFIDENCE, UNCALIBRATED
from trustindex.schemas.page_url import passage_page_url
from trustindex.schemas.web_url import cite_lines

# 3: answer_confidence is P(the top hit's page answers), calibration_status and low_confidence (issue 16)
# 4: ranking_score is the ordering score (query/score.py) with its terms in ranking_terms; display_confidence
#    follows it; abstention_note; an abstained response is never high (issue 26)
SCORE_CONTRACT_VERSION = "4"


def provenance(d, i: int) -> dict:
    doc = d.docs[d.chunk_doc[i]]
    v = d.chunks.value
    start, end = v("start_line", i), v("end_line", i)
    headings = list(v("heading_path", i) or [])
    url = cite_lines(doc["url"], start, end) if doc["url"] else None
    site_page = doc.get("page_url")
    return {
        "source": doc["source"],
        "repo": doc["repo"],
        "commit": doc["commit"],
        "path": doc["path"],
        "start_line": start,
        "end_line": end,
        "heading_path": headings,
        "symbol_path": v("symbol_path", i),
        "url": url,
        # the page a person opens: the published site's page and section when the source has a site_url,
        # else the hosting URL
        "page_url": passage_page_url(site_page, headings) if site_page else url,
    }


def _round(x: float) -> float:
    return float(round(x, 6))


def hit(d, c: dict, rank: int, ceiling: float, best_score: float, dense_rank: dict, lex_rank: dict) -> dict:
    """One hit of the response; ``c["factors"]`` and ``c["provenance"]`` as ``shown`` gives them, ``c["score"]``
    its ordering score and ``best_score`` the best of the candidate pool (both as shown: query/score.py)."""
    i = c["i"]
    score = _round(c["score"])
    display = ceiling * (score / best_score) if best_score > 0 else 0.0
    terms = c["passage_terms"]
    return {
        "rank_position": rank,
        "chunk_id": d.chunk_ids[i],
        "relevance_score": _round(c["relevance"]),
        "ranking_score": score,
        "trust_score": _round(c["trust"]),
        "confidence": _round(c["confidence"]),
        "display_confidence": _round(min(display, ceiling)),
        "ranking_terms": _clean(
            {
                "ranking_relevance": c["ranking_relevance"],
                "trust_weight": c["weights"][0],
                "relevance_weight": c["weights"][1],
                "passage": terms,
                **({"page": c["page_terms"]} if c.get("page_terms") is not None else {}),
                **({"rerank": {"read": "rerank" in c, "value": c.get("rerank", 0.0)}} if c.get("reranked") else {}),
            }
        ),
        "text": c["text"] if "text" in c else d.texts([i])[0],
        "provenance": c["provenance"],
        "factors": c["factors"],
        "channels": {
            "dense": {"rank": dense_rank.get(i), "score": _round(c["cosine"])},
            "lexical": {"rank": lex_rank.get(i), "score": _round(c["bm25"])},
            **({"rerank": {"score": _round(c["rerank"])}} if "rerank" in c else {}),
        },
        "also_in": [provenance(d, j) for j in c.get("also", [])],
    }


def shown(d, i: int, factors: dict) -> dict:
    """What a hit shows of passage ``i`` besides its scores: its provenance and its explained factors, cleaned."""
    return {"provenance": provenance(d, i), "factors": _clean(factors)}


def clean(obj):
    """``obj`` with its floats rounded as the response shows them."""
    return _clean(obj)


def _clean(obj):
    """Floats rounded (non-finite ones None) all through ``obj``; the exact types first (the common case)."""
    t = type(obj)
    if t is dict:
        return {k: _clean(v) for k, v in obj.items()}
    if t is str or t is int or t is bool or obj is None:
        return obj
    if isinstance(obj, float):
        return _round(obj) if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


def dated_sources(data) -> list[dict]:
    """Each source of the snapshot with the commit it holds and that commit's date (how current the answer is)."""
    rows = data.sources or {
        n: {**s, "source": n} for s in data.manifest.sources if (n := s.get("source") or s.get("name"))
    }
    return [
        {"source": n, "commit": rows[n].get("commit"), "commit_date": rows[n].get("commit_date")} for n in sorted(rows)
    ]


def response(
    *,
    query: str,
    snapshot_id: str,
    built_at: str,
    sources: list[dict],
    policy,
    targets: list[dict],
    strict: bool,
    match_tier: str,
    best_cosine: float,
    answer_confidence: float | None,
    signals: dict[str, float],
    abstained: bool,
    reason: str | None,
    note: str | None,
    channels: dict,
    hits: list[dict],
    also: list[str],
    signed: bool = False,
) -> dict:
    status = policy.calibration_status
    if reason == LOW_CONFIDENCE:
        hits = [{**h, "low_confidence": True} for h in hits]
    return {
        "score_contract_version": SCORE_CONTRACT_VERSION,
        "query": query,
        "also": also,
        "snapshot_id": snapshot_id,
        "built_at": built_at,
        "sources": sources,
        "signed": signed,
        "policy_id": policy.policy_id,
        "targets": targets,
        "strict": strict,
        "match_tier": match_tier,
        "best_cosine": _round(best_cosine),
        "calibration_status": status,
        "calibration_id": policy.match.calibration_id if status != UNCALIBRATED else None,
        "answer_confidence": _round(answer_confidence) if answer_confidence is not None else None,
        "answer_signals": {k: _round(v) for k, v in signals.items()},
        "min_answer_confidence": policy.match.min_answer_confidence if status != UNCALIBRATED else None,
        "abstained": abstained,
        "abstention_reason": reason,
        "abstention_note": note,
        "channels": channels,
        "hits": hits,
    }
