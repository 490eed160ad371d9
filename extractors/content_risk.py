"""What a passage says to its reader: instructions aimed at AI assistants, hidden text, credential phishing.

Pure: text in, findings out, by the rules of ``schemas/content_risk_rules.toml``.  A finding is evidence, as a
deprecation marker is: the index keeps the passage, the policy decides what it costs (or excludes it), and the
answer says why.  ``neutralise`` removes the invisible characters the rules mark and the HTML comments outside
code, so what is served and what is embedded is what a person reading the page sees; a finding inside what was
removed says so in its detail.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from trustindex.extractors.base import Chunk
from trustindex.schemas.content_risk import Rule, default_rules

REMOVED = "removed from the served text"
_WORD = re.compile(r"[^\W\d_]{2,}")
# an address is no prose: a comment holding a design file's link (Vue's docs keep a figma URL under each diagram)
_ADDRESS = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+|\bwww\.\S+", re.I)
# Where a clause or sentence ends: the reach of a rule's unless/requires checks.
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n\s*\n|\n\s*(?:[-*+]|\d+[.)])\s")
_CLAUSE_END = re.compile(r"[.!?;:—–](?=\s|$)|\n")
# A line break inside a paragraph (the next line is prose, not a blank line, list item, heading, quote, table
# or fence): read as a space, so that a sentence wrapped over two lines matches as one.  Same length: the
# findings' offsets stay those of the passage.
_SOFT_BREAK = re.compile(r"\n(?=[ \t]*[^\s#>*+|`\d-])")


@dataclass(frozen=True)
class Finding:
    kind: str
    rule: str
    reason: str
    start: int  # character offsets in the passage as given
    end: int
    detail: str = ""


@dataclass(frozen=True)
class ContentRisk:
    """A finding placed in its file: the passage (chunk ordinal), the lines, the offsets in the served text."""

    chunk_ordinal: int
    kind: str
    rule: str
    reason: str
    start_line: int
    end_line: int
    start_char: int
    end_char: int
    detail: str = ""


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    lo = 0
    for m in _SENTENCE_END.finditer(text, 0, start):
        lo = m.end()
    m = _SENTENCE_END.search(text, end)
    return lo, (m.start() if m else len(text))


def _clause_before(text: str, start: int, sentence_start: int) -> str:
    before = text[sentence_start:start]
    ends = list(_CLAUSE_END.finditer(before))
    return before[ends[-1].end() :] if ends else before


def _codepoints(chars: str) -> str:
    counts: dict[str, int] = {}
    for c in chars:
        counts[c] = counts.get(c, 0) + 1
    return ", ".join(
        f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed').lower()}" + (f" ×{n}" if n > 1 else "")
        for c, n in counts.items()
    )


def scan_text(text: str, rules: tuple[Rule, ...] | None = None) -> list[Finding]:
    """Every rule's findings in ``text``, in order of position."""
    out: list[Finding] = []
    original, text = text, _SOFT_BREAK.sub(" ", text)
    for rule in rules if rules is not None else default_rules():
        for m in rule.pattern.finditer(text):
            body = _ADDRESS.sub(" ", m.group("body") or "") if rule.body_min_words else ""
            if rule.body_min_words and len(_WORD.findall(body)) < rule.body_min_words:
                continue
            lo, hi = _sentence(text, m.start(), m.end())
            sentence = text[lo:hi]
            if rule.requires is not None and not rule.requires.search(sentence):
                continue
            if rule.unless_sentence is not None and rule.unless_sentence.search(sentence):
                continue
            at = m.start("verb") if "verb" in rule.pattern.groupindex else m.start()
            if rule.unless_before is not None and rule.unless_before.search(_clause_before(text, at, lo)):
                continue
            detail = _codepoints(original[m.start() : m.end()]) if rule.neutralise else ""
            # the span starts at the verb when the rule names one (its imperative prefix is context, not finding)
            out.append(Finding(rule.kind, rule.id, rule.reason, at, m.end(), detail))
    return sorted(out, key=lambda f: (f.start, f.end, f.rule))


def _hidden(rules: tuple[Rule, ...]) -> re.Pattern[str] | None:
    marked = [r.pattern.pattern for r in rules if r.neutralise]
    return re.compile("|".join(f"(?:{p})" for p in marked)) if marked else None


_DEFAULT_HIDDEN: list[re.Pattern[str] | None] = []
# A fenced code block's opening or closing line (CommonMark: up to three spaces, then ``` or ~~~).
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)
# Outside fences: an inline code span (kept whole: a comment in code is code) or an HTML comment, which no site
# renders; one left open at the end of a passage hides the rest of it, as it does on the page.
_CODE_OR_COMMENT = re.compile(r"(?P<code>`+)[\s\S]*?(?P=code)|(?P<comment><!--[\s\S]*?(?:-->|\Z))")


def _hidden_pattern(rules: tuple[Rule, ...] | None) -> re.Pattern[str] | None:
    if rules is not None:
        return _hidden(rules)
    if not _DEFAULT_HIDDEN:
        _DEFAULT_HIDDEN.append(_hidden(default_rules()))
    return _DEFAULT_HIDDEN[0]


def _comment_spans(text: str) -> list[tuple[int, int]]:
    """Where the HTML comments outside code are: outside fenced blocks and inline code spans."""
    if "<!--" not in text:
        return []
    spans: list[tuple[int, int]] = []
    pos, fence = 0, None
    for m in _FENCE.finditer(text):
        if fence is None:
            spans += _comments_in(text, pos, m.start())
            fence = m.group(1)
        elif m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
            fence, pos = None, text.find("\n", m.end()) + 1 or len(text)
    if fence is None:
        spans += _comments_in(text, pos, len(text))
    return spans


def _comments_in(text: str, start: int, end: int) -> list[tuple[int, int]]:
    return [m.span() for m in _CODE_OR_COMMENT.finditer(text, start, end) if m.group("comment")]


def removed_spans(text: str, rules: tuple[Rule, ...] | None = None) -> list[tuple[int, int]]:
    """What is left out of the served (and embedded) text, in order: the characters of the rules marked
    ``neutralise`` (zero-width, bidi controls, tags) and the HTML comments outside code (a reader of the page never
    sees either; issue 40)."""
    hidden = _hidden_pattern(rules)
    spans = _comment_spans(text)
    if hidden is not None:
        spans += [m.span() for m in hidden.finditer(text)]
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        elif hi > lo:
            merged.append((lo, hi))
    return merged


def neutralise(text: str, rules: tuple[Rule, ...] | None = None) -> str:
    """``text`` as served and embedded: without ``removed_spans``."""
    spans = removed_spans(text, rules)
    if not spans:
        return text
    out, pos = [], 0
    for lo, hi in spans:
        out.append(text[pos:lo])
        pos = hi
    out.append(text[pos:])
    return "".join(out)


def served_offset(spans: list[tuple[int, int]], pos: int) -> int:
    """Where offset ``pos`` of the original text lands in the served one (inside a removed span: where it was)."""
    removed = 0
    for lo, hi in spans:
        if pos <= lo:
            break
        removed += min(pos, hi) - lo
    return pos - removed


def passage_risks(chunks: list[Chunk], rules: tuple[Rule, ...] | None = None) -> list[ContentRisk]:
    """The findings of every passage, placed by line and by offset in the passage as served (neutralised)."""
    out: list[ContentRisk] = []
    for ch in chunks:
        findings = scan_text(ch.text, rules)
        spans = removed_spans(ch.text, rules) if findings else []
        for f in findings:
            gone = any(lo <= f.start and f.end <= hi for lo, hi in spans)
            out.append(
                ContentRisk(
                    chunk_ordinal=ch.ordinal,
                    kind=f.kind,
                    rule=f.rule,
                    reason=f.reason,
                    start_line=ch.start_line + ch.text.count("\n", 0, f.start),
                    end_line=ch.start_line + ch.text.count("\n", 0, max(f.start, f.end - 1)),
                    start_char=served_offset(spans, f.start),
                    end_char=served_offset(spans, f.end),
                    # what a comment said is kept out of the passage: the breakdown says it was there
                    detail="; ".join(x for x in (f.detail, REMOVED if gone and not f.detail else "") if x),
                )
            )
    return out
