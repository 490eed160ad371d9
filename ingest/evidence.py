"""Per-source evidence that needs the whole tree: manifests, docs versions, path rules.

Built once per source from the config files (package.json, Cargo.toml,
versions.json, docusaurus.config.*) and the list of paths; then asked, file by
file, for that file's version targets and deprecations.  A malformed manifest
is a failed row for the manifest alone, never for the files beneath it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from trustindex.extractors.base import Deprecation, Extraction, ExtractionError, VersionTarget
from trustindex.extractors.docs_fences import fence_pragma_targets, record_disagreements
from trustindex.extractors.docs_routes import Route, load_docs_routes
from trustindex.extractors.docs_versions import docs_version_deprecations, docs_version_targets, load_docs_versions
from trustindex.extractors.manifests import (
    manifest_deprecation,
    nearest_manifest,
    parse_cargo_toml,
    parse_package_json,
    resolve_cargo_workspace,
    resolve_workspaces,
)
from trustindex.extractors.page_kind import load_page_kinds
from trustindex.extractors.sphinx_conf import CONF_NAME, SphinxSources, read_sphinx_conf
from trustindex.extractors.static_sites import is_site_config
from trustindex.extractors.typedoc import TypedocOutputs, header_targets
from trustindex.ingest.dispatch import RESTRUCTUREDTEXT
from trustindex.schemas.page_routes import OFF_SITE
from trustindex.schemas.policy import Policy

CODE_KINDS = ("typescript", "rust", "compact", "text")


class SourceEvidence:
    def __init__(
        self, policy: Policy, config_files: dict[str, bytes], paths: list[str], tree_paths: Iterable[str] = ()
    ):
        """``paths``: the files the source ingests; ``tree_paths``: every path of the tree (a skill's SKILL.md or a
        plugin's manifest marks the files beside it even when the source's include globs leave it out)."""
        self.policy = policy
        self.failures: list[tuple[str, str, str]] = []
        v = policy.version
        npm, cargo = {}, {}
        for path, data in sorted(config_files.items()):
            name = posixpath.basename(path)
            try:
                if name == "package.json":
                    npm[path] = parse_package_json(data, path, v.npm_allowlist)
                elif name == "Cargo.toml":
                    cargo[path] = parse_cargo_toml(data, path, v.cargo_allowlist)
            except ExtractionError as e:
                self.failures.append((path, "manifest", str(e)))
            except Exception as e:  # a parser bug fails the manifest alone
                self.failures.append((path, "manifest", f"{type(e).__name__}: {e}"))
        self.npm = resolve_workspaces(npm) if npm else {}
        self.cargo = resolve_cargo_workspace(cargo, v.cargo_allowlist) if cargo else {}
        self.docs = load_docs_versions(paths, config_files)
        self.typedoc = TypedocOutputs(config_files)
        self.routes = load_docs_routes(paths, config_files)
        self.page_kinds = load_page_kinds([*paths, *tree_paths], config_files, self.routes)

    def site_page(self, site_url: str, path: str, kind: str, front_matter: dict) -> tuple[Route, str]:
        """Whether the site serves ``path`` (extractors/docs_routes.py) and the page a person opens for it on the
        source's published site ("" when it has none)."""
        if kind not in ("markdown", RESTRUCTUREDTEXT):  # a Sphinx project's pages are reStructuredText
            return Route(OFF_SITE, f"not a page (a {kind} file)"), ""
        route = self.routes.resolve(path, front_matter)
        url = self.routes.page_url(site_url, path, front_matter) if site_url and route.route is not None else None
        return route, url or ""

    def _manifest_for(self, path: str, kind: str):
        if kind not in CODE_KINDS:
            return None
        table = self.cargo if kind == "rust" else self.npm
        hit = nearest_manifest(path, table.keys())
        return table.get(hit) if hit else None

    def version_targets(self, path: str, kind: str, text: str, ex: Extraction | None) -> list[VersionTarget]:
        from trustindex.extractors.version_stamps import apply_precedence, extract_stamps, front_matter_targets

        out: list[VersionTarget] = []
        if ex is not None:
            out.extend(ex.version_targets)
            if kind == "compact":
                from trustindex.extractors.pragma import extract_pragmas

                pragmas, warnings = extract_pragmas(text)
                out.extend(pragmas)
                ex.warnings.extend(warnings)
            if kind == "markdown":
                out.extend(front_matter_targets(ex.front_matter, self.policy.version.front_matter_fields))
                out.extend(extract_stamps(text, ex.chunks))
                fenced, warnings = fence_pragma_targets(text, ex.chunks)
                out.extend(fenced)
                ex.warnings.extend(warnings)
                out.extend(docs_package_targets(path, text, ex, self.policy.version.npm_allowlist))
                out.extend(header_targets(path, text))
                out.extend(self.typedoc.targets(path))
        m = self._manifest_for(path, kind)
        if m is not None:
            out.extend(m.targets)
        if kind == "markdown":
            out.extend(docs_version_targets(path, self.docs))
        if ex is not None and kind == "markdown":
            out, warnings = record_disagreements(out)
            ex.warnings.extend(warnings)
        return apply_precedence(out)

    def deprecations(self, path: str, kind: str, text: str, ex: Extraction | None) -> list[Deprecation]:
        from trustindex.extractors.deprecation import path_deprecations

        # the extractors already found in-file markers (Markdown front matter, admonitions and sections;
        # JSDoc; Rust attributes)
        out: list[Deprecation] = list(ex.deprecations) if ex is not None else []
        out.extend(path_deprecations(path, self.policy.deprecation.path_patterns))
        if kind == "markdown":
            out.extend(docs_version_deprecations(path, self.docs))
        m = self._manifest_for(path, kind)
        if m is not None and hasattr(m, "deprecated"):
            d = manifest_deprecation(m)
            if d is not None:
                out.append(d)
        seen, unique = set(), []
        for d in out:
            key = (d.scope, d.marker, d.chunk_ordinal, d.reason)
            if key not in seen:
                seen.add(key)
                unique.append(d)
        return unique


def docs_package_targets(path: str, text: str, ex: Extraction, npm_allowlist: list[str]) -> list[VersionTarget]:
    """Component and package versions a docs page states: release notes, compatibility tables, install commands
    and package.json snippets in fences (extractors/release_notes.py, compat_matrix.py, install_commands.py)."""
    from trustindex.extractors.compat_matrix import matrix_targets
    from trustindex.extractors.install_commands import fenced_package_targets
    from trustindex.extractors.release_notes import release_note_targets

    return [
        *release_note_targets(path, text, ex.front_matter, ex.chunks),
        *matrix_targets(text, ex.chunks),
        *fenced_package_targets(text, npm_allowlist, ex.chunks),
    ]


# A docs config is a few KiB; the cap keeps an odd giant file named like one from being read as evidence.
DOCS_CONFIG_MAX_BYTES = 1 << 20


def docs_config_evidence(repo, entries, source, have: dict[str, bytes]) -> dict[str, bytes]:
    """Docusaurus configs and versions files the source's include globs leave out, read as evidence only; so are
    MkDocs, VitePress and Sphinx configs and a ``.readthedocs.yaml`` (where its pages are published) and TypeDoc
    configurations and the package.json beside each (which package and version its pages document).

    Which docs version a page belongs to is decided by these files, so a sources file that indexes only
    ``**/*.md*`` must still read them (they stay ``not_included`` in the report: nothing of them is indexed)."""
    from trustindex.extractors.docs_versions import is_docs_config
    from trustindex.extractors.typedoc import CONFIG_NAMES

    typedoc_dirs = {posixpath.dirname(e.path) for e in entries if posixpath.basename(e.path) in CONFIG_NAMES}

    def wanted(e) -> bool:
        if e.path in have:
            return False
        if is_docs_config(e.path) or is_site_config(e.path):
            return True
        name, folder = posixpath.basename(e.path), posixpath.dirname(e.path)
        return folder in typedoc_dirs and name in (*CONFIG_NAMES, "package.json")

    return _evidence_blobs(repo, entries, source, wanted)


def sphinx_sources(repo, entries, source) -> tuple[SphinxSources, dict[str, bytes]]:
    """The source's Sphinx source folders, each ``conf.py`` read as evidence (parsed, never run:
    extractors/sphinx_conf.py) whether or not the include reads it, and the bytes read (the site's routes read them
    again from there, not from git: ``docs_config_evidence``'s ``have``)."""
    found = _evidence_blobs(repo, entries, source, lambda e: posixpath.basename(e.path) == CONF_NAME and not e.missing)
    confs = (read_sphinx_conf(path, data.decode("utf-8", "replace")) for path, data in found.items())
    return SphinxSources.of(c for c in confs if c is not None), found


def _evidence_blobs(repo, entries, source, wanted) -> dict[str, bytes]:
    """The bytes of the tree entries ``wanted`` picks, read as evidence whether or not the include reads them: an
    explicit exclude is respected, a link, submodule, invalid name or file over ``DOCS_CONFIG_MAX_BYTES`` is not
    read, and an unreadable one is simply not evidence."""
    from trustindex.crawl.git import read_blob
    from trustindex.extractors.globs import first_match

    out: dict[str, bytes] = {}
    for e in entries:
        if not wanted(e) or e.is_symlink or e.is_submodule or e.invalid:
            continue
        if e.size > DOCS_CONFIG_MAX_BYTES or first_match(e.path, source.exclude):
            continue
        try:
            out[e.path] = read_blob(repo, e.sha)
        except Exception:  # a missing object: the file stays unread, as if absent
            continue
    return out
