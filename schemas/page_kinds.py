"""What a page is, as evidence: the vocabulary of ``documents.page_kind`` (whether the site serves it: page_routes).

``extractors/page_kind.py`` names each document's kind at build time from its path, its front matter and the
site's configuration; the policy's ``[page_kind]`` section gives each kind a multiplier at query time
(``query/trust_factors/page_kind.py``).  The kind is only ever read from where a file sits and what it says of
itself; the weights are the operator's, so a repository cannot raise its own standing by what it calls a page.
The one thing a page's text can name is ``ai_written`` (its own disclosure that a model wrote it), which can only
lower it.
"""

from __future__ import annotations

REFERENCE = "reference"  # documentation written for people that no more specific rule names (API, concepts, READMEs)
GUIDE = "guide"  # tutorials, how-to guides, getting started, examples
BLOG = "blog"  # a post of the site's blog: written for its day
RELEASE_NOTES = "release_notes"  # one release's notes (a page of a release-notes folder, a file named as release notes)
# a project's log of every release's changes in one file (CHANGELOG.md, CHANGES.rst, HISTORY.md, NEWS) or a change
# fragment waiting for one: it names most features in passing, one terse line each
CHANGELOG = "changelog"
AGENT_INSTRUCTIONS = "agent_instructions"  # written to steer an AI agent: AGENTS.md, CLAUDE.md, skills, plugins
AI_WRITTEN = "ai_written"  # the page says an AI model wrote it or sections of it (extractors/ai_disclosure.py)
DRAFT = "draft"  # a page the site does not publish: a "_" file or folder, or front matter draft: true
CODE = "code"  # source code
# a page written in another language than most of its source's (a translation): named at query time from the
# documents' languages (query/page_languages.py), never at build time, so the page keeps its built kind beside it
OTHER_LANGUAGE = "other_language"
UNKNOWN = "unknown"  # a snapshot built before documents had a page_kind
PAGE_KINDS = (
    REFERENCE,
    GUIDE,
    BLOG,
    RELEASE_NOTES,
    CHANGELOG,
    AGENT_INSTRUCTIONS,
    AI_WRITTEN,
    DRAFT,
    CODE,
    OTHER_LANGUAGE,
    UNKNOWN,
)
