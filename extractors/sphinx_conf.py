"""Which files a Sphinx project reads as its pages, in its own words: ``conf.py``'s ``source_suffix`` and
``exclude_patterns`` (issue 43).

Django writes its documentation in reStructuredText under ``docs/**/*.txt`` (its ``conf.py`` says
``source_suffix = ".txt"``), so a source that reads every ``.rst`` page (the default include) found none of Django's
pages, and one that included ``docs/**/*.txt`` had them cut into line windows as plain text, with no section titles.
A folder holding a Sphinx ``conf.py`` is a Sphinx source folder; its files with one of its reStructuredText suffixes
are reStructuredText pages, and a source whose include reads ``.rst`` pages there reads them in those suffixes too
(``SphinxSources.widen``), minus its ``exclude_patterns`` (Django's names ``requirements.txt``).

``conf.py`` is Python that Sphinx executes; it is read here with ``ast`` and never run: only top-level assignments of
literals count (``source_suffix = ".txt"``, a list of suffixes, or a dict of suffix to parser naming
``restructuredtext``), and a value computed at build time is not known (the default ``.rst`` then stands).  A
``conf.py`` that assigns none of Sphinx's own settings is not a Sphinx configuration.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass

from trustindex.extractors.globs import first_match

CONF_NAME = "conf.py"
RST = ".rst"
# settings only a Sphinx configuration assigns (``project`` alone is too common a name)
_SPHINX_SETTINGS = frozenset(
    {"extensions", "html_theme", "master_doc", "root_doc", "source_suffix", "templates_path", "exclude_patterns"}
)
# suffixes already read by their own extractor whatever a Sphinx project says (MyST Markdown stays Markdown)
_OWN_KINDS = (".md", ".mdx", ".markdown")


@dataclass(frozen=True)
class SphinxConf:
    """One Sphinx source folder: ``root`` ("docs/", "" the repository's root), the suffixes it reads as
    reStructuredText (".txt"), and its ``exclude_patterns`` (relative to the root, as Sphinx reads them)."""

    root: str
    suffixes: tuple[str, ...]
    exclude: tuple[str, ...]
    markdown: bool = False  # MyST is among its extensions: its Markdown files are pages too


def read_sphinx_conf(path: str, text: str) -> SphinxConf | None:
    """The Sphinx settings a ``conf.py`` at ``path`` assigns as literals, or None when it is no Sphinx
    configuration (or no Python this parser reads)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # no Python, or nested past the parser's reach
        return None
    values: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    values[target.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            values[node.target.id] = node.value
    if not _SPHINX_SETTINGS & set(values):
        return None
    folder = posixpath.dirname(path)
    root = folder + "/" if folder else ""
    suffixes = _suffixes(_literal(values.get("source_suffix")))
    exclude = tuple(p for p in _literal(values.get("exclude_patterns")) or () if isinstance(p, str) and p)
    extensions = _literal(values.get("extensions"))
    myst = isinstance(extensions, list | tuple) and bool({"myst_parser", "myst_nb"} & set(extensions))
    return SphinxConf(root, suffixes, exclude, myst)


def _literal(node: ast.expr | None) -> object:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None  # computed when Sphinx runs: not known here


def _suffixes(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        found = [value]
    elif isinstance(value, list | tuple):
        found = [v for v in value if isinstance(v, str)]
    elif isinstance(value, dict):
        found = [k for k, v in value.items() if isinstance(k, str) and v in ("restructuredtext", None)]
    else:
        found = []
    out = tuple(dict.fromkeys(s if s.startswith(".") else "." + s for s in found if s and s not in _OWN_KINDS))
    return out or (RST,)


@dataclass(frozen=True)
class SphinxSources:
    """A source's Sphinx source folders, the deepest first (a page belongs to the nearest ``conf.py`` above it)."""

    confs: tuple[SphinxConf, ...] = ()

    @classmethod
    def of(cls, confs: Iterable[SphinxConf]) -> SphinxSources:
        return cls(tuple(sorted(confs, key=lambda c: (-c.root.count("/"), c.root))))

    def conf_of(self, path: str) -> SphinxConf | None:
        return next((c for c in self.confs if path.startswith(c.root)), None)

    def is_page(self, path: str) -> bool:
        """Whether the nearest Sphinx project above ``path`` reads it as a reStructuredText page by a suffix of its
        own (not ``.rst``, which every source reads as reStructuredText) and does not exclude it."""
        conf = self.conf_of(path)
        if conf is None or not any(path.endswith(s) for s in conf.suffixes if s != RST):
            return False
        return first_match(path[len(conf.root) :], excluded_globs(conf)) is None

    def widen(self, include: tuple[str, ...], exclude: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``include`` and ``exclude`` with each project's own suffixes where the include reads that project's
        ``.rst`` pages (a source that reads every page of a Sphinx project reads it whatever suffix the project
        gives its pages), and that project's ``exclude_patterns`` (Django's ``requirements.txt`` is no page)."""
        widened = [c for c in self.confs if any(s != RST for s in c.suffixes)]
        widened = [c for c in widened if first_match(f"{c.root}index{RST}", include) is not None]
        added = [f"{c.root}**/*{s}" for c in widened for s in c.suffixes if s != RST]
        skipped = [c.root + g for c in widened for g in excluded_globs(c)]
        return _plus(include, added), _plus(exclude, skipped)


def _plus(globs: tuple[str, ...], more: list[str]) -> tuple[str, ...]:
    return globs + tuple(g for g in dict.fromkeys(more) if g not in globs)


def excluded_globs(conf: SphinxConf) -> list[str]:
    """Sphinx's exclude_patterns as globs: a pattern names a file or a folder (and so everything below it)."""
    return [g for p in conf.exclude for g in (p.rstrip("/"), p.rstrip("/") + "/**")]


NO_SPHINX = SphinxSources()
