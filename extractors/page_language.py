"""The language a page is written in, read from its prose (issue 43): FastAPI's repository holds its English pages
and a translation of most of them in twelve languages, and indexed whole (the default include) the translations
stood beside the English pages for English questions (their code, their untranslated terms and English heading ids
match).  The query side weighs a page written in another language than most of its source's pages
(query/trust_factors/page_kind.py) unless the question is written in that language.

py3langid (a maintained fork of langid.py: a naive Bayes model over byte n-grams of 97 languages, bundled with the
package, ~1 ms a page) reads the text left once code, markup and addresses are taken out: code is the same in every
language and would outvote the prose.  A page with less prose than ``MIN_PROSE_CHARS`` has no language ("").
Languages are ISO 639-1 codes as py3langid names them ("en", "ja", "zh").
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from trustindex.extractors.markdown_lines import outside_fences

if TYPE_CHECKING:
    from py3langid.langid import LanguageIdentifier

MIN_PROSE_CHARS = 200  # below this a page's language is a guess: an index page of links, a stub, a table of names
MAX_PROSE_CHARS = 20_000  # the opening is enough, and a page of 300 releases is no slower than one of three
# a question is read among the snapshot's page languages only (a short English question read among 97 languages
# is Indonesian or Latin about one time in a hundred), and only this sure lifts a page's doubt
QUESTION_CONFIDENCE = 0.9

_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_MARKUP = re.compile(r"<[^>\n]*>|\{[^}\n]*\}|https?://\S+|&\w+;")
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)


@lru_cache(maxsize=1)
def _identifier() -> LanguageIdentifier:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def load_language_model() -> None:
    """Load the model now (a long-lived process warms it before its first question reads a language)."""
    _identifier()


def prose_of(text: str) -> str:
    """The page's words without its front matter, fenced code, inline code, tags, link targets and addresses."""
    text = _FRONT_MATTER.sub("", text, count=1)
    lines = (line for _row, line in outside_fences(text.split("\n")))
    prose = "\n".join(lines)
    return _MARKUP.sub(" ", _LINK_TARGET.sub("]", _INLINE_CODE.sub(" ", prose)))


def page_language(text: str) -> str:
    """The language of the page's prose, or "" when it has too little prose to tell."""
    prose = " ".join(prose_of(text).split())[:MAX_PROSE_CHARS]
    if len(prose) < MIN_PROSE_CHARS:
        return ""
    language, _p = _identifier().classify(prose)
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
