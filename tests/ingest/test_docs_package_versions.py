"""Versions written in docs: release-notes pages, compatibility tables, install commands, package.json snippets."""

import json

from trustindex.extractors.base import Chunk, FileContext
from trustindex.extractors.compat_matrix import component_name, matrix_targets
from trustindex.extractors.install_commands import fenced_package_targets
from trustindex.extractors.markdown import extract_markdown
from trustindex.extractors.release_notes import release_note_targets
from trustindex.ingest.evidence import SourceEvidence
from trustindex.schemas.policy import Policy
from trustindex.schemas.versions import ConstraintSet, parse_version

ALLOW = ["@midnight-ntwrk/*"]


def _chunks(*spans):
    return [Chunk(i, "", a, b) for i, (a, b) in enumerate(spans)]


def _admits(t, version: str) -> bool:
    return ConstraintSet.from_json(t.intervals).contains(parse_version(version))


# -- release notes -------------------------------------------------------------------------------------------
LEAD = "---\ntitle: Midnight.js v3.0.0 release notes\n---\n\n* **Version**: v3.0.0\n* **Date**: 2025\n\n## Summary\n"


def test_release_notes_page_targets_its_folder_component_and_version():
    (t,) = release_note_targets("docs/relnotes/midnight-js/midnight-js-3-0-0.mdx", LEAD, {"title": "x"})
    assert (t.component, t.constraint, t.origin, t.chunk_ordinal) == ("midnight-js", "3.0.0", "release_notes", None)
    assert "release notes folder 'midnight-js'" in t.detail and "line 5" in t.detail and _admits(t, "3.0.0")
    assert not _admits(t, "3.0.1")


def test_title_gives_version_and_a_second_component():
    title = "Compact compiler 0.24.0 (Compact language 0.16.0)"
    got = release_note_targets("docs/relnotes/compact/compact-0-16-24-0.mdx", "# Compact\n\ntext\n", {"title": title})
    assert [(t.component, t.constraint) for t in got] == [("compact", "0.24.0"), ("Compact language", "0.16.0")]
    assert all(f"title {title!r}" in t.detail for t in got)


def test_heading_then_file_name_when_nothing_else_says_it():
    text = "# Node\n\nintro\n\n## Midnight 0.7.0 RC2 release notes\n\nbody\n"
    (t,) = release_note_targets("docs/relnotes/node/node-0-7-0-RC2.mdx", text, {"title": "Node"})
    assert t.constraint == "0.7.0-RC2" and "heading at line 5" in t.detail
    (f,) = release_note_targets("docs/relnotes/node/node-0-3-3-RC1.mdx", "# Node\n\nno version here\n", {})
    assert f.constraint == "0.3.3-RC1" and "file name" in f.detail
    # two versions run together in a file name say nothing
    assert release_note_targets("docs/relnotes/compact/compact-0-14-22-0.mdx", "# Compact\n", {}) == []
    # a page outside a release-notes directory, and a version heading inside a fence, are not release notes
    assert release_note_targets("docs/guides/midnight-js-3-0-0.mdx", LEAD, {}) == []
    fenced = "# Notes\n\n```md\n## Midnight.js 9.9.9 release notes\n```\n"
    assert release_note_targets("docs/relnotes/overview.mdx", fenced, {}) == []


def test_a_page_of_several_releases_targets_each_section():
    text = "\n".join(
        [
            "# Midnight.js",  # 1
            "",
            "## Midnight.js 2.0.1 Release Notes",  # 3
            "fixes",
            "### Bug fixes",  # 5
            "more",
            "## Midnight.js 2.0.0 Release Notes",  # 7
            "features",
        ]
    )
    chunks = _chunks((1, 2), (3, 4), (5, 6), (7, 8))
    got = release_note_targets("docs/relnotes/midnight-js.mdx", text, {}, chunks)
    by_chunk = {(t.chunk_ordinal, t.constraint) for t in got}
    assert by_chunk == {(1, "2.0.1"), (2, "2.0.1"), (3, "2.0.0")}
    assert all(t.component == "Midnight.js" and "release section lines" in t.detail for t in got)


# -- compatibility tables ------------------------------------------------------------------------------------
MATRIX = """# Compatibility matrix

<Tabs>
<TabItem value="testnet" label="Testnet" default>

| Functional area | Component                             | Version | Notes |
|-----------------|---------------------------------------|---------|-------|
| Runtime         | Compact toolchain (`compact compile`) | 0.31.1  | compiler |
|                 | [Midnight.js](/relnotes/midnight-js)  | 4.1.1   | DApp framework |
|                 | Indexer                               | TBD     | not yet |

</TabItem>
<TabItem value="mainnet" label="Mainnet">

| Component   | Version |
|-------------|---------|
| Midnight.js | 4.0.4   |

</TabItem>
</Tabs>

| Step | Command |
|------|---------|
| 1.0.0 | npm i |
"""


def test_matrix_rows_and_tabs_target_their_chunks():
    chunks = _chunks((1, 11), (12, 20), (21, 25))
    got = matrix_targets(MATRIX, chunks)
    rows = [(t.component, t.constraint, t.chunk_ordinal) for t in got if t.component != "network"]
    assert rows == [("Compact toolchain", "0.31.1", 0), ("Midnight.js", "4.1.1", 0), ("Midnight.js", "4.0.4", 1)]
    toolchain = got[0]
    assert toolchain.origin == "compat_matrix" and "(tab 'testnet')" in toolchain.detail
    assert "'Compact toolchain (`compact compile`)'" in toolchain.detail and "line 8" in toolchain.detail
    nets = {(t.constraint, t.chunk_ordinal) for t in got if t.component == "network"}
    assert nets == {("testnet", 0), ("testnet", 1), ("mainnet", 1)}  # the testnet tab ends in chunk 1
    net = next(t for t in got if t.component == "network")
    assert ConstraintSet.from_json(net.intervals).label == "testnet" and "'Testnet'" in net.detail
    assert component_name("**Node** (Midnight)") == "Node"


def test_a_family_glob_row_names_its_stem_never_a_dashed_name():
    table = (
        "| Component | Version |\n| --- | --- |\n| `@midnight-ntwrk/midnight-js-*` | `4.1.1` |\n| **Node** | 1.0.2 |\n"
    )
    got = [(t.component, t.constraint) for t in matrix_targets(table)]
    assert got == [("@midnight-ntwrk/midnight-js", "4.1.1"), ("Node", "1.0.2")]
    assert component_name("packages `midnight-js-*`") == "midnight-js"


# -- install commands and package.json snippets --------------------------------------------------------------
INSTALLS = """# Install

Run `npm install @midnight-ntwrk/midnight-js-contracts@1.0.0` (prose: not read).

```bash
npm install --save @midnight-ntwrk/midnight-js-contracts@3.0.0 @midnight-ntwrk/compact-runtime@^0.16.0 left-pad@1.0.0
yarn add -D @midnight-ntwrk/midnight-js-testing@3.0.0
pnpm add @midnight-ntwrk/ledger-v8@8.1.0 && npm i @midnight-ntwrk/wallet-sdk@latest
```

```json title="package.json"
{
  "dependencies": {
    "@midnight-ntwrk/dapp-connector-api": "~4.0.1",
    "react": "^18.0.0",
    ...
  }
}
```
"""


def test_install_commands_and_snippets_in_fences():
    chunks = _chunks((1, 4), (5, 10), (11, 20))
    got = fenced_package_targets(INSTALLS, ALLOW, chunks)
    seen = [(t.component, t.constraint, t.origin, t.chunk_ordinal) for t in got]
    assert seen == [
        ("@midnight-ntwrk/midnight-js-contracts", "3.0.0", "install_command", 1),
        ("@midnight-ntwrk/compact-runtime", "^0.16.0", "install_command", 1),
        ("@midnight-ntwrk/midnight-js-testing", "3.0.0", "install_command", 1),
        ("@midnight-ntwrk/ledger-v8", "8.1.0", "install_command", 1),
        ("@midnight-ntwrk/dapp-connector-api", "~4.0.1", "manifest_snippet", 2),
    ]
    assert "line 7: yarn add -D" in got[2].detail and "(package.json)" in got[4].detail
    assert _admits(got[1], "0.16.3") and not _admits(got[1], "0.17.0")


# -- through the ingest evidence -----------------------------------------------------------------------------
def test_source_evidence_keeps_every_docs_version_kind():
    text = LEAD + "\nSee the matrix.\n\n" + MATRIX.split("</Tabs>")[0] + "</Tabs>\n\n" + INSTALLS
    path = "docs/relnotes/midnight-js/midnight-js-3-0-0.mdx"
    ex = extract_markdown(text.encode(), FileContext("docs", path))
    ev = SourceEvidence(Policy.default(), {}, [path])
    got = ev.version_targets(path, "markdown", text, ex)
    origins = {t.origin for t in got}
    assert {"release_notes", "compat_matrix", "install_command", "manifest_snippet"} <= origins
    page = [t for t in got if t.origin == "release_notes"]
    assert [(t.component, t.constraint, t.chunk_ordinal) for t in page] == [("midnight-js", "3.0.0", None)]
    assert all(t.chunk_ordinal is not None for t in got if t.origin in ("compat_matrix", "install_command"))
    json.dumps([t.__dict__ for t in got])  # plain data, storable as rows
