"""What a page is: reference, guide, blog post, release notes, changelog, agent instructions, AI-written, draft or code
(issue 29 item 4).

Read from where the file sits in its repository, what its front matter says and the site's Docusaurus config, never
from what its text claims to be (but for its own disclosure that a model wrote it).  The first rule that matches
names the kind:

1. agent instructions: written to steer an AI agent, not to inform a person.  A file named as an agent reads it
   (``AGENTS.md``, ``CLAUDE.md``, ``GEMINI.md``, ``SKILL.md``, ``copilot-instructions.md``, ``.cursorrules``, …;
   ``*.instructions.md``, ``*.prompt.md``, ``*.chatmode.md``, ``*.mdc``); anything under an agent's folder
   (``.claude/``, ``.cursor/``, ``.codex/``, ``.github/prompts/``, …); anything in a skill's folder (one that holds
   a ``SKILL.md``: its references and templates too); the ``agents/``, ``commands/``, ``skills/``, ``hooks/`` and
   ``prompts/`` of an agent plugin (a folder with ``.claude-plugin/plugin.json`` or ``gemini-extension.json``),
   and the pages at a plugin's own root below the repository's (its README: the catalogue of its skills, which
   summarises the reference it was written from; a repository that is itself a plugin keeps its front page);
   front matter only agent tools read (``allowed-tools``, ``argument-hint``, ``alwaysApply``, ``applyTo``);
2. code: a file of a programming language (and text files that are not prose);
3. ai_written: the page says that an AI model wrote it or sections of it (extractors/ai_disclosure.py: front
   matter, a heading's ``[AI-generated]`` badge, a statement in its opening, Claude Code's signature); the one kind
   a page's text can name, because it can only lower the page;
4. draft: a page the site does not publish: the route rule of extractors/docs_routes.py (a ``_`` segment below a
   docs or blog folder unless the plugin's own exclude serves it, ``draft: true``, an unlisted version folder) and,
   outside the site's folders, a ``_`` file or folder (schemas.page_routes.unpublished_path);
5. changelog: a file whose own name is a changelog's (``CHANGELOG.md``, ``CHANGES.rst``, ``HISTORY.md``, ``NEWS``: every
   release's changes in one page) or a change fragment under a folder of them (``.changeset/``, ``changelog.d/``);
   release notes: under a release-notes folder (extractors/release_notes.py) or named as release notes
   (``2024-09_testnet_release_notes.mdx``, ``archived-relnotes/``, a ``changelog/`` folder of one page per release),
   unless three or more of its Markdown headings name a version: then it logs every release, a changelog
   (FastAPI's ``release-notes.md``);
6. blog: under a blog plugin's folder of the site's Docusaurus config (its ``path``, ``blog`` by default; none when
   the preset sets ``blog: false``; a site's own plugin that wraps the blog's counts, by its blog-only options), or
   without a config a folder named ``blog``;
7. guide: a folder, file name or docs route segment that names a tutorial, guide, getting started or examples;
8. reference: any other page.

Pure and cheap: the tree is read once per source (``load_page_kinds``), then each file costs a few set lookups.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from trustindex.extractors.ai_disclosure import ai_disclosure
from trustindex.extractors.docs_routes import DocsRoutes, blog_plugins
from trustindex.extractors.docs_versions import DOCS_CONFIG_RE
from trustindex.extractors.js_config import strip_comments
from trustindex.schemas.page_kinds import (
    AGENT_INSTRUCTIONS,
    AI_WRITTEN,
    BLOG,
    CHANGELOG,
    CODE,
    DRAFT,
    GUIDE,
    REFERENCE,
    RELEASE_NOTES,
)
from trustindex.schemas.page_routes import ROUTED, UNROUTED, unpublished_path
from trustindex.schemas.version_map import relnotes_folder

AGENT_FILES = frozenset(
    {
        "agents.md",
        "agent.md",
        "claude.md",
        "claude.local.md",
        "gemini.md",
        "skill.md",
        "copilot-instructions.md",
        ".cursorrules",
        ".windsurfrules",
        ".clinerules",
        ".goosehints",
    }
)
AGENT_SUFFIXES = (".instructions.md", ".prompt.md", ".chatmode.md", ".agent.md", ".mdc")
AGENT_DIRS = frozenset(
    {
        ".claude",
        ".claude-plugin",
        ".cursor",
        ".codex",
        ".gemini",
        ".windsurf",
        ".clinerules",
        ".roo",
        ".kiro",
        ".agents",
        ".agent",
        ".continue",
        ".amazonq",
        ".junie",
    }
)
GITHUB_AGENT_DIRS = frozenset({"prompts", "instructions", "chatmodes", "agents"})  # under .github/
PLUGIN_MARKERS = (".claude-plugin/plugin.json", "gemini-extension.json")
PLUGIN_AGENT_DIRS = ("agents", "commands", "skills", "hooks", "prompts")
AGENT_FRONT_MATTER = ("allowed-tools", "argument-hint", "alwaysApply", "applyTo")
CODE_FILE_KINDS = frozenset({"typescript", "rust", "compact"})
PROSE_EXTENSIONS = frozenset({"", "txt", "text", "rst", "adoc", "asciidoc", "org"})
_RELEASE_NAME = re.compile(r"(?:^|[-_.])(?:relnotes|release[-_]?notes?|changelog)(?:[-_.]|$)")
# changelog fragments waiting for a release (towncrier, changesets, the Midnight node's .changes/)
CHANGE_FRAGMENT_DIRS = frozenset({".changes", ".changes_archive", ".changeset", "changelog.d", "newsfragments"})
CHANGELOG_STEMS = frozenset({"CHANGES", "HISTORY", "NEWS", "RELEASES"})  # as written: a changelog's conventional names
# A release-notes page whose headings name this many versions or more is a log of every release, not one release's
# notes: across the organisation's 412 release-notes pages, one release's notes head at most 2 sections with a
# version (a component's and its dependency's), and every page with 3 or more is a package's changelog
RELEASES_IN_A_CHANGELOG = 3
_RELEASE_HEADING = re.compile(r"^#{1,6}[ \t]+[^\n]*?\bv?\d+\.\d+(?:\.\d+)?", re.M)
_NUMBER_PREFIX = re.compile(r"^\d+\s*[-_.]\s*(?=.)")
GUIDE_NAMES = frozenset(
    {
        "guide",
        "guides",
        "tutorial",
        "tutorials",
        "getting-started",
        "get-started",
        "quickstart",
        "quick-start",
        "how-to",
        "howto",
        "how-tos",
        "how-to-guides",
        "example",
        "examples",
        "walkthrough",
        "walkthroughs",
        "cookbook",
        "recipes",
    }
)


@dataclass(frozen=True)
class PageKind:
    kind: str  # schemas.page_kinds.PAGE_KINDS
    reason: str  # the rule that named it, with the path part or key it read


@dataclass(frozen=True)
class PageKinds:
    """What the whole tree says about each page's kind: skill folders, agent plugins, the sites' blog folders."""

    skill_dirs: frozenset[str]  # folders holding a SKILL.md ("" is the repository root)
    plugin_dirs: frozenset[str]  # the agent folders of plugins: "<plugin root>/skills/", ...
    blog_dirs: tuple[str, ...] | None  # "blog/", "website/blog/"; None: no Docusaurus config, any blog/ folder
    routes: DocsRoutes | None = None  # the docs routes (a route segment can name a guide)
    plugin_roots: frozenset[str] = frozenset()  # "plugins/x/": roots of plugins below the repository root

    def of(self, path: str, file_kind: str, front_matter: Mapping | None = None, text: str = "") -> PageKind:
        """The page's kind and the rule that named it; ``text`` (the file's) is read for an AI-writing disclosure."""
        fm = front_matter or {}
        parts = path.split("/")
        name = parts[-1].lower()
        agent = self._agent(path, parts, name, fm)
        if agent:
            return PageKind(AGENT_INSTRUCTIONS, agent)
        ext = name.rsplit(".", 1)[-1] if "." in name else ""
        if file_kind in CODE_FILE_KINDS or (file_kind == "text" and ext not in PROSE_EXTENSIONS):
            return PageKind(CODE, f"a {file_kind} file")
        disclosed = ai_disclosure(text, fm)
        if disclosed:
            return PageKind(AI_WRITTEN, f"written by an AI model: {disclosed}")
        draft = self._draft(path, parts, fm)
        if draft:
            return PageKind(DRAFT, draft)
        stem = parts[-1].rsplit(".", 1)[0]
        fragment = next((p for p in parts[:-1] if p in CHANGE_FRAGMENT_DIRS), None)
        if stem.lower() == "changelog" or stem in CHANGELOG_STEMS or fragment:
            return PageKind(CHANGELOG, f"a change fragment under {fragment}/" if fragment else f"a changelog: {stem!r}")
        in_notes, _component = relnotes_folder(path)
        stems = [*parts[:-1], stem]
        named = next(
            (p for p in stems if _RELEASE_NAME.search(p.lower()) or p in CHANGELOG_STEMS or p in CHANGE_FRAGMENT_DIRS),
            None,
        )
        if in_notes or named:
            releases = len(_RELEASE_HEADING.findall(text))
            if releases >= RELEASES_IN_A_CHANGELOG:  # FastAPI's release-notes.md: 298 releases, one page
                return PageKind(CHANGELOG, f"release notes of {releases} releases in one page")
            return PageKind(RELEASE_NOTES, f"release notes: {named!r}" if named else "under a release-notes folder")
        blog = self._blog(path, parts)
        if blog:
            return PageKind(BLOG, blog)
        guide = self._guide(path, parts, fm)
        if guide:
            return PageKind(GUIDE, guide)
        return PageKind(REFERENCE, "documentation no other rule names")

    def _agent(self, path: str, parts: list[str], name: str, fm: Mapping) -> str | None:
        if name in AGENT_FILES or name.endswith(AGENT_SUFFIXES):
            return f"a file agents read: {parts[-1]}"
        for i, part in enumerate(parts[:-1]):
            low = part.lower()
            if low in AGENT_DIRS or (low == ".github" and i + 2 < len(parts) and parts[i + 1] in GITHUB_AGENT_DIRS):
                return f"in an agent's folder: {'/'.join(parts[: i + 1 + (low == '.github')])}/"
        for i in range(len(parts) - 1, -1, -1):
            folder = "/".join(parts[:i])
            if folder in self.skill_dirs:
                return f"in a skill's folder: {folder + '/' if folder else ''}SKILL.md"
            if f"{folder}/" in self.plugin_dirs:
                return f"in an agent plugin's {parts[i - 1]}/ folder: {folder}/"
        plugin_root = "/".join(parts[:-1]) + "/"
        if plugin_root in self.plugin_roots:  # the plugin's README: what its skills say, for the agent's user
            return f"at an agent plugin's root: {plugin_root}"
        key = next((k for k in AGENT_FRONT_MATTER if k in fm), None)
        return f"front matter only agent tools read: {key}" if key else None

    def _draft(self, path: str, parts: list[str], fm: Mapping) -> str | None:
        """Why the site publishes no page for the file (the route rule, extractors/docs_routes.py; outside the
        site's folders, a ``_`` file or folder), or None: a plugin whose own exclude serves ``_`` files is obeyed."""
        route = self.routes.resolve(path, fm) if self.routes is not None else None
        if route is not None and route.status == ROUTED:
            return None
        if unpublished_path(path):
            part = next(p for p in parts if p.startswith("_"))
            return f"unpublished: {part!r} starts with _ (the site serves no page for it)"
        if fm.get("draft") is True:
            return "front matter draft: true"
        return f"unpublished: {route.reason}" if route is not None and route.status == UNROUTED else None

    def _blog(self, path: str, parts: list[str]) -> str | None:
        if self.blog_dirs is None:
            return "in a blog/ folder" if any(p.lower() == "blog" for p in parts[:-1]) else None
        hit = next((d for d in self.blog_dirs if path.startswith(d)), None)
        return f"in the site's blog folder: {hit}" if hit else None

    def _guide(self, path: str, parts: list[str], fm: Mapping) -> str | None:
        route = self.routes.route(path, fm) if self.routes is not None else None
        names = [*parts[:-1], parts[-1].rsplit(".", 1)[0], *(route.split("/") if route else ())]
        hit = next((n for n in names if _NUMBER_PREFIX.sub("", n).lower() in GUIDE_NAMES), None)
        return f"a guide: {hit!r}" if hit else None


def kind_marker_folder(path: str) -> str | None:
    """The folder whose pages a marker file names agent instructions ("skills/x/" for "skills/x/SKILL.md", the
    plugin root for a plugin marker), or None when ``path`` is no marker: adding, removing or moving a marker
    changes its folder's pages' kinds (ingest/incremental.py extracts them again)."""
    if posixpath.basename(path) == "SKILL.md" and "/" in path:
        return posixpath.dirname(path) + "/"
    for marker in PLUGIN_MARKERS:
        if path == marker or path.endswith("/" + marker):
            return path[: -len(marker)]
    return None


def load_page_kinds(
    tree_paths: Iterable[str], config_files: Mapping[str, bytes], routes: DocsRoutes | None = None
) -> PageKinds:
    """The tree's skill folders and agent plugins, and the blog folders of its Docusaurus configs."""
    skills, plugins, roots = set(), set(), set()
    for p in tree_paths:
        folder = kind_marker_folder(p)  # a root SKILL.md is one file, not the whole repo: no folder
        if folder is None:
            continue
        if posixpath.basename(p) == "SKILL.md":
            skills.add(folder[:-1])
        else:
            plugins.update(f"{folder}{d}/" for d in PLUGIN_AGENT_DIRS)
            if folder:  # a repository that is itself a plugin keeps its front page
                roots.add(folder)
    blogs: list[str] | None = None
    for path, data in sorted(config_files.items()):
        m = DOCS_CONFIG_RE.match(path)
        if m:
            blogs = (blogs or []) + blog_dirs(data.decode("utf-8", "replace"), m["root"])
    blog_folders = tuple(blogs) if blogs is not None else None
    return PageKinds(frozenset(skills), frozenset(plugins), blog_folders, routes, frozenset(roots))


def blog_dirs(config: str, root: str) -> list[str]:
    """The folders of the blog plugins a Docusaurus config declares (extractors/docs_routes.py ``blog_plugins``)."""
    return [b.folder for b in blog_plugins(strip_comments(config), root)]
