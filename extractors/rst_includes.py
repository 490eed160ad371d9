"""The files a reStructuredText page renders inside itself: docutils' ``.. include:: path`` (issue 43).

Flask's ``docs/changes.rst`` is one line, ``.. include:: ../CHANGES.rst``: the changelog lies outside the Sphinx
folder, off the site, yet its text is on the site's Changes page, which the reader opens.  As an MDX partial is
(extractors/mdx_includes.py), the included file is indexed with its own path and lines and cited at the page that
includes it (ingest/includes.py).  A relative path is resolved against the page's folder (one that climbs out of the
repository is dropped); an absolute one (``/x.rst``) is Sphinx's source folder's, kept as ``@site/x.rst`` for the
caller who knows that folder; docutils' standard files (``<isonum.txt>``) are none of the repository's.  Line-based:
a directive is one line.
"""

from __future__ import annotations

import re

from trustindex.extractors.mdx_includes import SITE_ALIAS, resolve_include

_INCLUDE = re.compile(r"^\s*\.\.\s+include::\s+(\S+)\s*$")


def included_files(text: str, path: str) -> list[str]:
    """The files the page at ``path`` includes, as repository paths (``@site/...`` for a path from the source
    folder's root), in order, each once."""
    out: list[str] = []
    for line in text.split("\n"):
        m = _INCLUDE.match(line)
        if m is None or m[1].startswith("<"):
            continue
        spec = m[1]  # docutils reads a relative path from the page's folder, an absolute one from the source folder
        target = resolve_include(SITE_ALIAS + spec.lstrip("/") if spec.startswith("/") else "./" + spec, path)
        if target and target not in out:
            out.append(target)
    return out
