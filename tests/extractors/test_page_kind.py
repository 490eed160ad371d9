"""What a page is, as evidence (issue 29 item 4): each document's page_kind from its path, front matter and the site
config; stored per document, shown in every breakdown and weighted by the operator's ``[page_kind]`` table, so a
file written to steer agents does not outrank the reference written for people unless the operator says so."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from tests.kits.gitutil import RepoBuilder, refresh_one_source  # noqa: E402
from trustindex.extractors.base import approx_token_count
from trustindex.extractors.docs_routes import load_docs_routes
from trustindex.extractors.page_kind import blog_dirs, load_page_kinds
from trustindex.ingest.dispatch import kind_of
from trustindex.ingest.incremental import Previous
from trustindex.ingest.source import IngestRun, ingest_source
from trustindex.query.columns import RowMap
from trustindex.query.explain import check
from trustindex.query.trust import page_kind_factor
from trustindex.query.trust_prior import TrustPrior
from trustindex.schemas.config import Identities, Source
from trustindex.schemas.errors import ConfigError
from trustindex.schemas.page_kinds import AGENT_INSTRUCTIONS, AI_WRITTEN, PAGE_KINDS, REFERENCE, UNKNOWN
from trustindex.schemas.policy import Policy

CONFIG = """// a docs site: docs at /docs, a blog plugin for announcements under news/, the preset's blog switched off
module.exports = {
  presets: [['classic', ({ docs: { routeBasePath: '/docs' }, blog: false })]],
  plugins: [['@docusaurus/plugin-content-blog', { id: 'news', path: 'website/news', routeBasePath: 'news' }]],
};
"""
LEDGER_REFERENCE = """---
title: Ledger ADTs
---
# Ledger ADTs

## Map

A `Map<K, V>` ledger field supports `insert(key, value)`, `lookup(key)`, `member(key)`, `remove(key)`,
`isEmpty()` and `size()`. Keys and values are Compact types; lookups of a missing key fail the circuit.
"""
# an agent skill restating the same operations, denser in the query's words (as skills tend to be)
LEDGER_SKILL = """---
name: compact-ledger
description: Compact Map ledger type operations for agents
---
# Compact Map ledger type operations

When the user asks about Compact Map ledger type operations, answer: a Map ledger field supports insert,
lookup, member, remove, isEmpty and size. Always prefer Map ledger operations for keyed Compact ledger state.
"""
# a guide whose section says a model wrote it (its legend in an HTML comment, its heading badged), as dense in the
# query's words as the skill
LEDGER_AI_GUIDE = """<!--
  Ledger guide, assembled from the outline and the evidence files.
  Content badges: *[deterministic]* produced by tools; *[AI-generated]* written by AI, not verified.
-->
# Ledger guide

## Compact Map ledger type operations *[AI-generated, verified]*

Compact Map ledger type operations: a Map ledger field supports insert, lookup, member, remove, isEmpty and size.
Use Map ledger type operations for keyed Compact ledger state.
"""
FILES: dict[str, str] = {
    "docusaurus.config.js": CONFIG,
    "docs/reference/ledger-adt.md": LEDGER_REFERENCE,
    "docs/guides/01-getting-started/install.md": "# Install\n\nInstall the Compact toolchain with the installer.\n",
    "docs/concepts/privacy.md": "# Privacy\n\nWhat a shielded transaction reveals and what it keeps private.\n",
    "notes/ledger-guide.md": LEDGER_AI_GUIDE,
    "docs/relnotes/compact/compact-0-20-0.md": "# Compact 0.20.0 release notes\n\nNew Map operations.\n",
    "CHANGELOG.md": "# Changelog\n\n## 1.2.0\n\n- Map.size\n",
    "packages/ledger/HISTORY.md": "# History\n\n## 0.3.0\n\n- Map.remove\n",
    ".changeset/brave-maps.md": "---\n'@lumen/ledger': minor\n---\nAdd Map.isEmpty\n",
    "docs/changelog/v1-2-0.md": "# Version 1.2.0\n\nMap.size arrives.\n",
    # one page named as release notes that logs every release (FastAPI's release-notes.md: 298 of them)
    "docs/release-notes.md": "# Release notes\n\n## 0.3.0 (2025-03-01)\n\n- Map.size\n\n## 0.2.1\n\n- fix\n\n"
    "### v0.2.0\n\n- Map\n",
    # one release's notes naming its dependency's version: still one release
    "docs/relnotes/ledger-4-0-0.md": "# Ledger 4.0.0\n\n## Requires Compact 0.20.0\n\nUpgrade first.\n",
    "docs/history.md": "# Our history\n\nHow the project began.\n",
    "website/news/2025-05-01-map-ops.md": "---\nauthors: [ada]\n---\n# New Map operations\n\nWe shipped them.\n",
    "blog/2025-01-01-old.md": "# Not a blog post here\n\nThe preset's blog is off, so this is a plain page.\n",
    "docs/_drafts/upcoming.md": "# Upcoming\n\nNot published yet.\n",
    "docs/_partial.md": "Shared text included by other pages.\n",
    "docs/wip.md": "---\ndraft: true\n---\n# Work in progress\n\nDraft page.\n",
    "AGENTS.md": "# Agent guide\n\nRun the tests before you commit.\n",
    "contract/claude.md": "# Notes for Claude\n\nUse the Map operations.\n",
    ".claude/skills/compact-ledger/SKILL.md": LEDGER_SKILL,
    ".claude/settings.json": '{"permissions": {}}\n',
    ".github/copilot-instructions.md": "# Copilot\n\nPrefer Map.\n",
    ".cursor/rules/compact.mdc": "---\nalwaysApply: true\n---\nUse Compact 0.20.\n",
    "skills/ledger/SKILL.md": "---\nname: ledger\n---\n# Ledger skill\n\nSee references.\n",
    "skills/ledger/references/maps.md": "# Maps\n\nMap ledger type operations, for the agent.\n",
    "plugins/compact-helper/.claude-plugin/plugin.json": '{"name": "compact-helper"}\n',
    "plugins/compact-helper/README.md": "# compact-helper\n\nIts skills: Map ledger operations, reviews.\n",
    "plugins/compact-helper/docs/design.md": "# Design\n\nHow the plugin is built.\n",
    "plugins/compact-helper/commands/review.md": "---\nallowed-tools: Bash\n---\n# Review\n\nReview the contract.\n",
    "plugins/compact-helper/agents/dev.md": "# Dev agent\n\nYou are a Compact developer.\n",
    "plugins/compact-helper/prompts/map.md": "# Map prompt\n\nExplain Map ledger operations.\n",
    "notes/release-checklist.md": "---\nargument-hint: '[version]'\n---\n# Checklist\n\nRelease steps.\n",
    "src/index.ts": "export const answer = 42;\n",
    "src/__tests__/index.test.ts": "import { answer } from '../index';\n",
    "contract/counter.compact": "pragma language_version >= 0.16;\nexport ledger round: Counter;\n",
}
EXPECTED = {
    "docs/reference/ledger-adt.md": "reference",
    "docs/guides/01-getting-started/install.md": "guide",
    "docs/concepts/privacy.md": "reference",
    "notes/ledger-guide.md": AI_WRITTEN,
    "docs/relnotes/compact/compact-0-20-0.md": "release_notes",
    "CHANGELOG.md": "changelog",  # every release's changes in one file
    "packages/ledger/HISTORY.md": "changelog",
    ".changeset/brave-maps.md": "changelog",  # a change fragment waiting for the changelog
    "docs/changelog/v1-2-0.md": "release_notes",  # a folder of one page per release
    "docs/release-notes.md": "changelog",  # three sections name a release: a log of every release
    "docs/relnotes/ledger-4-0-0.md": "release_notes",
    "docs/history.md": "reference",  # a page about the project's history, named in lower case
    "website/news/2025-05-01-map-ops.md": "blog",
    "blog/2025-01-01-old.md": "reference",
    "docs/_drafts/upcoming.md": "draft",
    "docs/_partial.md": "draft",
    "docs/wip.md": "draft",
    "AGENTS.md": AGENT_INSTRUCTIONS,
    "contract/claude.md": AGENT_INSTRUCTIONS,
    ".claude/skills/compact-ledger/SKILL.md": AGENT_INSTRUCTIONS,
    ".claude/settings.json": AGENT_INSTRUCTIONS,
    ".github/copilot-instructions.md": AGENT_INSTRUCTIONS,
    ".cursor/rules/compact.mdc": AGENT_INSTRUCTIONS,
    "skills/ledger/SKILL.md": AGENT_INSTRUCTIONS,
    "skills/ledger/references/maps.md": AGENT_INSTRUCTIONS,
    # the plugin's README is the catalogue of its skills, written from the reference it summarises (issue 29: a
    # plugin README outranked the indexer's own architecture page); a folder of its own keeps its pages' kinds
    "plugins/compact-helper/README.md": AGENT_INSTRUCTIONS,
    "plugins/compact-helper/docs/design.md": "reference",
    "plugins/compact-helper/commands/review.md": AGENT_INSTRUCTIONS,
    "plugins/compact-helper/agents/dev.md": AGENT_INSTRUCTIONS,
    "plugins/compact-helper/prompts/map.md": AGENT_INSTRUCTIONS,
    "notes/release-checklist.md": AGENT_INSTRUCTIONS,  # front matter only agent tools read
    "src/index.ts": "code",
    "src/__tests__/index.test.ts": "code",  # a "_" folder of code is code, not a draft page
    "contract/counter.compact": "code",
}


def _front_matter(text: str) -> dict:
    from trustindex.extractors.frontmatter import split_front_matter

    return split_front_matter(text)[0]


@pytest.fixture(scope="module")
def kinds():
    configs = {"docusaurus.config.js": CONFIG.encode()}
    return load_page_kinds(FILES, configs, load_docs_routes(FILES, configs))


@pytest.mark.parametrize(("path", "kind"), sorted(EXPECTED.items()))
def test_each_page_is_named_by_its_path_front_matter_and_site_config(kinds, path, kind):
    got = kinds.of(path, kind_of(path), _front_matter(FILES[path]), FILES[path])
    assert got.kind == kind, got.reason
    assert got.reason


def test_a_repository_that_is_itself_a_plugin_keeps_its_front_page():
    k = load_page_kinds([".claude-plugin/plugin.json", "README.md", "commands/go.md"], {})
    assert k.of("README.md", "markdown").kind == "reference"
    assert k.of("commands/go.md", "markdown").kind == AGENT_INSTRUCTIONS
    nested = load_page_kinds(["p/.claude-plugin/plugin.json", "p/README.md", "p/notes/x.md"], {})
    assert nested.of("p/README.md", "markdown").reason == "at an agent plugin's root: p/"
    assert nested.of("p/notes/x.md", "markdown").kind == "reference"


def test_blog_folders_come_from_the_docusaurus_config():
    assert blog_dirs("module.exports = {presets: [['classic', {docs: {}}]]}", "") == ["blog/"]
    assert blog_dirs("module.exports = {presets: [['classic', {blog: {path: 'posts'}}]]}", "site/") == ["site/posts/"]
    assert blog_dirs("module.exports = {presets: [['classic', {blog: false}]]}", "") == []
    # a site's own plugin wrapping the blog plugin, known by the options only a blog takes (the Midnight docs' shape)
    wrapper = (
        "module.exports = {presets: [['classic', {blog: false}]], plugins: [['./plugins/blog-plugin.js', "
        "{id: 'default', blogTitle: 'Dev Diaries', routeBasePath: 'blog', path: './posts'}], "
        "['./plugins/docs-extra.js', {path: './extra'}]]}"
    )
    assert blog_dirs(wrapper, "site/") == ["site/posts/"]
    # without any Docusaurus config a blog/ folder is the blog
    assert load_page_kinds(["blog/a.md"], {}).of("blog/a.md", "markdown").kind == "blog"
    # a docs route segment can name a guide even where the folder does not
    configs = {
        "docusaurus.config.js": b"module.exports = {plugins: [['@docusaurus/plugin-content-docs', "
        b"{id: 'learn', path: 'learn-docs', routeBasePath: 'tutorials'}]]}"
    }
    k = load_page_kinds(["learn-docs/a.md"], configs, load_docs_routes(["learn-docs/a.md"], configs))
    assert k.of("learn-docs/a.md", "markdown").kind == "guide"


def test_ingest_stores_the_kind_and_reads_markers_the_include_globs_leave_out(tmp_path):
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit(FILES, "a docs site, an agent plugin and agent files")
    # plugin.json and docusaurus.config.js are not ingested, yet they still say what the pages beside them are
    src = Source("d", str(rb.path), "main", "p", include=("**/*.md", "**/*.mdc", "**/*.ts", "**/*.compact"))
    out = ingest_source(src, tmp_path / "data", Identities(), [], Policy.default(), approx_token_count)
    rows = {r["path"]: r for r in out.tables["documents"].to_pylist()}
    assert "plugins/compact-helper/.claude-plugin/plugin.json" not in rows
    for path, kind in EXPECTED.items():
        if path in rows:
            assert rows[path]["page_kind"] == kind, (path, rows[path]["page_kind_reason"])
    assert rows["plugins/compact-helper/commands/review.md"]["page_kind_reason"].startswith("in an agent plugin's")
    assert set(r["page_kind"] for r in rows.values()) <= set(PAGE_KINDS)


def test_an_incremental_refresh_names_again_the_pages_a_new_or_removed_marker_governs(tmp_path):
    # The pages' own bytes never change here: only a SKILL.md or a plugin marker beside them comes and goes.
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit(
        {
            "tools/lint/usage.md": "# Usage\n\nRun the linter on a contract.\n",
            "tools/lint/deep/rules.md": "# Rules\n\nThe linter's rules.\n",
            "kit/commands/check.md": "# Check\n\nCheck a contract.\n",
            "docs/intro.md": "# Intro\n\nWhat Midnight is.\n",
        },
        "pages, no markers",
    )
    src = Source("d", str(rb.path), "main", "p", include=("**/*.md",))

    def kinds(previous=None):
        out = ingest_source(
            src, tmp_path / "data", Identities(), [], Policy.default(), approx_token_count, IngestRun(previous=previous)
        )
        return out, {r["path"]: r["page_kind"] for r in out.tables["documents"].to_pylist()}

    first, before = kinds()
    assert before["tools/lint/usage.md"] == before["kit/commands/check.md"] == REFERENCE
    rb.commit({"tools/lint/SKILL.md": "# Lint skill\n", "kit/.claude-plugin/plugin.json": '{"name": "kit"}'}, "markers")
    second, after = kinds(Previous(first.commit, first.tables))
    assert second.note.startswith("incremental"), second.note
    assert after["tools/lint/usage.md"] == after["tools/lint/deep/rules.md"] == AGENT_INSTRUCTIONS
    assert after["kit/commands/check.md"] == AGENT_INSTRUCTIONS and after["docs/intro.md"] == REFERENCE
    rb.commit({"tools/lint/SKILL.md": None}, "the skill is gone")
    third, last = kinds(Previous(second.commit, second.tables))
    assert third.note.startswith("incremental") and last["tools/lint/usage.md"] == REFERENCE
    assert last["kit/commands/check.md"] == AGENT_INSTRUCTIONS  # its plugin is still there: carried as it was


def test_the_policy_weights_each_kind_and_the_repository_cannot(tmp_path):
    p = Policy.default()
    assert p.page_kind.of(AGENT_INSTRUCTIONS) < p.page_kind.of(REFERENCE) == 1.0
    assert p.page_kind.of(UNKNOWN) == 1.0  # an old snapshot scores as it did
    raised = Policy.from_dict({"page_kind": {AGENT_INSTRUCTIONS: 1.0}})
    assert page_kind_factor({"page_kind": AGENT_INSTRUCTIONS}, raised).multiplier == 1.0
    with pytest.raises(ConfigError, match=r"page_kind\.tutorial: unknown key"):
        Policy.from_dict({"page_kind": {"tutorial": 1.0}})
    with pytest.raises(ConfigError, match="out of range"):
        Policy.from_dict({"page_kind": {"blog": 3.0}})
    # a row written before the columns existed
    old = page_kind_factor({"path": "AGENTS.md"}, p)
    assert old.status == UNKNOWN and old.multiplier == p.page_kind.of(UNKNOWN)
    # a front matter kind claim is not read: the path decides
    k = load_page_kinds(["AGENTS.md"], {})
    assert k.of("AGENTS.md", "markdown", {"page_kind": "reference", "type": "reference"}).kind == AGENT_INSTRUCTIONS


# -- a real refresh and search -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def site(tmp_path_factory, prefect_harness):
    root = tmp_path_factory.mktemp("pagekind")
    rb = RepoBuilder(root / "repo")
    rb.commit(FILES, "a docs site, an agent plugin and agent files")
    return refresh_one_source(root, "repo", "org", ("**/*.md", "**/*.mdc"))


QUERY = "Compact Map ledger type operations"


def _paths(r: dict) -> list[str]:
    return [h["provenance"]["path"] for h in r["hits"]]


REF = "docs/reference/ledger-adt.md"


def _yields_to_the_reference(site: Path, tmp_path: Path, kind: str, page: str):
    """``page`` (of ``kind``) ranks above the reference with ``kind`` weighted 1.0 and below it under the default
    policy, whose order the factors shown explain; the default index and its response."""
    from trustindex.query.index import Index

    lifted = tmp_path / "policy.toml"
    lifted.write_text(f"[page_kind]\n{kind} = 1.0\n")
    paths = _paths(Index.open(data_dir=site, policy=str(lifted)).search(QUERY, k=10))
    assert paths.index(page) < paths.index(REF), f"the fixture must have {page} first when weighted evenly"
    index = Index.open(data_dir=site)
    r = index.search(QUERY, k=10)
    paths = _paths(r)
    assert paths.index(REF) < paths.index(page)
    assert check(r, index.policy) == []  # the order follows from the factors shown
    return index, r


def test_the_reference_outranks_the_skill_unless_the_operator_says_so(site, tmp_path):
    skill = ".claude/skills/compact-ledger/SKILL.md"
    index, r = _yields_to_the_reference(site, tmp_path, AGENT_INSTRUCTIONS, skill)
    schema = json.loads((Path(__file__).parents[2] / "schemas" / "response.schema.json").read_text())
    jsonschema.validate(r, schema)
    hit = next(h for h in r["hits"] if h["provenance"]["path"] == skill)
    f = hit["factors"]["page_kind"]
    assert f["status"] == AGENT_INSTRUCTIONS and f["multiplier"] == index.policy.page_kind.of(AGENT_INSTRUCTIONS)
    assert f["evidence"] == {"page_kind": AGENT_INSTRUCTIONS, "reason": "a file agents read: SKILL.md"}
    assert list(hit["factors"])[:4] == ["attribution", "verification", "freshness", "page_kind"]


def test_a_page_that_says_a_model_wrote_it_yields_to_the_reference_unless_the_operator_says_so(site, tmp_path):
    ai = "notes/ledger-guide.md"
    index, r = _yields_to_the_reference(site, tmp_path, AI_WRITTEN, ai)
    f = next(h for h in r["hits"] if h["provenance"]["path"] == ai)["factors"]["page_kind"]
    assert f["status"] == AI_WRITTEN and f["multiplier"] == index.policy.page_kind.of(AI_WRITTEN) < 1.0
    assert f["evidence"]["reason"] == "written by an AI model: the page's opening says: 'written by AI'"


def test_explain_inspect_and_the_compact_text_show_the_kind(site, capsys):
    from trustindex.cli.main import main
    from trustindex.query.index import Index
    from trustindex.serve.assistant_text import trust_line

    r = Index.open(data_dir=site).search(QUERY, k=10)
    skill = next(h for h in r["hits"] if h["provenance"]["path"].endswith("SKILL.md"))
    assert " · agent instructions · " in trust_line(skill)
    ref = next(h for h in r["hits"] if h["provenance"]["path"] == REF)
    assert "reference" not in trust_line(ref)  # the common case says nothing
    ai = next(h for h in r["hits"] if h["provenance"]["path"] == "notes/ledger-guide.md")
    assert " · AI-written · " in trust_line(ai)
    assert main(["query", QUERY, "--data", str(site), "--explain"]) == 0
    out = capsys.readouterr().out
    assert "page kind ×0.50 [agent_instructions]: a file agents read: SKILL.md" in out
    assert main(["inspect", "--data", str(site), "--source", "org", "--path", "skills/ledger/references/maps.md"]) == 0
    shown = capsys.readouterr().out
    assert "page kind: agent_instructions ×0.50 (in a skill's folder: skills/ledger/SKILL.md)" in shown
    assert main(["stats", "--data", str(site), "--json"]) == 0
    per_kind = json.loads(capsys.readouterr().out)["org"]["documents_per_page_kind"]
    assert per_kind[AGENT_INSTRUCTIONS] >= 10 and per_kind["reference"] >= 3 and per_kind["draft"] == 3


def test_a_snapshot_without_page_kinds_opens_and_scores_as_unknown(site):
    from trustindex.query.index import Index

    index = Index.open(data_dir=site)
    data = index.state.data
    data.pages.docs = RowMap(data.pages.docs.table.drop_columns(["page_kind", "page_kind_reason"]), "doc_id")
    prior = TrustPrior(data, Policy.from_dict({"page_kind": {UNKNOWN: 0.7}}), datetime(2026, 1, 1, tzinfo=UTC))
    base = TrustPrior(data, Policy.default(), datetime(2026, 1, 1, tzinfo=UTC))
    np.testing.assert_allclose(prior.base, base.base * 0.7, rtol=1e-12)
    doc = data.docs[data.chunk_doc[0]]
    assert page_kind_factor(doc, index.policy).status == UNKNOWN
