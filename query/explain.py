"""Every hit's ordering score recomputed from the response alone, the order checked, and the formula as text.

Pure: reads a response (query/response.py's typed one, or its JSON read back into it: schemas/response.schema.json)
and the policy it names, never a snapshot, so an assistant, a test or a reviewer can verify why each passage ranked
where it did (query/score.py states the formula).
Shown numbers are rounded to 6 decimals, so a recomputed value matches its shown one within ``TOLERANCE``; the
order is read from the shown numbers themselves, so it is checked exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from trustindex.query.response import Hit, SearchResponse, as_hit, as_response
from trustindex.query.score import weights_in_use
from trustindex.schemas.hit_parts import PageRelevance
from trustindex.schemas.policy import Policy

TOLERANCE = 2e-5  # a product of up to eight 6-decimal numbers, each off by at most 5e-7


@dataclass(frozen=True)
class Recomputed:
    trust: float  # the product of the factors' multipliers
    relevance: float  # the passage's own: Σ weight × value / Σ weight of its channels
    ranking_relevance: float
    ranking_score: float
    confidence: float


def recompute(hit: Hit | dict) -> Recomputed:
    """One hit's scores from its own factors and ranking terms."""
    h = as_hit(hit)
    terms = h.ranking_terms
    trust = h.factors.trust
    channels = terms.passage.values()
    weight = sum(c.weight for c in channels)
    rel = sum(c.weight * c.value for c in channels) / weight if weight > 0 else 0.0
    if terms.rerank is not None:
        ranking_rel = terms.rerank.value if terms.rerank.read else 0.0
    elif terms.page is not None:
        p = terms.page
        ranking_rel = (rel + sum(t.weight * t.value for t in p.weighted)) / p.normaliser
    else:
        ranking_rel = rel
    wt, wr = terms.trust_weight, terms.relevance_weight
    ranking_rel = min(1.0, max(0.0, ranking_rel))
    floor = terms.route.served_floor  # an unrouted page yields (query/routes.py)
    floor = 1.0 if floor is None else floor
    return Recomputed(trust, rel, ranking_rel, floor * trust**wt * ranking_rel**wr, trust**wt * rel**wr)


def check(response: SearchResponse | dict, policy: Policy) -> list[str]:
    """What disagrees in ``response``: a hit whose shown scores its terms do not give, weights that are not the
    policy's, or an order that the shown ranking_score and the tie rule do not give.  Empty when it all holds."""
    r = as_response(response)
    problems: list[str] = []
    hits = r.hits
    for h in hits:
        problems += [f"hit {h.rank_position}: {p}" for p in _check_hit(h, policy, r.channels.lexical.ran)]
    for a, b in zip(hits, hits[1:], strict=False):
        ka = (-a.ranking_score, a.ranking_terms.route.unrouted, -a.confidence, a.chunk_id)
        kb = (-b.ranking_score, b.ranking_terms.route.unrouted, -b.confidence, b.chunk_id)
        if ka > kb:
            problems.append(f"hit {b.rank_position} should rank above hit {a.rank_position}")
        if b.display_confidence > a.display_confidence:
            problems.append(f"display_confidence rises at hit {b.rank_position}")
    problems += _route_problems(hits, policy)
    problems += _page_problems(hits, policy)
    if [h.rank_position for h in hits] != list(range(1, len(hits) + 1)):
        problems.append("rank_position is not 1, 2, 3, …")
    if r.abstained and r.match_tier != "low":
        problems.append(f"abstained but match_tier {r.match_tier}")
    return problems


def _page_problems(hits: list[Hit], policy: Policy) -> list[str]:
    """A page that heads two hits while the policy shows one hit per page (but for a passage the content-risk rules
    flagged: it is always a hit of its own), or a passage folded under a hit that ranked above it."""
    out = []
    first: dict[str, int] = {}
    for h in hits:
        p = h.provenance
        page = f"{p.source}/{p.part_of}" if p.part_of else p.file  # a partial is cited at the page rendering it
        risk = h.factors.content_risk
        if risk is not None and risk.status != "no_findings":
            continue
        if policy.fusion.one_hit_per_page and page in first:
            out.append(f"hit {h.rank_position} is of the page of hit {first[page]} ({page})")
        first.setdefault(page, h.rank_position)
        out += [
            f"hit {h.rank_position}: same_page {f.chunk_id} ranks above it ({f.ranking_score} > {h.ranking_score})"
            for f in h.same_page
            if f.ranking_score > h.ranking_score
        ]
    return out


def _route_problems(hits: list[Hit], policy: Policy) -> list[str]:
    """An unrouted hit above a served one, or a floor that is not the served hits' lower bound, while the policy
    has unrouted pages yield."""
    if not policy.fusion.unrouted_yields:
        return []
    out = []
    served = [h for h in hits if not h.ranking_terms.route.unrouted]
    for h in hits:
        if not h.ranking_terms.route.unrouted:
            continue
        above = [s for s in served if s.rank_position > h.rank_position]
        if above:
            out.append(f"hit {h.rank_position} is unrouted but ranks above served hit {above[0].rank_position}")
        floor = h.ranking_terms.route.served_floor
        if served and floor is None:
            out.append(f"hit {h.rank_position} is unrouted but shows no served_floor")
        if floor is not None and any(s.ranking_score < floor for s in served):
            out.append(f"hit {h.rank_position}: served_floor {floor} is above a served hit's ranking_score")
    return out


def _check_hit(h: Hit, policy: Policy, lexical_ran: bool) -> list[str]:
    out = []
    r = recompute(h)
    terms = h.ranking_terms
    for name, shown, got in (
        ("trust_score", h.trust_score, r.trust),
        ("relevance_score", h.relevance_score, r.relevance),
        ("ranking_relevance", terms.ranking_relevance, r.ranking_relevance),
        ("ranking_score", h.ranking_score, r.ranking_score),
        ("confidence", h.confidence, r.confidence),
    ):
        if abs(shown - got) > TOLERANCE:
            out.append(f"{name} {shown} but its terms give {got:.6f}")
    rel_w = policy.relevance
    for channel, c in terms.passage.items():
        if c.weight != getattr(rel_w, f"{channel}_weight"):
            out.append(f"{channel} weight {c.weight} is not the policy's {getattr(rel_w, f'{channel}_weight')}")
    conf = policy.confidence
    if (terms.trust_weight, terms.relevance_weight) != (conf.trust_weight, conf.relevance_weight):
        out.append("trust/relevance weights are not the policy's")
    if terms.page is not None:
        p = terms.page
        weights, normaliser = weights_in_use(policy, lexical_ran, p.has_links)
        for name, w in weights.in_use().items():
            term = getattr(p, name)
            if term is None:
                out.append(f"{name} is not shown, but the policy weighs it {w}")
                continue
            shown_weight = term.weight
            if shown_weight != round(w, 6):
                out.append(f"{name} weight {shown_weight} is not the policy's {w}")
        if abs(p.normaliser - normaliser) > 1e-6:
            out.append(f"normaliser {p.normaliser} is not the policy's {normaliser}")
    return out


def formula_lines(hit: Hit | dict) -> list[str]:
    """The formula of one hit with its numbers, as ``--explain`` prints it."""
    h = as_hit(hit)
    t = h.ranking_terms
    wt, wr = t.trust_weight, t.relevance_weight
    power = lambda w: "" if w == 1 else f"^{w:g}"  # noqa: E731 - a one-line formatter
    floor = t.route.served_floor
    yielded = f"served floor {floor:.6f} × " if floor is not None else ""
    lines = [
        f"ranking score {h.ranking_score:.6f} = {yielded}trust {h.trust_score:.3f}{power(wt)} × ranking "
        f"relevance {t.ranking_relevance:.4f}{power(wr)}"
    ]
    if floor is not None:
        lines.append(
            "the docs site does not serve this page (unrouted): it ranks below every served candidate, its score × "
            "the lowest of theirs"
        )
    if t.rerank is not None:
        lines.append(
            f"ranking relevance = cross-encoder probability {t.rerank.value:.4f}"
            if t.rerank.read
            else "ranking relevance 0: the cross-encoder did not read this passage (it reads the best by confidence)"
        )
    elif t.page is not None:
        lines.append(_page_line(h.relevance_score, t.page))
    parts = " + ".join(f"{c.weight:g} × {name} {c.value:.4f}" for name, c in t.passage.items())
    weight = sum(c.weight for c in t.passage.values())
    lines.append(f"relevance {h.relevance_score:.4f} = ({parts}) / {weight:g}")
    lines.append(
        f"confidence {h.confidence:.4f} = trust{power(wt)} × relevance{power(wr)} (the passage alone: the "
        "evidence floor reads it)"
    )
    return lines


def _page_line(relevance: float, p: PageRelevance) -> str:
    """The ranking relevance from the passage's own relevance and its page's terms."""
    sup, vec, terms = p.support, p.page_vector, p.page_terms
    lent = f" from {len(sup.lenders)} page-mate(s)" if sup.lenders else ""
    return (
        f"ranking relevance = (relevance {relevance:.4f} + {sup.weight:g} × support {sup.value:.4f}{lent} + "
        f"{vec.weight:g} × page vector {vec.value:.4f} + {terms.weight:g} × page terms {terms.value:.4f}"
        f"{_focus_terms(p)}{_link_terms(p)}) / {p.normaliser:g}"
    )


def _focus_terms(p: PageRelevance) -> str:
    """The focus terms as ``formula_lines`` writes them ("" for those not weighted)."""
    parts = (("page focus", p.page_focus), ("problem section", p.problem_section))
    return "".join(f" + {t.weight:g} × {name} {t.value:.4f}" for name, t in parts if t is not None)


def _link_terms(p: PageRelevance) -> str:
    """The site's links' terms as ``formula_lines`` writes them ("" for a snapshot without links indexed)."""
    a, au, c = p.anchor, p.authority, p.cited
    if a is None or au is None:
        return ""
    cited = ""
    if c is not None:
        by = f" (linked from {len(c.citers)} of the question's best passages)" if c.citers else ""
        cited = f" + {c.weight:g} × cited {c.value:.4f}{by}"
    return (
        f" + {a.weight:g} × anchor text {a.value:.4f} + {au.weight:g} × authority {au.value:.4f} "
        f"({au.inbound} inbound link{'' if au.inbound == 1 else 's'}){cited}"
    )
