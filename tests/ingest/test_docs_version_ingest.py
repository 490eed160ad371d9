"""Docs versions and fenced pragmas through ingest_source on a real git repository shaped like midnight-docs.

The sources file indexes only Markdown (as a new user writes it): the Docusaurus config and the plugin's
``main_versions.json`` must still decide every page's docs version, and stay unindexed.
"""

from pathlib import Path

from tests.kits.gitutil import RepoBuilder
from trustindex.extractors.base import approx_token_count
from trustindex.ingest.source import ingest_source
from trustindex.schemas.config import Identities, Publisher, Source
from trustindex.schemas.docs_versions import names_of, superseded_by
from trustindex.schemas.policy import Policy

CONFIG = """// @ts-check
const config = {
  plugins: [
    [
      "@docusaurus/plugin-content-docs",
      {
        id: "main",
        path: "docs",
        routeBasePath: "/",
        lastVersion: "current",
        versions: { current: { label: "v1" }, "0.0.0": { label: "v0 (Legacy)" } },
      },
    ],
    ["@docusaurus/plugin-content-docs", { id: "apis", path: "api-reference", routeBasePath: "api-reference" }],
  ],
};
module.exports = config;
"""
WRITING = """---
title: Writing a contract
---

# Writing a contract

Contracts start with a pragma.

```compact title=lock.compact
pragma language_version 0.16;

import CompactStandardLibrary;

export ledger owner: Bytes<32>;
```

## Compiling

Run the compiler on the file.
"""
INSTALL = "# Installation\n\nInstall the compact tool with the installer script and add it to PATH.\n"


def test_docs_versions_and_fences_from_a_markdown_only_source(tmp_path: Path):
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit(
        {
            "docusaurus.config.js": CONFIG,
            "main_versions.json": '[\n  "0.0.0"\n]\n',
            "docs/compact/writing.mdx": WRITING,
            "docs/getting-started/installation.mdx": INSTALL,
            "main_versioned_docs/version-0.0.0/getting-started/installation.mdx": INSTALL,
            "api-reference/ledger/README.md": "# Ledger API\n\nReference.\n",
        },
        "docs",
    )
    src = Source("docs", str(tmp_path / "repo"), "main", "p", include=("**/*.md", "**/*.mdx"), exclude=())
    ids = Identities(publishers={"p": Publisher("p", "Docs Publisher", "foundation")})
    result = ingest_source(src, tmp_path / "data", ids, [], Policy.from_dict({}), approx_token_count)

    docs = {r["doc_id"]: r["path"] for r in result.tables["documents"].to_pylist()}
    chunks = {r["chunk_id"]: r for r in result.tables["chunks"].to_pylist()}
    targets = result.tables["version_targets"].to_pylist()
    by_path: dict[str, list[dict]] = {}
    for t in targets:
        by_path.setdefault(docs[t["doc_id"]], []).append(t)

    report = {r["path"]: r for r in result.tables["ingest_report"].to_pylist()}
    assert report["docusaurus.config.js"]["status"] == "skipped" and report["main_versions.json"]["rule"]
    assert "docusaurus.config.js" not in docs.values()

    for path in ("docs/compact/writing.mdx", "docs/getting-started/installation.mdx"):
        [d] = [t for t in by_path[path] if t["component"] == "docs"]
        assert d["constraint"] == "current" and names_of(d["intervals"]) == ("current", ["v1", "latest"])
    legacy_path = "main_versioned_docs/version-0.0.0/getting-started/installation.mdx"
    [old] = [t for t in by_path[legacy_path] if t["component"] == "docs"]
    assert old["constraint"] == "0.0.0" and "no main_versions.json" not in old["detail"]
    assert not any(t["component"] == "docs" for t in by_path.get("api-reference/ledger/README.md", []))

    deps = [r for r in result.tables["deprecations"].to_pylist() if r["marker"] == "docs_version"]
    assert [docs[r["doc_id"]] for r in deps] == [legacy_path]
    assert deps[0]["reason"].startswith("v0 (Legacy): unmaintained docs version; current is v1")
    assert superseded_by(deps[0]["reason"]) == "docs/getting-started/installation.mdx"

    [fence] = [t for t in by_path["docs/compact/writing.mdx"] if t["component"] == "compact-language"]
    assert (fence["constraint"], fence["origin"], fence["status"]) == ("0.16", "docs_fence", "parsed")
    held = chunks[fence["chunk_id"]]
    assert held["start_line"] <= 10 <= held["end_line"] and "pragma language_version 0.16" in held["text"]
    assert fence["detail"].startswith("fence lines 9-15 (lock.compact): pragma at line 10")
