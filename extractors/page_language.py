"""The language a page is written in, read from its prose (issue 43): FastAPI's repository holds its English pages
and a translation of most of them in twelve languages, and indexed whole (the default include) the translations
stood beside the English pages for English questions (their code, their untranslated terms and English heading ids
match).  The query side weighs a page written in another language than most of its source's pages
(query/trust_factors/page_kind.py) unless the question is written in that language.

The model (schemas/language.py, shared with the query side) reads the text left once code, markup and addresses are
taken out: code is the same in every language and would outvote the prose.  A page with less prose than
``MIN_PROSE_CHARS`` has no language ("").
"""

from __future__ import annotations

import re

from trustindex.extractors.markdown_lines import outside_fences
from trustindex.schemas.language import text_language

MIN_PROSE_CHARS = 200  # below this a page's language is a guess: an index page of links, a stub, a table of names
MAX_PROSE_CHARS = 20_000  # the opening is enough, and a page of 300 releases is no slower than one of three

_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_MARKUP = re.compile(r"<[^>\n]*>|\{[^}\n]*\}|https?://\S+|&\w+;")
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)


def prose_of(text: str) -> str:
    """The page's words without its front matter, fenced code, inline code, tags, link targets and addresses."""
    text = _FRONT_MATTER.sub("", text, count=1)
    lines = (line for _row, line in outside_fences(text.split("\n")))
    prose = "\n".join(lines)
    return _MARKUP.sub(" ", _LINK_TARGET.sub("]", _INLINE_CODE.sub(" ", prose)))


def page_language(text: str) -> str:
    """The language of the page's prose, or "" when it has too little prose to tell."""
    prose = " ".join(prose_of(text).split())[:MAX_PROSE_CHARS]
    return text_language(prose) if len(prose) >= MIN_PROSE_CHARS else ""
