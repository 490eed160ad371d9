"""The language a text is written in, read the same way on both sides (issue 43): the build reads each page's prose
(extractors/page_language.py), a search reads the question (query/search_query.py), with one model, as the lexical
tokenizer is shared (schemas/lexical.py).

py3langid is a maintained fork of langid.py: a naive Bayes model over byte n-grams of 97 languages, shipped inside
the package (nothing is downloaded), ~1 ms a page, 0.06 ms a question; loading it takes ~1 s, once per process.
Languages are ISO 639-1 codes as py3langid names them ("en", "ja", "zh").
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from py3langid.langid import LanguageIdentifier

# a question is read among the snapshot's page languages only (a short English question read among 97 languages
# is Indonesian or Latin about one time in a hundred), and only this sure lifts a page's doubt
QUESTION_CONFIDENCE = 0.9


@lru_cache(maxsize=1)
def _identifier() -> LanguageIdentifier:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def load_language_model() -> None:
    """Load the model now (a long-lived process warms it before its first question reads a language)."""
    _identifier()


def text_language(text: str) -> str:
    """The language the model reads ``text`` in, among all it knows."""
    language, _p = _identifier().classify(text)
    return str(language)


def question_language(question: str, languages: frozenset[str]) -> str | None:
    """The language a question is written in, read among ``languages`` (the snapshot's page languages), or None
    when fewer than two languages are there to tell apart or the model is less sure than ``QUESTION_CONFIDENCE``.
    The model's posteriors over all its languages, renormalised over ``languages``: what restricting the naive Bayes
    model to them gives, without changing the shared model (searches run on several threads)."""
    if len(languages) < 2 or not question.strip():
        return None
    ranked = [(lang, p) for lang, p in _identifier().rank(question) if lang in languages]
    total = sum(p for _lang, p in ranked)
    if not ranked or total <= 0:
        return None
    language, p = max(ranked, key=lambda r: r[1])
    return str(language) if p / total >= QUESTION_CONFIDENCE else None
