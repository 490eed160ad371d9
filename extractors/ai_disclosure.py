"""Whether a page says that an AI model wrote it, or sections of it (page kind ``ai_written``).

Only the page's own disclosure counts, and only in the places where writers put one:

1. front matter that declares it: ``ai_generated: true`` (or ``ai-generated``, ``aiGenerated``, ``llm_generated``),
   or ``generated_by``/``generator`` naming a model (Claude, ChatGPT/GPT-n, Copilot, Gemini, "AI", "LLM"); never
   ``author``/``authors``, which name people (a docs writer may be called Claude);
2. a heading that carries a badge, ``## Transaction structure *[AI-generated, verified]*`` (the section was written
   by a model; "verified" does not make a person its author);
3. the page's opening (its first ``OPENING_CHARS`` characters after the front matter, HTML comments included) or
   its closing (the last ``CLOSING_CHARS``, where a footer says it): a statement that a model wrote, generated or
   drafted it ("written primarily by Anthropic Claude", "generated with ChatGPT") or the badge legend of such a
   page ("AI-generated sections are marked *[AI-generated]*");
4. Claude Code's signature line anywhere ("Generated with [Claude Code](...)").

Mentions are not disclosures: "LLM-generated Compact code frequently invents APIs" or a post titled "The problem
with AI-generated code" say nothing of who wrote the page, so a bare adjective is never enough; the statement must
name the writing ("written/generated/produced/drafted/authored ... by/with/using <model>") or be a bracketed badge.
A checklist item is a form, not a statement: a pull-request template's "- [ ] is primarily authored by AI" is skipped.

A disclosure can only lower a page's standing (the policy's ``[page_kind] ai_written`` weight), never raise it, so
reading it from the page's own text keeps untrusted input unable to promote itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from trustindex.extractors.frontmatter import body_offset
from trustindex.extractors.markdown_lines import atx_heading, outside_fences

OPENING_CHARS = 2000  # a page's preamble: its title, a generated-by comment, a legend or a disclaimer paragraph
CLOSING_CHARS = 600  # a footer: "This post was drafted with ChatGPT and edited by ..."
FRONT_MATTER_FLAGS = ("ai_generated", "ai-generated", "aiGenerated", "llm_generated", "llm-generated")
# not author/authors: a Docusaurus author key names a person ("claude" is a Midnight docs writer)
FRONT_MATTER_BY = ("generated_by", "generated-by", "generatedBy", "generator")

_MODEL = (
    r"(?:an?\s+)?(?:AI(?:\s+(?:model|assistant|tools?))?|LLMs?|large[- ]language[- ]models?"
    # Claude the model, not a person called Claude: "Claude Code", "Claude Opus 4", never "Claude Barde"
    r"|(?:Anthropic(?:'s)?\s+)?Claude(?:\s+(?:Code|Opus|Sonnet|Haiku)(?:\s+\d[\d.]*)?|(?!(?-i:\s+[A-Z][a-z])))"
    r"|(?:OpenAI(?:'s)?\s+)?(?:ChatGPT|GPT-?\d[\w.-]*|Codex)"
    r"|(?:GitHub\s+)?Copilot|(?:Google\s+)?Gemini)\b"
    # people named by their field are not a model: "written by AI researchers"
    r"(?!\s+(?:researchers?|engineers?|experts?|teams?|labs?|compan\w+|groups?|startups?|safety|ethics|policy))"
)
_MODEL_NAME = re.compile(_MODEL, re.IGNORECASE)
# "written primarily by Anthropic Claude", "was generated with ChatGPT", "drafted using an LLM"
_STATEMENT = re.compile(
    r"\b(?:written|generated|produced|drafted|authored|created)(?:\s+[\w-]+){0,2}?\s+(?:by|with|using)\s+" + _MODEL,
    re.IGNORECASE,
)
# "*[AI-generated]*", "[AI-generated, verified]", "[LLM-written]", "(AI-generated)" as a badge
_BADGE = re.compile(r"[\[(]\s*(?:AI|LLM)[- ](?:generated|written|authored)\b[^\])\n]{0,40}[\])]", re.IGNORECASE)
_CLAUDE_CODE_SIGNATURE = re.compile(r"Generated with \[?Claude Code\b")
_TASK_ITEM = re.compile(r"(?m)^\s*(?:[-*+]|\d+[.)])\s+\[[ xX]\].*$")


def ai_disclosure(text: str, front_matter: Mapping | None = None) -> str | None:
    """The disclosure that names a page AI-written, as a reason ("a heading's badge: [AI-generated, verified]"), or
    None.  The opening is read from where the body starts, after the front matter."""
    fm = front_matter or {}
    for key in FRONT_MATTER_FLAGS:
        if fm.get(key) is True or str(fm.get(key, "")).strip().lower() in ("true", "yes"):
            return f"front matter {key}: {fm[key]}"
    for key in FRONT_MATTER_BY:
        value = fm.get(key)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and _MODEL_NAME.fullmatch(item.strip()):
                return f"front matter {key}: {item.strip()}"
    start = body_offset(text)
    opening = _TASK_ITEM.sub("", text[start : start + OPENING_CHARS])
    statement = _STATEMENT.search(opening)
    if statement:
        return f"the page's opening says: {_squash(statement.group(0))!r}"
    closing_from = max(start + OPENING_CHARS, len(text) - CLOSING_CHARS)
    statement = _STATEMENT.search(_TASK_ITEM.sub("", text[closing_from:]))
    if statement:
        return f"the page's closing says: {_squash(statement.group(0))!r}"
    badge = _BADGE.search(opening)
    if badge:
        return f"the page's opening shows the badge {_squash(badge.group(0))!r}"
    # the line walk only for a page with a badge somewhere (one C-speed search spares nearly every page the loop)
    for _row, line in outside_fences(text.split("\n")) if _BADGE.search(text) else ():
        heading = atx_heading(line)
        badge = _BADGE.search(heading[1]) if heading else None
        if badge:
            return f"a heading's badge: {_squash(badge.group(0))!r}"
    if _CLAUDE_CODE_SIGNATURE.search(text):
        return "Claude Code's signature: 'Generated with Claude Code'"
    return None


def _squash(s: str) -> str:
    return " ".join(s.split())[:80]
