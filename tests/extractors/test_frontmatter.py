"""split_front_matter: YAML front matter at the top of Markdown/MDX files."""

from __future__ import annotations

import json

import pytest

from tests.kits.realdata import REAL_DOCS
from trustindex.extractors.frontmatter import MAX_FRONT_MATTER_BYTES, split_front_matter

CORPUS = REAL_DOCS

BILLION_LAUGHS = "\n".join(
    ["---", "a: &a [x, x, x, x, x, x, x, x, x, x]"]
    + [
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]"
        for i in range(8)
    ]
    + ["---", "body"]
)

# (name, text, expected front matter, expected body start line, warning fragment or None)
CASES = [
    ("none", "# Title\n\ntext\n", {}, 1, None),
    ("empty text", "", {}, 1, None),
    (
        "simple",
        "---\ntitle: Hello\nsidebar_position: 3\n---\n# Hello\n",
        {"title": "Hello", "sidebar_position": 3},
        5,
        None,
    ),
    ("empty block", "---\n---\nbody\n", {}, 3, None),
    ("yaml document end marker", "---\ntitle: A\n...\nbody\n", {"title": "A"}, 4, None),
    ("crlf", "---\r\ntitle: Win\r\n---\r\nbody\r\n", {"title": "Win"}, 4, None),
    ("bom", "\ufeff---\ntitle: Bom\n---\nbody\n", {"title": "Bom"}, 4, None),
    ("trailing spaces on delimiters", "--- \ntitle: T\n---  \nbody", {"title": "T"}, 4, None),
    ("date becomes iso string", "---\ndate: 2025-08-20\n---\n", {"date": "2025-08-20"}, 4, None),
    ("datetime becomes iso string", "---\ndate: 2025-08-20 10:30:00\n---\n", {"date": "2025-08-20T10:30:00"}, 4, None),
    ("non-string keys", "---\n1: one\n2024-01-01: day\n---\n", {"1": "one", "2024-01-01": "day"}, 5, None),
    ("nan is text", "---\nx: .nan\n---\n", {"x": "nan"}, 4, None),
    ("binary", "---\nb: !!binary aGk=\n---\n", {"b": "aGk="}, 4, None),
    ("deprecated string", "---\ndeprecated: Use v2 instead\n---\n", {"deprecated": "Use v2 instead"}, 4, None),
    ("malformed yaml names its line", "---\ntitle: ok\ntags: [a, b\nx: y\n---\nbody\n", {}, 6, "malformed at line 4"),
    ("tab indentation is malformed", "---\ntitle: a\n\tbad: b\n---\n", {}, 5, "malformed"),
    ("list is not a mapping", "---\n- a\n- b\n---\nbody\n", {}, 5, "not a mapping"),
    ("scalar is not a mapping", "---\njust text\n---\nbody\n", {}, 4, "not a mapping"),
    ("never closed", "---\ntitle: x\n\n# Heading\n", {}, 1, "never closed"),
    (
        "python tag refused by safe loader",
        "---\nx: !!python/object/apply:os.system ['true']\n---\n",
        {},
        4,
        "malformed",
    ),
    ("alias bomb", BILLION_LAUGHS, {}, 12, "expands to more than"),
    ("huge block", "---\n" + "k: " + "x" * (MAX_FRONT_MATTER_BYTES + 10) + "\n---\nbody\n", {}, 4, "larger than"),
    ("deep nesting", "---\nx: " + "[" * 200 + "]" * 200 + "\n---\n", {}, 4, "expands to more than"),
]


@pytest.mark.parametrize("name,text,expected,body_start,warning", CASES, ids=[c[0] for c in CASES])
def test_split_front_matter(name, text, expected, body_start, warning):
    fm, start, warnings = split_front_matter(text)
    assert fm == expected
    assert start == body_start
    json.dumps(fm)  # always JSON-serialisable
    if warning is None:
        assert warnings == []
    else:
        assert len(warnings) == 1 and warning in warnings[0], warnings


def test_real_blog_front_matter_is_json_ready():
    post = next(CORPUS.glob("blog/**/*.md*"), None) if CORPUS.exists() else None
    if post is None:
        pytest.skip("midnight-docs corpus not present")
    fm, start, warnings = split_front_matter(post.read_text("utf-8"))
    assert warnings == [] and start > 3
    assert isinstance(fm.get("title"), str)
    json.dumps(fm)


def test_whole_corpus_front_matter_parses_cleanly():
    if not CORPUS.exists():
        pytest.skip("midnight-docs corpus not present")
    files = sorted(CORPUS.rglob("*.md")) + sorted(CORPUS.rglob("*.mdx"))
    assert len(files) > 2000
    with_fm = 0
    for path in files:
        text = path.read_text("utf-8")
        fm, start, warnings = split_front_matter(text)
        assert warnings == [], (path, warnings)
        json.dumps(fm)
        lines = text.split("\n")
        if start > 1:
            with_fm += 1
            assert lines[start - 2].strip() in ("---", "...")
    assert with_fm > 500
