"""extractors.docs_fences: Compact pragmas in Markdown fences, chunk scope, page/fence disagreement."""

import json

import pytest

from trustindex.extractors.base import Chunk, FileContext
from trustindex.extractors.docs_fences import fence_pragma_targets, fences, record_disagreements
from trustindex.extractors.markdown import extract_markdown
from trustindex.extractors.version_stamps import apply_precedence, extract_stamps
from trustindex.schemas.versions import ConstraintSet, parse_version

# Every form the real docs write inside ```compact fences (issue 13): (pragma expression, inside, outside)
FORMS = [
    ("0.23", ["0.23.0", "0.23.4"], ["0.22.0", "0.24.0"]),
    ("0.23.0", ["0.23.0"], ["0.23.1"]),
    ("0.16", ["0.16.0"], ["0.17.0"]),
    (">= 0.23", ["0.23.0", "0.30.0"], ["0.22.9"]),
    ("0.17", ["0.17.2"], ["0.18.0"]),
    ("0.18", ["0.18.0"], ["0.17.0"]),
    ("0.15", ["0.15.1"], ["0.16.0"]),
    (">=0.22", ["0.22.0"], ["0.21.0"]),
    (">= 0.22 && <= 0.23", ["0.22.0", "0.23.0"], ["0.24.0", "0.21.0"]),
    (">= 0.21.0", ["0.21.0"], ["0.20.0"]),
]


def _page(expr: str, info: str = "compact title=lock.compact") -> str:
    return f"""---
title: Writing a contract
---

# Writing a contract

Some prose about `pragma language_version` that is not code.

```{info}
pragma language_version {expr};

import CompactStandardLibrary;

export ledger value: Uint<64>;
```

## Next steps

Read on.
"""


@pytest.mark.parametrize("expr, inside, outside", FORMS)
def test_every_real_form_in_a_compact_fence(expr, inside, outside):
    text = _page(expr)
    ex = extract_markdown(text.encode(), FileContext("docs", "docs/compact/writing.mdx"))
    targets, warnings = fence_pragma_targets(text, ex.chunks)
    assert warnings == []
    assert targets, expr
    fence_chunks = {c.ordinal for c in ex.chunks if c.start_line <= 10 <= c.end_line}
    for t in targets:
        assert (t.component, t.constraint, t.origin, t.status) == ("compact-language", expr, "docs_fence", "parsed")
        assert t.chunk_ordinal in fence_chunks
        assert t.detail.startswith("fence lines 9-15 (lock.compact): pragma at line 10")
        cs = ConstraintSet.from_json(t.intervals)
        assert all(cs.contains(parse_version(v)) for v in inside)
        assert not any(cs.contains(parse_version(v)) for v in outside)


def test_prose_and_other_languages_are_not_read():
    text = (
        "pragma language_version 0.20;\n\n"
        "```ts\n// pragma language_version 0.21;\nconst pragma = 1;\n```\n\n"
        "```bash\necho 'pragma language_version 0.22;'\n```\n"
    )
    assert fence_pragma_targets(text) == ([], [])


def test_untagged_fence_read_only_when_it_parses_as_compact():
    good = "```\npragma language_version 0.18;\nimport CompactStandardLibrary;\n```\n"
    [t], _ = fence_pragma_targets(good)
    assert t.constraint == "0.18" and "untagged; parses as Compact" in t.detail and t.chunk_ordinal is None
    transcript = "```\n$ grep -r 'pragma language_version' src\nsrc/a.compact: pragma language_version 0.18;\n```\n"
    assert fence_pragma_targets(transcript) == ([], [])


def test_tilde_indented_and_long_fences():
    text = (
        "1. Write it:\n\n   ~~~compact\n   pragma language_version >= 0.22;\n   ~~~\n\n"
        "````compact\n```\npragma language_version 0.15;\n````\n"
    )
    assert [(f.tag, f.first_line, f.last_line) for f in fences(text)] == [("compact", 3, 5), ("compact", 7, 10)]
    targets, _ = fence_pragma_targets(text)
    assert [t.constraint for t in targets] == [">= 0.22", "0.15"]
    assert "pragma at line 4" in targets[0].detail and "pragma at line 9" in targets[1].detail


def test_fence_split_over_two_chunks_targets_both():
    text = "```compact\npragma language_version 0.16;\n" + "circuit f(): [] {}\n" * 6 + "```\n"
    chunks = [Chunk(0, "a", 1, 4), Chunk(1, "b", 5, 9), Chunk(2, "c", 10, 12)]
    targets, _ = fence_pragma_targets(text, chunks)
    assert [t.chunk_ordinal for t in targets] == [0, 1]


def test_compiler_pragma_and_syntax_errors_warn():
    text = "```compact\npragma compiler_version >= 1.0.0 && !1.0.5;\npragma language_version 0.23;\n```\n"
    targets, _ = fence_pragma_targets(text)
    assert [(t.component, t.constraint) for t in targets] == [
        ("compact-compiler", ">= 1.0.0 && !1.0.5"),
        ("compact-language", "0.23"),
    ]
    broken = "```compact\npragma language_version 0.23;\ncircuit {{{ oops\n```\n"
    [t], warnings = fence_pragma_targets(broken)
    assert t.constraint == "0.23" and t.status == "parsed"
    assert all(w.startswith("fence lines 1-4") for w in warnings)


def test_page_stamp_and_fence_disagreeing_is_recorded_not_merged():
    text = "# Old example\n\nCompact language version 0.23.0.\n\n## Example\n\n" + (
        "```compact\npragma language_version 0.16;\n```\n"
    )
    ex = extract_markdown(text.encode(), FileContext("docs", "docs/a.md"))
    targets = extract_stamps(text, ex.chunks) + fence_pragma_targets(text, ex.chunks)[0]
    noted, warnings = record_disagreements(targets)
    [fence] = [t for t in noted if t.origin == "docs_fence"]
    [stamp] = [t for t in noted if t.origin == "stamp"]
    assert "disagrees with the page's stamp '0.23.0'" in fence.detail
    assert len(warnings) == 1 and "'0.16'" in warnings[0] and "'0.23.0'" in warnings[0]
    assert stamp.chunk_ordinal is None and json.loads(stamp.intervals) != json.loads(fence.intervals)
    kept = apply_precedence(noted)
    assert {t.origin for t in kept} == {"stamp", "docs_fence"}  # both kept: the fence scopes its own chunk


def test_agreeing_page_stamp_is_not_noted():
    text = "Compact language version 0.23.0.\n\n## Example\n\n```compact\npragma language_version >= 0.22;\n```\n"
    ex = extract_markdown(text.encode(), FileContext("docs", "docs/a.md"))
    targets = extract_stamps(text, ex.chunks) + fence_pragma_targets(text, ex.chunks)[0]
    noted, warnings = record_disagreements(targets)
    assert warnings == [] and not any("disagrees" in t.detail for t in noted)


def test_front_matter_does_not_hide_a_fence():
    from trustindex.extractors.version_stamps import front_matter_targets

    text = "```compact\npragma language_version 0.16;\n```\n"
    fenced, _ = fence_pragma_targets(text, [Chunk(0, text, 1, 3)])
    fm = front_matter_targets({"language_version": "0.20"})
    kept = apply_precedence(fm + fenced)
    assert [(t.origin, t.chunk_ordinal) for t in kept] == [("front_matter", None), ("docs_fence", 0)]
