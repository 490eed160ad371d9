"""The Markdown files a page renders inside itself: MDX ``import Name from './_partial.mdx'`` then ``<Name />``.

Docusaurus publishes no page for a partial (a ``_`` file or folder), yet its text is on every page that imports and
renders it: the reader opens that page.  This reads, outside fenced code, each default import of a ``.md``/``.mdx``
file and keeps those whose component the page uses (``<Name`` followed by a space, ``/`` or ``>``): an import that is
never rendered shows nothing.  A relative specifier is resolved against the page's folder (one that climbs out of
the repository is dropped); ``@site/...`` (the site's root, where docusaurus.config lives) is kept as written, for
the caller who knows the site's root (ingest/includes.py).  Pure and line-based: a default import of a Markdown file
is one line in practice, and a multi-line one is not read (the partial then stays unrouted, as before).
"""

from __future__ import annotations

import posixpath
import re

from trustindex.extractors.markdown_lines import outside_fences

SITE_ALIAS = "@site/"
_IMPORT = re.compile(r"""^import\s+([A-Za-z_$][\w$]*)\s+from\s+(['"])([^'"\n]+\.mdx?)\2\s*;?\s*$""")


def rendered_includes(text: str, path: str) -> list[str]:
    """The files the page at ``path`` imports and renders, as repository paths (``@site/...`` kept as written), in
    the order of their imports, each once."""
    imports: dict[str, str] = {}
    body: list[str] = []
    for _row, line in outside_fences(text.split("\n")):
        m = _IMPORT.match(line)
        if m:
            imports[m[1]] = m[3]
        else:
            body.append(line)
    if not imports:
        return []
    rest = "\n".join(body)
    out: list[str] = []
    for name, spec in imports.items():
        if not re.search(rf"<{re.escape(name)}[\s/>]", rest):
            continue
        target = resolve_include(spec, path)
        if target is not None and target not in out:
            out.append(target)
    return out


def resolve_include(spec: str, path: str) -> str | None:
    """The repository path a page at ``path`` names by ``spec`` (``./`` or ``../`` relative to its folder), or
    ``@site/...`` kept as written; None for one that climbs out of the repository or names a package's file."""
    if spec.startswith(SITE_ALIAS):
        rest = posixpath.normpath(spec[len(SITE_ALIAS) :])
        return None if rest.startswith("..") else SITE_ALIAS + rest
    if not spec.startswith(("./", "../")):
        return None  # a package's file, or an absolute path on the build machine
    target = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
    return None if target.startswith("..") or target.startswith("/") else target
