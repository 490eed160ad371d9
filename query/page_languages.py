"""Which pages are written in another language than most of their source's (issue 43), worked out once per snapshot.

A source's language is the one most of its pages with a language are written in (documents.language, read at build
time from each page's prose: extractors/page_language.py; ties go to the first in alphabetical order, so the
answer never depends on row order), counting only the pages whose path does not name their language where there
are any: FastAPI's repository holds 169 English pages and 231 Chinese ones (two translations, simplified and
traditional), and it is its README, its agent skill and its scripts' pages, in no language's folder, that say it
writes in English; a Docusaurus site's translations sit under ``i18n/<locale>/``, its originals in no such folder.

A page in another language, FastAPI's Japanese translation of a tutorial beside the English one, is weighed by
``[page_kind] other_language`` (query/trust_factors/page_kind.py) unless the question is written in its language.
The model misreads about one page in a thousand (React's list of conferences, all names and dates, reads as Nigerian
Pidgin; a Midnight.js package README of names as Danish), and a misread page must not be doubted, so a page is in
another language only where a second sign agrees: its path names the language (``docs/ja/``, ``README.zh-CN.md``,
``i18n/pt-BR/``) or its source holds at least ``MIN_PAGES_IN_A_LANGUAGE`` pages in it (translations come in sets;
misreadings scatter over languages).  A snapshot built before pages had a language, or whose sources each write in
one, has no such page and never reads a question's language (the model is not even loaded).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import pyarrow as pa

MIN_PAGES_IN_A_LANGUAGE = 3
_PATH_PARTS = re.compile(r"[/.]")


@dataclass(frozen=True)
class PageLanguages:
    """``of_row[r]``: the language of the documents table's row r ("" none); ``source_language``: per source, the
    language most of its pages are in; ``other``: per row, whether its language is not its source's;
    ``question_languages``: the languages a question is read among, the sources' and those of the pages in another
    language (empty when no page is in another language)."""

    of_row: tuple[str, ...]
    source_language: dict[str, str]
    other: tuple[bool, ...]
    question_languages: frozenset[str]

    @classmethod
    def of(cls, docs: pa.Table) -> PageLanguages:
        n = docs.num_rows
        if "language" not in docs.column_names:
            return cls(("",) * n, {}, (False,) * n, frozenset())
        langs = tuple(v or "" for v in docs.column("language").to_pylist())
        sources, paths = docs.column("source").to_pylist(), docs.column("path").to_pylist()
        named = [bool(lang) and names(path, lang) for lang, path in zip(langs, paths, strict=True)]
        counts: dict[str, Counter] = {}
        unnamed: dict[str, Counter] = {}  # the pages whose path does not name their language
        for source, lang, is_named in zip(sources, langs, named, strict=True):
            if lang:
                counts.setdefault(source, Counter())[lang] += 1
                if not is_named:
                    unnamed.setdefault(source, Counter())[lang] += 1
        primary = {s: _most(unnamed.get(s) or c) for s, c in counts.items()}
        other = tuple(
            bool(lang) and lang != primary[s] and (counts[s][lang] >= MIN_PAGES_IN_A_LANGUAGE or is_named)
            for s, lang, is_named in zip(sources, langs, named, strict=True)
        )
        others = {lang for lang, o in zip(langs, other, strict=True) if o}
        asked = frozenset(others | set(primary.values())) if others else frozenset()
        return cls(langs, primary, other, asked)

    def other_language(self, row: int, source: str) -> tuple[str, str] | None:
        """(the page's language, its source's) when they differ, else None."""
        if row < 0 or row >= len(self.other) or not self.other[row]:
            return None
        return self.of_row[row], self.source_language.get(source, "")


def _most(counts: Counter) -> str:
    return min(counts, key=lambda lang: (-counts[lang], lang))


def names(path: str, language: str) -> bool:
    """Whether a folder or a dotted part of the file's name names ``language`` (``ja``, ``zh-hant``, ``pt_BR``)."""
    return any(
        p.lower() == language or p.lower().startswith((language + "-", language + "_")) for p in _PATH_PARTS.split(path)
    )
