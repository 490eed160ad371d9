"""Line-window fallback for text files a source includes that no other extractor understands.

Windows fill about ``ctx.target_tokens`` tokens (never more than ``ctx.max_tokens``), start and end
on non-blank lines, and share ``OVERLAP_LINES`` lines with the window before so a sentence cut at
a boundary is still whole in one of them.  A line too long for any window is cut into character
slices that share its line number.  ``heading_path`` is empty and ``symbol_path`` None.  Invalid
UTF-8 or a NUL byte (a binary file) raises ``ExtractionError`` naming the byte offset.

``chunk_problems`` checks the invariants every line-based chunker here keeps (the code chunkers'
tests use it too).
"""

from __future__ import annotations

from trustindex.extractors.base import Chunk, Extraction, FileContext
from trustindex.extractors.code_common import decode_lines, text_windows

OVERLAP_LINES = 2


def extract_text(data: bytes, ctx: FileContext) -> Extraction:
    """Overlapping line windows of a UTF-8 text file (rules in the module docstring)."""
    lines = decode_lines(data, ctx.path)
    return Extraction(kind="text", chunks=text_windows(lines, ctx, overlap=OVERLAP_LINES))


def chunk_problems(lines: list[str], chunks: list[Chunk], ctx: FileContext) -> list[str]:
    """Broken invariants of a chunking (empty list when sound); used by the tests and usable as a
    debug check: ranges inside the file, text equal to its lines (slices of one over-long line
    concatenating to it), no blank first/last line, every non-blank line covered, ordinals
    0..n-1 in line order, token counts true and within ``ctx.max_tokens``."""
    problems: list[str] = []
    covered = [False] * (len(lines) + 2)
    slices: dict[int, list[str]] = {}
    last_start = 0
    for n, chunk in enumerate(chunks):
        where = f"chunk {n} [{chunk.start_line}-{chunk.end_line}]"
        if chunk.ordinal != n:
            problems.append(f"{where}: ordinal {chunk.ordinal}")
        if not 1 <= chunk.start_line <= chunk.end_line <= len(lines):
            problems.append(f"{where}: range outside 1..{len(lines)}")
            continue
        if chunk.start_line < last_start:
            problems.append(f"{where}: out of line order")
        last_start = chunk.start_line
        span = "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        if chunk.text != span:
            if chunk.start_line == chunk.end_line and chunk.text in span:
                slices.setdefault(chunk.start_line, []).append(chunk.text)
            else:
                problems.append(f"{where}: text differs from its lines")
        if not lines[chunk.start_line - 1].strip() or not lines[chunk.end_line - 1].strip():
            problems.append(f"{where}: starts or ends on a blank line")
        if chunk.token_count != ctx.count_tokens(chunk.text) or chunk.token_count > ctx.max_tokens:
            problems.append(f"{where}: token_count {chunk.token_count}")
        for i in range(chunk.start_line, chunk.end_line + 1):
            covered[i] = True
    for line_no, parts in slices.items():
        if "".join(parts) != lines[line_no - 1]:
            problems.append(f"line {line_no}: slices do not concatenate to the line")
    missed = [i for i in range(1, len(lines) + 1) if lines[i - 1].strip() and not covered[i]]
    if missed:
        problems.append(f"non-blank lines not covered: {missed[:10]}")
    return problems
