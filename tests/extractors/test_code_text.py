"""Line-window fallback: window sizes, overlap, bad bytes, line endings, over-long lines."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest

from trustindex.extractors.base import ExtractionError, FileContext
from trustindex.extractors.code_common import decode_lines
from trustindex.extractors.code_text import OVERLAP_LINES, chunk_problems, extract_text


def wordpiece_like(text: str) -> int:
    """Stand-in for the MiniLM tokenizer: words and punctuation apart, plus [CLS] and [SEP]."""
    return len(re.findall(r"\w+|[^\w\s]", text)) + 2


def ctx(max_tokens: int = 256, target: int = 200, counter=wordpiece_like) -> FileContext:
    return FileContext(
        source="t", path="docs/notes.txt", count_tokens=counter, max_tokens=max_tokens, target_tokens=target
    )


def run(data: bytes, c: FileContext = None):
    c = c or ctx()
    result = extract_text(data, c)
    assert result.kind == "text"
    assert chunk_problems(decode_lines(data, c.path), result.chunks, c) == []
    assert all(ch.symbol_path is None and ch.heading_path == [] for ch in result.chunks)
    return result


PROSE = "".join(f"Line {i} of the notes says something about component {i % 7}.\n" for i in range(300)).encode()


@pytest.mark.parametrize("counter", [wordpiece_like, None], ids=["wordpiece-like", "default"])
def test_windows_fill_target_and_overlap(counter):
    c = (
        ctx(max_tokens=128, target=100, counter=counter)
        if counter
        else FileContext(source="t", path="n.txt", max_tokens=128, target_tokens=100)
    )
    chunks = run(PROSE, c).chunks
    assert len(chunks) > 5
    assert all(ch.token_count <= 128 for ch in chunks)
    assert all(ch.token_count >= 60 for ch in chunks[:-1])  # full windows, not slivers
    for before, after in pairwise(chunks):
        assert after.start_line == before.end_line - OVERLAP_LINES + 1


@pytest.mark.parametrize(
    "data,expected",
    [
        (b"", []),
        (b"\n\n   \n\t\n", []),
        (b"one line", [(1, 1, "one line")]),
        (b"\n\nfirst\n\n\nsecond\n\n", [(3, 6, "first\n\n\nsecond")]),  # blank ends trimmed
        (b"crlf one\r\ncrlf two\r\n", [(1, 2, "crlf one\ncrlf two")]),
        (b"\xef\xbb\xbfwith BOM\n", [(1, 1, "with BOM")]),
    ],
)
def test_small_inputs(data, expected):
    assert [(c.start_line, c.end_line, c.text) for c in run(data).chunks] == expected


@pytest.mark.parametrize(
    "data,offset",
    [
        (b"abc\x00def", 3),
        (b"ok\n\xff\xfe", 3),
        (b"caf\xc3", 3),  # truncated multi-byte sequence
        (b"fine\n" * 10 + b"\xc3\x28", 50),
    ],
)
def test_bad_bytes_name_the_offset(data, offset):
    with pytest.raises(ExtractionError, match=f"byte offset {offset}\\b"):
        extract_text(data, ctx())


def test_two_megabyte_line_is_sliced():
    line = ("word " * 400_000).strip()
    chunks = run(line.encode() + b"\nafter\n").chunks
    sliced = [c for c in chunks if c.start_line == 1]
    assert len(sliced) > 100 and "".join(c.text for c in sliced) == line
    assert chunks[-1].text == "after" and all(c.token_count <= 256 for c in chunks)


def test_line_without_spaces_is_sliced_too():
    line = "x" * 500_000
    chunks = run(line.encode(), ctx(max_tokens=64, target=50)).chunks
    assert "".join(c.text for c in chunks) == line


def test_dense_line_under_char_cap_still_fits_tokens():
    # 3,000 characters but ~1,500 tokens: the tokenizer, not the length, forces the split.
    line = ",".join(["a"] * 1500)
    chunks = run(line.encode()).chunks
    assert len(chunks) > 4 and all(c.token_count <= 256 for c in chunks)


def test_no_overlap_slivers_before_a_long_line():
    data = b"alpha one\nbeta two\ngamma three\n" + b"y " * 5000 + b"\nomega\n"
    chunks = run(data, ctx(max_tokens=64, target=50)).chunks
    before = [c for c in chunks if c.end_line < 4]
    assert [(c.start_line, c.end_line) for c in before] == [(1, 3)]
