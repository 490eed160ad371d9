"""A Sphinx project's pages where its site publishes them (issue 43): the pages of a ``conf.py`` folder at the
site's root, as its builder writes them.

Flask, Django, Requests and most Python libraries publish with Sphinx, and their hits cited GitHub: no route was
known for a reStructuredText page.  A Sphinx source folder (a ``conf.py`` that assigns Sphinx's own settings,
extractors/sphinx_conf.py) publishes each of its source files, a file in one of its source suffixes (``.rst``,
Django's ``.txt``, and Markdown where MyST is among its extensions), minus its ``exclude_patterns``:

- the ``html`` builder (Sphinx's default) writes ``x/y.rst`` as ``x/y.html``, the root ``index`` as the site's root;
- ``dirhtml`` writes it as ``x/y/`` and an ``index`` as its folder (Flask builds this way).

Which builder a site uses is a command-line choice, so it is read where Read the Docs is told it: the repository's
``.readthedocs.yaml`` (``sphinx.builder``, or a ``-b``/``-M`` option of a ``sphinx-build`` in ``build.commands``,
for the ``conf.py`` its ``sphinx.configuration`` names, or every one when it names none); else ``html``.  The YAML
is read with a safe loader: nothing in it is run.  Files of the folder in no source suffix are off the site.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

import yaml

from trustindex.extractors.globs import first_match
from trustindex.extractors.sphinx_conf import SphinxConf, excluded_globs, read_sphinx_conf
from trustindex.schemas.page_url import SPHINX

CONFIG_RE = re.compile(r"^(?P<root>(?:.*/)?)conf\.py$")
READTHEDOCS_RE = re.compile(r"^\.readthedocs\.ya?ml$")
HTML, DIRHTML = "html", "dirhtml"
_BUILDERS = (HTML, DIRHTML)
_BUILDER_OPTION = re.compile(r"\bsphinx-build\b.*?\s-(?:b|M)\s+(\w+)")
_MARKDOWN = (".md", ".markdown")
MAX_COMMAND = 2000


@dataclass(frozen=True)
class SphinxSite:
    """One Sphinx source folder and the builder that publishes it (extractors/static_sites.py ``StaticSite``)."""

    conf: SphinxConf
    builder: str = HTML

    @property
    def root(self) -> str:
        return self.conf.root

    @property
    def folder(self) -> str:
        return self.conf.root

    @property
    def label(self) -> str:
        return f"a page of the Sphinx project of {self.conf.root}conf.py ({self.builder} builder)"

    @property
    def generator(self) -> str:
        """How it ids a section (schemas/page_url.py: docutils' make_id)."""
        return SPHINX

    def is_page(self, rel: str) -> bool:
        """Whether the file at ``rel`` (relative to the source folder) is a source file of the project."""
        return rel.endswith(self.conf.suffixes) or (self.conf.markdown and rel.endswith(_MARKDOWN))

    def route(self, rel: str) -> str:
        """The page's path on the site for the source file at ``rel``."""
        stem = rel.rsplit(".", 1)[0]
        if stem == "index":
            return ""
        if self.builder == DIRHTML:
            return stem[: -len("index")] if posixpath.basename(stem) == "index" else f"{stem}/"
        return f"{stem}.html"

    def unserved(self, rel: str) -> str | None:
        """Why the project publishes no page for its source file at ``rel``, or None."""
        hit = first_match(rel, excluded_globs(self.conf))
        return f"excluded by its conf.py exclude_patterns ({hit!r})" if hit else None


def read_sphinx_site(path: str, text: str, builders: dict[str | None, str]) -> SphinxSite | None:
    """The site a ``conf.py`` at ``path`` describes, or None when it is no Sphinx configuration; ``builders``: the
    builder Read the Docs is told per ``conf.py`` path (None: for every one), ``readthedocs_builders``."""
    conf = read_sphinx_conf(path, text)
    if conf is None:
        return None
    return SphinxSite(conf, builders.get(path) or builders.get(None) or HTML)


def readthedocs_builders(text: str) -> dict[str | None, str]:
    """The builder a ``.readthedocs.yaml`` tells Read the Docs to use, keyed by the ``conf.py`` it names (None: it
    names none); {} when it says nothing this reads."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}
    if not isinstance(data, dict):
        return {}
    sphinx = data.get("sphinx") if isinstance(data.get("sphinx"), dict) else {}
    builder = sphinx.get("builder") if isinstance(sphinx.get("builder"), str) else None
    build = data.get("build") if isinstance(data.get("build"), dict) else {}
    commands = build.get("commands") if isinstance(build.get("commands"), list) else []
    for command in commands:
        # a command is one shell line; a longer one (untrusted input) is read in its first part only, so the
        # pattern's search stays linear in what it reads
        m = _BUILDER_OPTION.search(command[:MAX_COMMAND]) if isinstance(command, str) else None
        builder = m[1] if m else builder
    if builder not in _BUILDERS:
        return {}
    conf = sphinx.get("configuration")
    return {posixpath.normpath(conf).lstrip("/") if isinstance(conf, str) else None: builder}
