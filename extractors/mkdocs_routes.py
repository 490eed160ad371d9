"""Where an MkDocs page is published: its route on the site, read from ``mkdocs.yml`` (never executed) (issue 43).

FastAPI, Pydantic and most Python projects publish with MkDocs, and with no Docusaurus config the routes fell back
to Docusaurus's defaults (``docs/x.md`` at ``/docs/x``): wrong for an MkDocs site, which serves the pages of its
``docs_dir`` (default ``docs``, beside ``mkdocs.yml``) at the site's root:

- ``x/y.md`` at ``x/y/`` (``use_directory_urls``, the default) or ``x/y.html``; ``index.md`` and ``README.md`` are
  their folder's page (``x/``, ``x/index.html``);
- files and folders whose name starts with ``.`` and the ``templates`` folder at the top are not pages (MkDocs's
  default ``exclude_docs``), nor what the config's own ``exclude_docs`` names (gitignore-style lines) or its
  ``draft_docs`` (built by ``mkdocs serve`` only): those are ``unrouted``;
- anything outside the ``docs_dir`` (FastAPI's translations, generated from other configs, a README at the root)
  is ``off_site``, cited at its hosting URL.

The source's ``site_url`` is the site's root (a config's own ``site_url`` is not read: the operator says where the
site is).  ``mkdocs.yml`` is YAML with Python tags (``!!python/name:...``) and environment tags (``!ENV``) that only
MkDocs resolves: they read as nothing here, and nothing is imported or run.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from trustindex.extractors.globs import first_match
from trustindex.schemas.page_url import MKDOCS

CONFIG_RE = re.compile(r"^(?P<root>(?:.*/)?)mkdocs\.ya?ml$")
_INDEX_NAMES = ("index", "readme")


@dataclass(frozen=True)
class MkDocsSite:
    """One ``mkdocs.yml``: its folder (``root``), its ``docs_dir`` relative to the repository (ending in /), whether
    pages get folder URLs, and the gitignore-style lines of ``exclude_docs`` and ``draft_docs``."""

    root: str
    docs: str
    directory_urls: bool = True
    exclude: tuple[str, ...] = ()
    drafts: tuple[str, ...] = ()

    @property
    def folder(self) -> str:
        """The folder of its pages (extractors/static_sites.py ``StaticSite``)."""
        return self.docs

    @property
    def label(self) -> str:
        return f"a page of the MkDocs site of {self.root}mkdocs.yml"

    @property
    def generator(self) -> str:
        """How it ids a heading (schemas/page_url.py: Python-Markdown's toc slugify)."""
        return MKDOCS

    def is_page(self, rel: str) -> bool:
        return rel.endswith(".md")

    def route(self, rel: str) -> str:
        """The page's path on the site for the file at ``rel`` (relative to the docs folder)."""
        stem, name = rel.rsplit(".", 1)[0], posixpath.basename(rel).rsplit(".", 1)[0]
        folder = posixpath.dirname(rel)
        if name.lower() in _INDEX_NAMES:
            return f"{folder}/" if folder and self.directory_urls else (f"{folder}/index.html" if folder else "")
        return f"{stem}/" if self.directory_urls else f"{stem}.html"

    def unserved(self, rel: str) -> str | None:
        """Why the site publishes no page for the file at ``rel`` (relative to its docs folder), or None."""
        parts = rel.split("/")
        dotted = next((p for p in parts if p.startswith(".")), None)
        if dotted:
            return f"{dotted!r} starts with . (MkDocs serves no page under it)"
        if parts[0] == "templates" and len(parts) > 1:
            return "under templates/ (MkDocs's default exclude_docs)"
        hit = first_match(rel, [g for p in self.exclude for g in _gitignore_globs(p)])
        if hit:
            return f"excluded by exclude_docs {hit!r}"
        if first_match(rel, [g for p in self.drafts for g in _gitignore_globs(p)]):
            return "a draft (draft_docs: built by mkdocs serve only)"
        return None


def read_mkdocs_config(path: str, text: str) -> MkDocsSite | None:
    """The site an ``mkdocs.yml`` at ``path`` describes, or None when it is no YAML mapping."""
    import yaml

    class _Loader(yaml.SafeLoader):  # every tag MkDocs resolves at build time reads as nothing
        pass

    _Loader.add_multi_constructor("", lambda _loader, _suffix, _node: None)
    try:
        config = yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader whose unknown tags construct None
    except yaml.YAMLError:
        return None
    if not isinstance(config, dict):
        return None
    folder = posixpath.dirname(path)
    root = folder + "/" if folder else ""
    docs_dir = config.get("docs_dir")
    docs_dir = docs_dir if isinstance(docs_dir, str) and docs_dir.strip() else "docs"
    docs = posixpath.normpath(posixpath.join(folder, docs_dir.strip()))
    if docs.startswith("..") or docs.startswith("/"):
        return None  # a docs folder outside the repository: nothing here is its page
    directory_urls = config.get("use_directory_urls", True) is not False
    return MkDocsSite(
        root,
        "" if docs == "." else docs + "/",
        directory_urls,
        _lines(config.get("exclude_docs")),
        _lines(config.get("draft_docs")),
    )


def _lines(value: object) -> tuple[str, ...]:
    """gitignore-style patterns, one per line (``!`` re-includes are not followed: the pattern is dropped)."""
    if not isinstance(value, str):
        return ()
    lines = (ln.strip() for ln in value.splitlines())
    return tuple(ln for ln in lines if ln and not ln.startswith(("#", "!")))


def _gitignore_globs(pattern: str) -> list[str]:
    """A gitignore line as globs over paths relative to the docs folder: anchored with a leading or inner ``/``,
    else at any depth; a folder pattern matches everything below it."""
    body = pattern.rstrip("/")
    anchored = pattern.startswith("/") or "/" in body
    base = body.lstrip("/") if anchored else f"**/{body}"
    return [base, f"{base}/**"]
