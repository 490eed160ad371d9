"""The ordering score: the one number that orders a response, and the terms each hit shows of it.

    ranking_score     = [served_floor ×] trust_score ^ trust_weight × ranking_relevance ^ relevance_weight
    ranking_relevance = rerank probability                     when a cross-encoder read the passage (0 unread)
                      = (relevance_score + page_weight × support + page_vector_weight × page_vector
                         + page_terms_weight × page_terms + page_focus_weight × page_focus
                         + problem_section_weight × problem_section
                         + anchor_weight × anchor + authority_weight × authority
                         + cited_weight × cited) / normaliser                                        otherwise
    normaliser        = 1 + page_weight × page_passages + page_vector_weight + page_terms_weight
                        + page_focus_weight + problem_section_weight + anchor_weight + authority_weight
                        + cited_weight (the terms in use)
    served_floor      = for a page the docs site does not serve (unrouted), the lowest ranking_score (as shown) of
                        the pool's served candidates, so it ranks below every one of them (query/routes.py)
    ties              : equal ranking_score (as shown, 6 decimals) → served before unrouted, then higher confidence,
                        then the smaller chunk_id

``relevance_score`` is the passage's own (query/relevance.py: its channels' saturated scores, policy-weighted);
``support`` the sum of its page's best ``page_passages`` *eligible* other candidates' relevance, each scaled by
min(1, lender's trust / borrower's trust); ``page_vector`` the dense relevance of the mean vector of the page's
eligible passages; ``page_terms`` the idf-weighted share of the query's terms found in those passages;
``page_focus`` the share of those passages that each hold at least ``fusion.focus_share`` of the query's idf-weighted
terms, and ``problem_section`` 1 when the query reports a problem and the passage's own headings or file name name a
problem section (query/page_focus.py; both only when weighted); ``anchor`` the query's BM25 over the anchor texts
pointing at the page, saturated, and ``authority`` n / (n + k) of its inbound links from its own site, and
``cited`` the saturated loans of the question's best passages on other pages of its site that link to it
(query/page_links.py; all three only in a snapshot with links indexed, ``cited`` only when weighted).  A passage is
eligible to lend when no content risk was found in it and, under targets, its version match is not penalised
(excluded passages are not candidates at all): a flagged passage cannot lift its page-mates by its relevance, and a
low-trust page-mate lends only its share (issue 26).  Every term is in 0..1 and the normaliser is their weights'
sum, so ranking_relevance is in 0..1, query-relative and independent of k.  The legacy / version-folder doubt is
the deprecation factor of trust, not a relevance term.  query/explain.py recomputes all of it from a response.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from trustindex.query.fusion import places_in_runs, run_sizes, run_starts
from trustindex.query.page_focus import page_focus, problem_sections
from trustindex.query.page_links import authority, cited
from trustindex.query.pages import term_postings
from trustindex.query.relevance import dense_relevance, lexical_relevance
from trustindex.schemas.hit_parts import Authority, Cited, PageRelevance, Support, Term, shown_number
from trustindex.schemas.policy import Policy

FORMULA = (
    "ranking_score = trust_score^trust_weight × ranking_relevance^relevance_weight, × served_floor for a page the "
    "docs site does not serve (the lowest ranking_score of the pool's served candidates: it ranks below all of "
    "them); ranking_relevance = the cross-encoder's probability when one read the passage (0 when it did not), "
    "else (relevance_score + page_weight × support + page_vector_weight × page_vector + page_terms_weight × "
    "page_terms + page_focus_weight × page_focus + problem_section_weight × problem_section + anchor_weight × "
    "anchor + authority_weight × authority + cited_weight × cited) / (1 + the weights of the page terms in "
    "use, page_weight counted page_passages times); ties: served before unrouted, then higher confidence, then the "
    "smaller chunk_id"
)
DECIMALS = 6  # the response's rounding: the order is read from the shown numbers, so it is reproducible from them


def shown(x: np.ndarray) -> np.ndarray:
    """Values as the response shows them (query/response.py rounds every float to 6 decimals)."""
    return np.round(np.asarray(x, dtype=np.float64), DECIMALS)


@dataclass
class PageTerms:
    """Per candidate of a pool (arrays, one value a candidate): the page-level relevance terms and their weights."""

    support: np.ndarray
    vector: np.ndarray
    terms: np.ndarray
    weights: PageWeights  # page_weight / page_vector_weight / page_terms_weight ... in use (0: left out)
    normaliser: float
    lenders: list[list[int]] = field(default_factory=list)  # per candidate, the positions that lent it support
    links: Links | None = None  # the site's links' terms (None: the snapshot has no links indexed)
    focus: np.ndarray | None = None  # page_focus (None: its weight is 0, no hit shows it)
    problem: np.ndarray | None = None  # problem_section (None: its weight is 0, no hit shows it)
    cited: CitedBy | None = None  # cited (None: its weight is 0 or the snapshot has no links, no hit shows it)
    shown_weights: PageWeights = field(init=False, repr=False)  # ``weights`` as every hit shows them, rounded once

    def __post_init__(self) -> None:
        self.shown_weights = self.weights.shown()

    def relevance(self, own: np.ndarray) -> np.ndarray:
        w = self.weights
        total = own + w.support * self.support + w.page_vector * self.vector + w.page_terms * self.terms
        if self.focus is not None:
            total = total + w.page_focus * self.focus
        if self.problem is not None:
            total = total + w.problem_section * self.problem
        if self.links is not None:
            total = total + w.anchor * self.links.anchor + w.authority * self.links.authority
        if self.cited is not None:
            total = total + w.cited * self.cited.values
        return total / self.normaliser

    def explained(self, j: int, chunk_ids, rows: np.ndarray) -> PageRelevance:
        """Candidate ``j``'s page terms as a hit shows them (``chunk_ids``: the snapshot's, ``rows``: the pool's)."""
        w = self.shown_weights
        lenders = [chunk_ids[int(rows[m])] for m in self.lenders[j]]
        links = self.links
        return PageRelevance(
            support=Support(shown_number(float(self.support[j])), w.support, lenders),
            page_vector=Term(shown_number(float(self.vector[j])), w.page_vector),
            page_terms=Term(shown_number(float(self.terms[j])), w.page_terms),
            page_focus=_term(self.focus, j, w.page_focus),
            problem_section=_term(self.problem, j, w.problem_section),
            anchor=Term(shown_number(float(links.anchor[j])), w.anchor) if links is not None else None,
            authority=links.explained_authority(j, w.authority) if links is not None else None,
            normaliser=shown_number(self.normaliser),
            cited=self.cited.explained(j, w.cited, chunk_ids, rows) if self.cited is not None else None,
        )


def _term(values: np.ndarray | None, j: int, weight: float) -> Term | None:
    return Term(shown_number(float(values[j])), weight) if values is not None else None


@dataclass
class Links:
    """Per candidate of a pool: the page terms of the site's links (query/page_links.py)."""

    anchor: np.ndarray  # the query's saturated BM25 over the page's anchor texts
    authority: np.ndarray  # n / (n + authority_k)
    inbound: np.ndarray  # n: the page's inbound links from other pages of its own site

    def explained_authority(self, j: int, weight: float) -> Authority:
        return Authority(shown_number(float(self.authority[j])), weight, int(self.inbound[j]))


@dataclass
class CitedBy:
    """Per candidate of a pool: the ``cited`` term (query/page_links.py) and the positions of those citing it."""

    values: np.ndarray
    citers: list[list[int]]

    def explained(self, j: int, weight: float, chunk_ids, rows: np.ndarray) -> Cited:
        return Cited(shown_number(float(self.values[j])), weight, [chunk_ids[int(rows[c])] for c in self.citers[j]])


LINK_TERMS = ("anchor", "authority")  # in a hit's page terms only when the snapshot has links indexed
FOCUS_TERMS = ("page_focus", "problem_section")  # in a hit's page terms only when weighted (query/page_focus.py)
WEIGHTED_LINK_TERMS = ("cited",)  # only when weighted and the snapshot has links indexed (query/page_links.py)
# the weighted terms, in order
PAGE_TERM_NAMES = ("support", "page_vector", "page_terms", *FOCUS_TERMS, *LINK_TERMS, *WEIGHTED_LINK_TERMS)


@dataclass(frozen=True, slots=True)
class PageWeights:
    """The page terms' weights in use (0 for a term left out); ``links``: the anchor and authority terms exist
    (the snapshot has the site's links indexed), else their weights are 0 and no hit shows them."""

    support: float
    page_vector: float
    page_terms: float
    anchor: float = 0.0
    authority: float = 0.0
    links: bool = False
    page_focus: float = 0.0
    problem_section: float = 0.0
    cited: float = 0.0

    def in_use(self) -> dict[str, float]:
        """The weights of the terms a hit shows, by name, in ``PAGE_TERM_NAMES``' order: the site's links' terms when
        the snapshot has them, the focus terms when weighted."""
        left_out = {name for name in (*FOCUS_TERMS, *WEIGHTED_LINK_TERMS) if not getattr(self, name) > 0}
        left_out |= set() if self.links else {*LINK_TERMS, *WEIGHTED_LINK_TERMS}
        return {name: getattr(self, name) for name in PAGE_TERM_NAMES if name not in left_out}

    def shown(self) -> PageWeights:
        """The weights as a hit shows them (rounded)."""
        n = shown_number
        return PageWeights(
            n(self.support),
            n(self.page_vector),
            n(self.page_terms),
            n(self.anchor),
            n(self.authority),
            self.links,
            n(self.page_focus),
            n(self.problem_section),
            n(self.cited),
        )

    def normaliser(self, passages: int) -> float:
        """1 + the weights in use, the support weight counted ``passages`` times."""
        return 1.0 + self.support * passages + sum(w for name, w in self.in_use().items() if name != "support")


def weights_in_use(policy: Policy, lexical_ran: bool, links: bool = False) -> tuple[PageWeights, float]:
    """The page terms' weights (0 for a term left out) and the normaliser they give; ``links``: the snapshot has
    the site's links indexed (the anchor and authority terms exist)."""
    fz = policy.fusion
    passages = fz.page_passages
    w = PageWeights(
        support=float(fz.page_weight) if passages > 0 else 0.0,
        page_vector=float(fz.page_vector_weight),
        page_terms=float(fz.page_terms_weight) if lexical_ran else 0.0,
        anchor=float(fz.anchor_weight) if links and lexical_ran else 0.0,
        authority=float(fz.authority_weight) if links else 0.0,
        links=links,
        page_focus=float(fz.page_focus_weight) if lexical_ran else 0.0,
        problem_section=float(fz.problem_section_weight),
        cited=float(fz.cited_weight) if links else 0.0,
    )
    return w, w.normaliser(passages)


def support(
    rel: np.ndarray, trust: np.ndarray, page: np.ndarray, lender: np.ndarray, passages: int
) -> tuple[np.ndarray, list[list[int]]]:
    """Per candidate: the sum of the ``passages`` largest loans of its page's other eligible candidates (``lender``),
    a loan being the lender's relevance × min(1, lender's trust / borrower's trust); and who lent it, best first."""
    m = rel.size
    out = np.zeros(m, dtype=np.float64)
    lent: list[list[int]] = [[] for _ in range(m)]
    if passages <= 0 or m == 0:
        return out, lent
    order = np.argsort(page, kind="stable")
    grouped = page[order]
    starts = run_starts(grouped)
    sizes = run_sizes(starts, m)
    # every (borrower, lender) pair of one page: borrower b = order[k], lender = order[start + 0..size-1]
    reps = np.repeat(sizes, sizes)  # per sorted candidate, its page's size
    borrower = np.repeat(order, reps)
    first = np.repeat(np.repeat(starts, sizes), reps)
    offset = np.arange(borrower.size) - np.repeat(np.cumsum(reps) - reps, reps)
    lender_pos = order[first + offset]
    ok = (lender_pos != borrower) & lender[lender_pos] & (rel[lender_pos] > 0)
    borrower, lender_pos = borrower[ok], lender_pos[ok]
    if not borrower.size:
        return out, lent
    tb = np.maximum(trust[borrower], 1e-12)
    loan = rel[lender_pos] * np.minimum(1.0, trust[lender_pos] / tb)
    by = np.lexsort((lender_pos, -loan, borrower))  # per borrower, its largest loans first
    borrower, lender_pos, loan = borrower[by], lender_pos[by], loan[by]
    nth = places_in_runs(borrower)
    take = nth < passages
    np.add.at(out, borrower[take], loan[take])
    for b, ln in zip(borrower[take].tolist(), lender_pos[take].tolist(), strict=True):
        lent[b].append(ln)
    return out, lent


def page_vector_relevance(vectors: np.ndarray, query_vector: np.ndarray, policy: Policy) -> np.ndarray:
    """The dense relevance of the query to each page's unit mean vector (rows of ``vectors``)."""
    r = policy.relevance
    q = np.asarray(query_vector, dtype=np.float32)
    cos = vectors @ (q / max(float(np.linalg.norm(q)), 1e-12))
    return np.asarray(dense_relevance(cos, r.cosine_floor, r.cosine_ceiling), dtype=np.float64)


def passage_terms(
    policy: Policy, cosines: np.ndarray, bm25: np.ndarray, lexical_ran: bool, identifiers: np.ndarray | None
) -> list[dict[str, Term]]:
    """Each passage's own relevance as its channels' terms, as a hit shows them (one dict a passage, from its cosine,
    BM25 and identifier score): each saturated value and its policy weight (relevance_score = Σ weight × value /
    Σ weight over the channels in use, query/relevance.py).  Worked out for the shown passages together: the same
    elementwise arithmetic as one at a time, without numpy's per-call cost for each value."""
    r = policy.relevance
    channels = [("dense", dense_relevance(cosines, r.cosine_floor, r.cosine_ceiling), r.dense_weight)]
    if lexical_ran and r.lexical_weight > 0:
        channels.append(("lexical", lexical_relevance(bm25, r.bm25_half), r.lexical_weight))
    if identifiers is not None and r.identifier_weight > 0:
        channels.append(("identifier", lexical_relevance(identifiers, r.bm25_half), r.identifier_weight))
    columns = [
        (name, [shown_number(v) for v in values.tolist()], shown_number(float(w))) for name, values, w in channels
    ]
    return [{name: Term(values[j], w) for name, values, w in columns} for j in range(len(cosines))]


def ranking_score(trust: np.ndarray, relevance: np.ndarray, policy: Policy) -> np.ndarray:
    c = policy.confidence
    return (np.asarray(trust) ** c.trust_weight) * (np.clip(relevance, 0.0, 1.0) ** c.relevance_weight)


def yield_unrouted(score: np.ndarray, unrouted: np.ndarray, on: bool) -> tuple[np.ndarray, float | None]:
    """``score`` (one a candidate) with each unrouted candidate's × the lowest shown score of the served ones, and
    that floor (None when nothing yields: the rule is off, or the pool has no unrouted or no served candidate)."""
    served = ~unrouted
    if not on or not unrouted.any() or not served.any():
        return score, None
    floor = float(shown(score[served]).min())
    return np.where(unrouted, score * floor, score), floor


def order(score: np.ndarray, confidence: np.ndarray, id_rank: np.ndarray, unrouted: np.ndarray) -> np.ndarray:
    """Positions best first: by the shown ranking score (descending), a served candidate before an unrouted one,
    then the shown confidence (descending), then the chunk id (``id_rank``: each candidate's place among the
    sorted chunk ids) — the tie rule of the formula."""
    return np.lexsort((id_rank, -shown(confidence), unrouted, -shown(score)))


@dataclass
class Lending:
    """Who may lend page-level relevance in one search: ``lender`` per candidate of the pool; ``withheld`` the rows
    (whole snapshot) whose text no page-level term reads (content risk found, or a version penalised under the
    targets)."""

    lender: np.ndarray
    withheld: np.ndarray


def page_terms(
    d,
    policy: Policy,
    pool,
    query_vector: np.ndarray,
    tokens: list[str],
    lexical_ran: bool,
    lending: Lending,
    query_text: str = "",
):
    """The page-level terms of every candidate of ``pool`` (query/candidates.py), read from eligible passages only."""
    w, z = weights_in_use(policy, lexical_ran, d.page_links is not None)
    m = pool.size
    pages, page = pool.pages(d.pages.chunk_page())
    sup, lenders = support(pool.relevance, pool.trust, page, lending.lender, policy.fusion.page_passages)
    if not w.support:
        sup, lenders = np.zeros(m), [[] for _ in range(m)]
    withheld = set(d.pages.chunk_page()[lending.withheld].tolist())
    touched = [j for j, p in enumerate(pages.tolist()) if p in withheld]  # pages with a passage withheld
    keep = {j: _kept_rows(d, int(pages[j]), lending.withheld) for j in touched}
    vector = np.zeros(m)
    if w.page_vector > 0:
        vecs = np.array(d.vectors.page_vectors(pages), dtype=np.float32)
        for j, rows in keep.items():
            vecs[j] = d.vectors.unit_mean(rows)
        vector = page_vector_relevance(vecs, query_vector, policy)[page]
    doc_rows = d.passages.chunk_doc_row[pool.rows]  # each candidate's documents row, read by the terms below
    terms = np.zeros(m)
    if w.page_terms > 0:
        terms = np.array(d.lexical_indexes.page_term_coverage(tokens, doc_rows), dtype=np.float64)
        if keep:
            redo = rows_term_coverage(d.lexical_indexes.text, tokens, list(keep.values()))
            by_page = dict(zip(keep, redo.tolist(), strict=True))
            for pos in np.flatnonzero(np.isin(page, list(keep))).tolist():
                terms[pos] = by_page[int(page[pos])]
    links = _links(d, policy, doc_rows, tokens)
    share = policy.fusion.focus_share
    focus = page_focus(d, tokens, pages, page, lending.withheld, share) if w.page_focus > 0 else None
    problem = problem_sections(d, query_text, pool.rows) if w.problem_section > 0 else None
    cited_by = None
    if w.cited > 0 and d.page_links is not None:
        fz = policy.fusion
        c = cited(
            d.page_links.cites,
            pool.rows,
            doc_rows,
            pool.relevance,
            pool.trust,
            lending.lender,
            fz.cited_passages,
            fz.cited_half,
        )
        cited_by = CitedBy(*c)
    return PageTerms(sup, vector, terms, w, z, lenders, links, focus, problem, cited_by)


def _links(d, policy: Policy, doc_rows: np.ndarray, tokens: list[str]) -> Links | None:
    """The site's links' terms of each candidate's page (None when the snapshot has no links indexed)."""
    index = d.page_links
    if index is None:
        return None
    fz = policy.fusion
    anchor = index.anchor(tokens, doc_rows, fz.anchor_half)  # shown beside its weight even when that is 0
    inbound = index.links_in(doc_rows)
    return Links(anchor, authority(inbound, fz.authority_k), inbound)


def _kept_rows(d, page_number: int, withheld: np.ndarray) -> np.ndarray:
    rows = d.pages.page_row_sets()[page_number]
    return rows[~np.isin(rows, withheld)]


def rows_term_coverage(lexical, tokens: list[str], row_sets: list[np.ndarray]) -> np.ndarray:
    """Per set of passages (rows): the idf-weighted share of the query's distinct known terms found in any of them
    (query/pages.py ``page_term_coverage``, for a page read without its withheld passages)."""
    out = np.zeros(len(row_sets), dtype=np.float64)
    total = 0.0
    for t in dict.fromkeys(tok for tok in tokens if tok in lexical.vocab):
        idf, postings = term_postings(lexical, lexical.vocab[t])
        total += idf
        for j, rows in enumerate(row_sets):
            if rows.size and postings.size:
                at = np.minimum(np.searchsorted(postings, rows), postings.size - 1)
                out[j] += idf if bool(np.any(postings[at] == rows)) else 0.0
    return out / total if total > 0 else out
