"""What a question's own wording says it is, and what a page's own headings say a section is (issue 43).

A question about versions or changes ("what changed in 2.3", "since which version", "removed after upgrading",
"ImportError: cannot import name …") is answered by a changelog; any other question only meets one in passing,
where every feature is named in a terse line (``ASKS_ABOUT_CHANGES``; the changelog page kind's doubt yields to it,
query/trust_factors/page_kind.py).

A question that reports a problem ("… throws …", "why does my component render twice", "the screen does not
update") is best answered by a section written about problems: a troubleshooting page, an errors reference, a FAQ,
a "Common issues" or "Caveats" section.  Both are read from English wording alone, never from a path a judged set
named: ``PROBLEM_QUESTION`` over the query's text, ``PROBLEM_SECTION`` over a passage's heading path and its file's
path (query/page_focus.py ``problem_sections``).
"""

from __future__ import annotations

import re

# The wording of a problem report: an error or warning named, something failing, refusing, not working, a why-question.
PROBLEM_QUESTION = re.compile(
    r"\b(error|errors|fail|fails|failed|failing|throws?|thrown|exception|warning|warns?|crash\w*|broken|"
    r"doesn'?t|does not|won'?t|can'?t|cannot|not working|stopped|complains?|rejects?|why (does|is|do|am|are)|twice|"
    r"mismatch\w*|undefined|null)\b",
    re.IGNORECASE,
)
# The naming of a section about problems, in its headings or its file's path.
PROBLEM_SECTION = re.compile(
    r"\b(troubleshoot\w*|errors?|faq|common (issues|problems|mistakes|pitfalls)|pitfalls?|gotchas?|"
    r"problems?|known issues|fix\w*|debug\w*|warnings?|caveats?|i'?m getting|why)\b",
    re.IGNORECASE,
)


# The wording of a question about versions or changes: a version number, the words of releases and of changing, and
# the errors an API's removal or renaming raises in Python and JavaScript.
ASKS_ABOUT_CHANGES = re.compile(
    r"\bv?\d+\.\d+|\b(versions?|releases?|released|changelog|change[sd]?|new in|what'?s new|added|deprecat\w*|"
    r"removed?|renamed?|breaking|upgrad\w*|downgrad\w*|migrat\w*|since|no longer|anymore|"
    r"cannot import name|unexpected keyword argument|has no attribute|no such option|is not exported)\b",
    re.IGNORECASE,
)


def asks_about_changes(question: str) -> bool:
    """Whether the question's wording asks about versions or changes."""
    return ASKS_ABOUT_CHANGES.search(question) is not None


def reports_problem(question: str) -> bool:
    """Whether the question's wording reports a problem."""
    return PROBLEM_QUESTION.search(question) is not None


def names_problem_section(heading_path: list[str] | None, path: str) -> bool:
    """Whether a passage's headings or its file's path name a section about problems."""
    return PROBLEM_SECTION.search(" ".join([*(heading_path or []), path])) is not None
