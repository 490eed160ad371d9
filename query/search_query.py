"""What a search is asked, read once: ``Query`` (its text, lexical tokens, identifiers, vector, extra phrasings,
resolved targets, k and strictness), made by ``Query.make`` before any channel runs.

Every stage of the search (query/index.py) and the modules it calls read the query's tokens and identifiers from
here; nothing tokenizes the query a second time.  ``make`` checks the request in the order the errors have always
come (the query, its phrasings, k, the targets) and embeds last, so a refused request costs no model call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from trustindex.query.state import SearchState
from trustindex.query.target_match import Target, parse_target_args
from trustindex.query.target_report import target_report
from trustindex.schemas.docs_versions import COMPONENT as DOCS_COMPONENT
from trustindex.schemas.errors import QueryError
from trustindex.schemas.hit_parts import TargetShown
from trustindex.schemas.language import question_language
from trustindex.schemas.lexical import identifier_tokens, tokenize
from trustindex.schemas.question_form import asks_about_changes

MAX_QUERY_CHARS = 10_000
MAX_K = 1000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean_query(text: str) -> str:
    if not isinstance(text, str):
        raise QueryError("query must be text")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise QueryError(f"query is not valid Unicode text (lone surrogate at character {e.start})") from None
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"query is {len(text)} characters; the limit is {MAX_QUERY_CHARS}")
    text = _CONTROL.sub(" ", text).strip()
    if not text:
        raise QueryError("query is empty")
    return text


@dataclass(frozen=True, slots=True)
class Words:
    """One wording's lexical reading: its terms (schemas/lexical.py ``tokenize``) and the identifiers it names
    (CamelCase, snake_case, dotted names, error codes: ``identifier_tokens``)."""

    text: str
    tokens: list[str]
    identifiers: list[str]

    @classmethod
    def of(cls, text: str) -> Words:
        return cls(text, tokenize(text), identifier_tokens(text))


@dataclass(frozen=True, slots=True)
class Phrasing:
    """An extra wording of the question (``also``): its own channels join the fusion; it never explains a hit."""

    words: Words
    vector: np.ndarray  # (dimensions,)


@dataclass(frozen=True, slots=True)
class Query:
    """The user's question as every stage reads it."""

    words: Words  # the user's own wording: its channels explain the hits and set the match tier
    vector: np.ndarray  # its embedding, (dimensions,)
    phrasings: tuple[Phrasing, ...]
    targets: list[Target]  # resolved against the snapshot (aliases, docs labels)
    targets_shown: list[TargetShown]  # the response's ``targets``: each as requested and how it was resolved
    k: int
    strict: bool
    # the language the question is written in, when the snapshot holds pages in another language than their
    # source's and the model is sure (extractors/page_language.py); None otherwise
    language: str | None = None

    @property
    def text(self) -> str:
        return self.words.text

    @property
    def tokens(self) -> list[str]:
        return self.words.tokens

    @property
    def identifiers(self) -> list[str]:
        return self.words.identifiers

    @property
    def docs_targeted(self) -> bool:
        """Whether a docs version is targeted: the legacy docs' demotion then gives way
        (query/trust_factors/deprecation.py)."""
        return any(t.component == DOCS_COMPONENT for t in self.targets)

    @property
    def asks_about_changes(self) -> bool:
        """Whether the question's wording asks about versions or changes: a changelog's doubt then gives way
        (query/trust_factors/page_kind.py)."""
        return asks_about_changes(self.text)

    @classmethod
    def make(
        cls,
        st: SearchState,
        text: str,
        k: int = 10,
        targets=None,
        strict: bool = False,
        also: list[str] | None = None,
    ) -> Query:
        """The request checked and read under the state ``st`` (its snapshot resolves the targets, its encoder
        embeds).  ``targets``: ``COMPONENT=VERSION`` strings, a ``{component: version}`` dict or parsed targets."""
        text = clean_query(text)
        extra = [clean_query(a) for a in (also or [])]
        if not isinstance(k, int) or k < 1 or k > MAX_K:
            raise QueryError(f"k must be an integer from 1 to {MAX_K}, got {k!r}")
        parsed = (
            targets
            if isinstance(targets, list) and targets and isinstance(targets[0], Target)
            else parse_target_args(targets)
        )
        shown, resolved = target_report(st, parsed)
        # The user's query is embedded on its own: an encoder with dynamic int8 scales (snapshots before encoder
        # recipe 5) scales activations per batch, so a batch-mate would shift its vector, and with it the match tier.
        vector = st.query_vectors.encode(text)[0]
        vectors: np.ndarray | list[np.ndarray] = st.encoder.encode(extra) if extra else []
        phrasings = tuple(Phrasing(Words.of(t), v) for t, v in zip(extra, vectors, strict=True))
        language = question_language(text, st.data.pages.languages().question_languages)
        return cls(Words.of(text), vector, phrasings, resolved, shown, k, strict, language)
