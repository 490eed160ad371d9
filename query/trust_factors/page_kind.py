"""Page kind: what the page is (extractors/page_kind.py: from its path, front matter and the site config), weighted
by the operator's ``[page_kind]`` table.  A changelog's doubt yields to a question about versions or changes
(schemas/question_form.py ``asks_about_changes``): there it weighs as release notes do.  A page written in another
language than most of its source's is ``other_language`` (query/page_languages.py), whatever its built kind, unless
the question is written in its language: there it weighs as its built kind."""

from __future__ import annotations

import numpy as np

from trustindex.query.snapshot_pages import DocumentRow
from trustindex.query.trust_factors.base import NO_LIFTS, HitContext, Lifts, PassagesContext, Prior
from trustindex.schemas.hit_factors import Factor, PageKindEvidence
from trustindex.schemas.page_kinds import CHANGELOG, OTHER_LANGUAGE, RELEASE_NOTES, UNKNOWN
from trustindex.schemas.policy import Policy


def page_kind_multiplier(kind: str | None, policy: Policy) -> float:
    """The policy's multiplier for a page kind (a snapshot without page kinds reads ``unknown``)."""
    return policy.page_kind.of(kind)


def _weighed_as(kind: str | None, other: bool, changes_asked: bool) -> str | None:
    """The kind whose multiplier the page takes: its other language's doubt first, then a changelog's lift."""
    if other:
        return OTHER_LANGUAGE
    return RELEASE_NOTES if changes_asked and kind == CHANGELOG else kind


def page_kind_factor(
    row: DocumentRow | dict, policy: Policy, lifts: Lifts = NO_LIFTS, language: tuple[str, str] | None = None
) -> Factor[PageKindEvidence]:
    """The status is the kind, the evidence the rule that named it (for a changelog, whether the question asked
    about changes, which lifts its doubt; for a page in another language than its source's, ``language``: the two
    languages, and whether the question is written in the page's, which lifts that doubt)."""
    doc = DocumentRow.of(row)
    kind = doc.page_kind or UNKNOWN
    reason = doc.page_kind_reason or "the snapshot was built before pages had a kind"
    asked = lifts.changes_asked if kind == CHANGELOG else None
    if language is None:
        weighed = _weighed_as(kind, False, lifts.changes_asked)
        return Factor(page_kind_multiplier(weighed, policy), kind, PageKindEvidence(kind, reason, asked))
    page_language, source_language = language
    in_its_language = lifts.language == page_language
    status = kind if in_its_language else OTHER_LANGUAGE
    weighed = _weighed_as(kind, not in_its_language, lifts.changes_asked)
    evidence = PageKindEvidence(
        kind,
        reason,
        asked,
        language=page_language,
        source_language=source_language,
        asked_in_its_language=in_its_language,
    )
    return Factor(page_kind_multiplier(weighed, policy), status, evidence)


def explain(hit: HitContext) -> Factor[PageKindEvidence]:
    doc = hit.document
    row = hit.data.pages.docs.row_of(doc.doc_id)
    language = hit.data.pages.languages().other_language(-1 if row is None else row, doc.source)
    return page_kind_factor(doc, hit.policy, hit.lifts, language)


def prior(passages: PassagesContext) -> Prior:
    docs = passages.data.docs.table
    kinds = docs.column("page_kind").to_pylist() if "page_kind" in docs.schema.names else [None] * passages.n_docs
    langs = passages.data.pages.languages()
    policy = passages.policy

    def per_passage(lifted_language: str | None, changes_asked: bool) -> np.ndarray:
        weighed = [
            _weighed_as(k, other and lang != lifted_language, changes_asked)
            for k, other, lang in zip(kinds, langs.other, langs.of_row, strict=True)
        ]
        return passages.per_passage(np.array([page_kind_multiplier(k, policy) for k in weighed], dtype=np.float64))

    others = sorted({lang for lang, other in zip(langs.of_row, langs.other, strict=True) if other})
    by_language = {lang: (per_passage(lang, False), per_passage(lang, True)) for lang in others}
    return Prior(per_passage(None, False), changes_asked=per_passage(None, True), languages=by_language)
