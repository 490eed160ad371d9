"""A page written in another language than most of its source's yields, unless the question is written in its
language (issue 43: FastAPI's repository, indexed whole, holds a translation of most of its pages in twelve
languages, and their code, untranslated terms and English heading ids stood them beside the English pages)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from tests.kits.gitutil import RepoBuilder, refresh_one_source
from trustindex.extractors.page_language import page_language
from trustindex.query.explain import check
from trustindex.query.trust import combine, reference_day
from trustindex.query.trust_prior import TrustPrior
from trustindex.schemas.language import question_language

CODE = """
```python
from fastapi.middleware.cors import CORSMiddleware

app.add_middleware(CORSMiddleware, allow_origins=["https://app.example.com"], allow_credentials=True)
```
"""
ENGLISH = f"""# CORS {{ #cors }}

## Use CORSMiddleware {{ #use-corsmiddleware }}

A browser refuses a response from another origin unless the server allows that origin. Add the CORS middleware to
your application and list the origins your frontend is served from; the browser then sends credentials and reads
the response. Keep the list short: every origin you allow can call your API with the user's cookies.
{CODE}"""
SPANISH = f"""# CORS {{ #cors }}

## Usa CORSMiddleware {{ #use-corsmiddleware }}

Un navegador rechaza una respuesta de otro origen a menos que el servidor permita ese origen. Agrega el middleware
de CORS a tu aplicación y enumera los orígenes desde los que se sirve tu frontend; el navegador entonces envía las
credenciales y lee la respuesta. Mantén la lista corta: cada origen que permites puede llamar a tu API.
{CODE}"""
JAPANESE = f"""# CORS {{ #cors }}

## CORSMiddleware を使う {{ #use-corsmiddleware }}

ブラウザは、サーバーがそのオリジンを許可しない限り、別のオリジンからのレスポンスを拒否します。アプリケーションに
CORS ミドルウェアを追加し、フロントエンドが配信されるオリジンを列挙してください。するとブラウザは認証情報を送信し、
レスポンスを読み取ります。リストは短く保ってください。許可したすべてのオリジンは、ユーザーのクッキーを使って
あなたの API を呼び出せます。
{CODE}"""
STEPS = """# First steps { #first-steps }

Create a file with an application object and a path operation that returns a dictionary. Run it with the command
line tool in development mode: it reloads the server whenever a file changes, and serves the interactive API
documentation generated from your path operations and their type hints at the docs address.
"""
ENGLISH_QUESTION = "my React frontend on another origin is blocked by CORS, how do I allow it"
JAPANESE_QUESTION = "フロントエンドのオリジンを CORS で許可するにはどうすればいいですか"
PAGES = {
    "en": "docs/en/docs/tutorial/cors.md",
    "es": "docs/es/docs/tutorial/cors.md",
    "ja": "docs/ja/docs/tutorial/cors.md",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory, prefect_harness):
    from trustindex.query.index import Index

    root: Path = tmp_path_factory.mktemp("languages")
    files = {PAGES["en"]: ENGLISH, PAGES["es"]: SPANISH, PAGES["ja"]: JAPANESE}
    files["docs/en/docs/tutorial/first-steps.md"] = STEPS
    RepoBuilder(root / "api").commit(files, "pages and two translations", when=datetime(2026, 6, 1, tzinfo=UTC))
    return Index.open(data_dir=refresh_one_source(root, "api", "api", ("**/*.md",)))


def _page_kind(r: dict, path: str) -> dict:
    return next(h["factors"]["page_kind"] for h in r["hits"] if h["provenance"]["path"] == path)


def test_a_page_is_read_in_its_prose_language_and_a_question_only_when_sure():
    assert [page_language(t) for t in (ENGLISH, SPANISH, JAPANESE)] == ["en", "es", "ja"]
    assert page_language(CODE) == ""  # code is the same in every language: too little prose to tell
    among = frozenset({"en", "es", "ja"})
    assert question_language(JAPANESE_QUESTION, among) == "ja"
    assert question_language("¿Cómo permito otro origen con CORS en mi aplicación?", among) == "es"
    assert question_language(ENGLISH_QUESTION, among) in ("en", None)
    assert question_language(JAPANESE_QUESTION, frozenset({"en"})) is None  # nothing to tell apart


def test_translations_yield_to_the_source_language_unless_asked_in_theirs(index):
    english = index.search(ENGLISH_QUESTION, k=5)
    paths = [h["provenance"]["path"] for h in english["hits"]]
    assert paths[0] == PAGES["en"]
    for lang in ("es", "ja"):
        doubted = _page_kind(english, PAGES[lang])
        assert doubted["status"] == "other_language"
        assert doubted["multiplier"] == index.policy.page_kind.other_language < 1
        assert doubted["evidence"]["page_kind"] == "guide"  # its built kind (a tutorial), beside the doubt
        assert doubted["evidence"]["language"] == lang and doubted["evidence"]["source_language"] == "en"
        assert doubted["evidence"]["asked_in_its_language"] is False
    assert "language" not in _page_kind(english, PAGES["en"])["evidence"]  # a page in its source's language

    japanese = index.search(JAPANESE_QUESTION, k=5)
    assert japanese["hits"][0]["provenance"]["path"] == PAGES["ja"]
    lifted = _page_kind(japanese, PAGES["ja"])
    assert lifted["status"] == "guide" and lifted["multiplier"] == index.policy.page_kind.guide
    assert lifted["evidence"]["asked_in_its_language"] is True
    assert _page_kind(japanese, PAGES["es"])["status"] == "other_language"  # only the question's language lifts
    assert check(english, index.policy) == [] and check(japanese, index.policy) == []
    schema = json.loads((Path(__file__).parents[2] / "schemas" / "response.schema.json").read_text())
    for r in (english, japanese):
        jsonschema.validate(r, schema)


def test_each_languages_prior_equals_its_explained_factors(index):
    today = reference_day()
    prior = TrustPrior(index.data, index.policy, today)
    assert index.data.pages.languages().question_languages == frozenset({"en", "es", "ja"})
    for language in (None, "ja", "es"):
        expected = [combine(index._factors(i, today, language=language)) for i in range(index.data.n)]
        np.testing.assert_array_equal(np.clip(prior.for_targets(False, False, language), 0, 1), expected)
    lifted = prior.for_targets(False, False, "ja") > prior.base
    assert lifted.any() and not lifted.all()
    assert prior.for_targets(False, False, "en") is prior.base  # the source's own language lifts nothing


def test_a_misread_page_is_not_doubted_without_a_second_sign():
    import pyarrow as pa

    from trustindex.query.page_languages import PageLanguages

    rows = [("en", f"docs/p{i}.md") for i in range(6)]
    rows += [("pcm", "docs/community/conferences.md")]  # a page of names and dates the model misreads
    rows += [("ja", "README.ja.md")]  # one translation: its file name names the language
    rows += [("es", f"guias/p{i}.md") for i in range(3)]  # a set of pages: translations come in sets
    rows += [("", "docs/index.md")]  # too little prose to tell
    docs = pa.table(
        {"source": ["api"] * len(rows), "path": [p for _, p in rows], "language": [lang for lang, _ in rows]}
    )
    langs = PageLanguages.of(docs)
    assert langs.source_language == {"api": "en"}
    assert [langs.other_language(i, "api") for i in range(len(rows))] == [None] * 7 + [("ja", "en")] + [
        ("es", "en")
    ] * 3 + [None]
    assert langs.question_languages == frozenset({"en", "ja", "es"})  # a misread language is never asked in
    before = PageLanguages.of(docs.drop_columns(["language"]))  # a snapshot built before pages had a language
    assert not any(before.other) and before.question_languages == frozenset()


def test_the_source_language_is_read_from_the_pages_in_no_languages_folder():
    import pyarrow as pa

    from trustindex.query.page_languages import PageLanguages

    # FastAPI's repository: more Chinese pages (two translations) than English ones, an English README
    rows = [("en", f"docs/en/docs/p{i}.md") for i in range(3)] + [("en", "README.md")]
    rows += [("zh", f"docs/{folder}/docs/p{i}.md") for folder in ("zh", "zh-hant") for i in range(3)]
    docs = pa.table(
        {"source": ["api"] * len(rows), "path": [p for _, p in rows], "language": [lang for lang, _ in rows]}
    )
    langs = PageLanguages.of(docs)
    assert langs.source_language == {"api": "en"}
    assert [o for o in langs.other] == [False] * 4 + [True] * 6
