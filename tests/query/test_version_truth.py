"""Issue 42's four classes on a docs site shaped like the Midnight docs (written here), refreshed for real and
searched without a component registry:

1. an old version asked for: the legacy page stamped with it is not demoted as legacy (a current guide whose fence
   only claims ``>= 0.17`` no longer wins), unless the current copy of that page satisfies the target too;
2. pages with no version of their own inherit what their docs version's compatibility matrix and release notes
   say, labelled inferred, weaker than a page's own evidence, and refused by strict mode where the page itself
   contradicts it; TypeDoc pages carry their package's version (their header, or the generator's configuration);
3. spelling variants and package names of one component merge (list_versions and stats show it), a family glob
   is never a name, a scoped package name resolves to its component or family;
4. a misspelt name is refused in one line naming the close match.
"""

from __future__ import annotations

import json

import pytest

from tests.kits.gitutil import RepoBuilder, refresh_one_source
from trustindex.query.explain import check
from trustindex.query.render import explain_hit
from trustindex.schemas.errors import QueryError

CONFIG = """module.exports = {
  plugins: [
    [
      "@docusaurus/plugin-content-docs",
      {
        id: "main",
        path: "docs",
        lastVersion: "current",
        versions: { current: { label: "v1" }, "0.0.0": { label: "v0 (Legacy)" } },
      },
    ],
  ],
};
"""
LEGACY = "main_versioned_docs/version-0.0.0"
FM = "---\ntitle: {title}\n---\n\n"


def _page(title: str, body: str) -> str:
    return FM.format(title=title) + body


MATRIX_ROWS = "| Area | Component | Version | Notes |\n|---|---|---|---|\n"
FILES = {
    "docusaurus.config.js": CONFIG,
    "main_versions.json": '["0.0.0"]\n',
    # ---- current docs (v1)
    "docs/relnotes/support-matrix.mdx": _page(
        "Compatibility matrix",
        '# Compatibility matrix\n\n<Tabs>\n<TabItem value="preview" label="Preview" default>\n\n'
        + MATRIX_ROWS
        + "| Runtime | Compact toolchain (`compact compile`) | 0.31.1 | compiles contracts |\n"
        "| SDK | Midnight.js | 4.1.1 | DApp framework |\n| Proving | Proof server | 8.1.0 | proofs |\n\n"
        "</TabItem>\n</Tabs>\n",
    ),
    "docs/relnotes/compact.mdx": _page("Compact compiler", "# Compact toolchain\n\nReleases of the toolchain.\n"),
    "docs/relnotes/compact/toolchain-0.31.0.mdx": "# Compact toolchain 0.31.0\n\n- **Language version:** 0.23.0\n\n"
    "## What changed\n\nThe toolchain fixes proof failures in untaken branches.\n",
    "docs/relnotes/midnight-js.mdx": _page("Midnight.js", "# Midnight.js\n\nReleases of Midnight.js.\n"),
    "docs/relnotes/midnight-js/midnight-js-3-0-0.mdx": _page(
        "Midnight.js v3.0.0 release notes",
        "* **Version**: v3.0.0\n\n## Summary\n\nEncrypted private state storage with a password provider and "
        "asynchronous transaction submission replace the old synchronous calls.\n",
    ),
    "docs/relnotes/proof-server/proof-server-8-1-0.mdx": "# Proof server 8.1.0 release notes\n\n"
    "* **Version**: 8.1.0\n\n## Changes\n\nFaster proving keys cache.\n",
    "docs/guides/ledger-types.mdx": _page(
        "Ledger types in a cross-chain guide",
        "# Ledger types in a cross-chain guide\n\nThe bridge contract keeps its entries in a Map ledger field and "
        "reads them back when tokens move.\n\n```compact\npragma language_version >= 0.17;\n"
        "import CompactStandardLibrary;\nexport ledger entries: Map<Bytes<32>, Uint<64>>;\n```\n",
    ),
    "docs/guides/run-proof-server.mdx": _page(
        "Proof server",
        "# Proof server\n\n## Start the proof server\n\nPull the proof server image in Docker Desktop and run it; "
        "it listens on port 6300 for proof requests.\n",
    ),
    "docs/guides/deploy-contract.mdx": _page(
        "Deploy a contract",
        "# Deploy a contract\n\nConfigure the private state provider, the public data provider and the proof "
        "provider, then call deployContract.\n\nThe call returns the deployed contract's address once the "
        "transaction is final.\n\n## Older example\n\nAn example kept from an earlier release:\n\n```compact\n"
        "pragma language_version 0.16;\nexport ledger round: Counter;\n```\n",
    ),
    "docs/examples/pinned.mdx": _page(
        "An example's pinned versions",
        "# Pinned versions\n\n| Component | Version |\n| --- | --- |\n| `@midnight-ntwrk/midnight-js-*` | `4.1.1` |\n",
    ),
    # ---- TypeDoc output: current API reference (no docs version) and a configured generator
    "api-reference/runtime/functions/persistentHash.md": "[**@midnight-ntwrk/compact-runtime v0.16.0**]"
    "(../README.md)\n\n***\n\n[@midnight-ntwrk/compact-runtime](../globals.md) / persistentHash\n\n"
    "# Function: persistentHash()\n\nThe builtin persistentHash function hashes a value of a runtime type.\n",
    "packages/sdk/typedoc.json": '{"entryPoints": ["src/index.ts"], "out": "../../sdk-docs"}\n',
    "packages/sdk/package.json": '{"name": "@acme/wallet-bridge", "version": "1.4.2"}\n',
    "sdk-docs/functions/bridgeTokens.md": "# Function: bridgeTokens()\n\nMoves tokens across the wallet bridge.\n",
    # ---- legacy docs (v0 (Legacy))
    f"{LEGACY}/relnotes/support-matrix.mdx": _page(
        "Compatibility matrix",
        "# Network support matrix\n\n" + MATRIX_ROWS + "| Runtime | Compactc | 0.26.0 | compiler |\n"
        "| SDK | Midnight.js | 2.1.0 | bindings |\n| Proving | Proof Server | 4.0.0 | proofs |\n",
    ),
    f"{LEGACY}/relnotes/compact.mdx": _page("Compact compiler", "# Compact compiler\n\nReleases.\n"),
    f"{LEGACY}/relnotes/compact/compact-0-18-26-0.mdx": _page(
        "Compact compiler 0.26.0 (Compact language 0.18.0)",
        "## Compact compiler 0.26.0 (Compact language 0.18.0) release notes\n\nThis release renames things.\n",
    ),
    f"{LEGACY}/relnotes/proof-server/proof-server-8-1-0.mdx": "# Proof server 8.1.0 release notes\n\n"
    "* **Version**: 8.1.0\n\n## Changes\n\nFaster proving keys cache.\n",
    f"{LEGACY}/reference/ledger-adt.mdx": "# Ledger data types\n\nCompact language version 0.18.0, compiler "
    "version 0.26.0.\n\n## Map\n\nThe Map ledger type: insert, lookup, member and remove operations on keys.\n",
    f"{LEGACY}/reference/opaque.mdx": _page(
        "Opaque data types", "# Opaque data types\n\nCompact supports Opaque<'string'> values passed from a DApp.\n"
    ),
    f"{LEGACY}/how-to/run-proof-server.mdx": _page(
        "Proof server",
        "# Proof server\n\n## Start the proof server\n\nRun the proof server for testnet with docker run -p "
        "6300:6300 and the testnet network flag.\n",
    ),
    f"{LEGACY}/reference/api/runtime/functions/persistentHash.md": "[**@midnight-ntwrk/compact-runtime v0.9.0**]"
    "(../README.md)\n\n***\n\n[@midnight-ntwrk/compact-runtime](../globals.md) / persistentHash\n\n"
    "# Function: persistentHash()\n\nThe builtin persistent_hash function hashes a value of a runtime type.\n",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory, prefect_harness):
    from trustindex.query.index import Index

    root = tmp_path_factory.mktemp("versiontruth")
    RepoBuilder(root / "repo").commit(FILES, "a versioned docs site")
    return Index.open(data_dir=refresh_one_source(root, "repo", "docs", ("**/*.md", "**/*.mdx")))


def _paths(r: dict) -> list[str]:
    return list(dict.fromkeys(h["provenance"]["path"] for h in r["hits"]))


def _hit(r: dict, path: str) -> dict:
    return next(h for h in r["hits"] if h["provenance"]["path"] == path)


# -- 1. the old version asked for ------------------------------------------------------------------------------
def test_a_legacy_page_stamped_with_the_target_is_not_demoted(site):
    q, adt = "Map ledger type operations: insert, lookup, member and remove", f"{LEGACY}/reference/ledger-adt.mdx"
    plain = site.search(q, k=10)
    assert _hit(plain, adt)["factors"]["deprecation"]["status"] == "legacy_docs_version"
    r = site.search(q, k=10, targets={"compact-language": "0.18.0"}, strict=True)
    assert _paths(r)[0] == adt, "the page for the version asked for comes first, above the guide's >= 0.17 fence"
    assert "docs/guides/ledger-types.mdx" in _paths(r)  # the looser fence still satisfies, below it
    dep = _hit(r, adt)["factors"]["deprecation"]
    assert dep["status"] == "legacy_docs_version_targeted" and dep["multiplier"] == 1.0
    assert dep["evidence"]["legacy_lifted_by_version_targets"] == ["compact-language=0.18.0"]
    assert any("legacy docs version, targeted" in line for line in explain_hit(_hit(r, adt)))
    assert check(r, site.policy) == []  # the order follows from the factors shown


def test_a_legacy_copy_of_a_current_page_that_satisfies_too_stays_demoted(site):
    r = site.search("proof server 8.1.0 release notes", k=10, targets={"proof-server": "8.1.0"}, strict=True)
    legacy = f"{LEGACY}/relnotes/proof-server/proof-server-8-1-0.mdx"
    assert _paths(r)[0] == "docs/relnotes/proof-server/proof-server-8-1-0.mdx"
    hits = [h for h in r["hits"] if h["provenance"]["path"] == legacy]
    assert all(h["factors"]["deprecation"]["status"] == "legacy_docs_version" for h in hits)


# -- 2. versions the docs say a page covers ---------------------------------------------------------------------
def test_an_unstamped_legacy_page_inherits_its_docs_versions_matrix(site):
    r = site.search("docker run command to start the proof server", k=10, targets={"proof-server": "4.0.0"},
                    strict=True)  # fmt: skip
    assert _paths(r)[0] == f"{LEGACY}/how-to/run-proof-server.mdx"
    assert "docs/guides/run-proof-server.mdx" not in _paths(r)  # inherits 8.1.0 from the current matrix
    (t,) = r["hits"][0]["factors"]["version_match"]["evidence"]["targets"]
    assert t["inferred"] is True and t["origin"] == "inferred" and t["status"] == "satisfies"
    assert t["detail"].startswith(f"inferred for docs version '0.0.0' from {LEGACY}/relnotes/support-matrix.mdx")
    assert t["strict"].startswith("accepted: inferred")
    assert r["hits"][0]["factors"]["version_match"]["multiplier"] == site.policy.version.inferred_satisfies
    assert any("[satisfies, inferred]" in line for line in explain_hit(r["hits"][0]))


def test_release_notes_chain_the_language_a_docs_version_covers(site):
    legacy = site.search("Opaque string values from a DApp", k=5, targets={"compact-language": "0.18"}, strict=True)
    assert _paths(legacy)[0] == f"{LEGACY}/reference/opaque.mdx"  # the newest legacy release: language 0.18.0
    current = site.search("Pull the proof server image in Docker Desktop", k=5,
                          targets={"compact-language": "0.23"}, strict=True)  # fmt: skip
    # the current matrix's toolchain 0.31.1 → the notes of 0.31.0 → language 0.23.0
    assert _paths(current)[0] == "docs/guides/run-proof-server.mdx"
    (t,) = current["hits"][0]["factors"]["version_match"]["evidence"]["targets"]
    assert "toolchain-0.31.0.mdx" in t["detail"]


def test_inferred_evidence_is_weaker_than_the_pages_own(site):
    r = site.search("Map ledger type operations", k=10, targets={"compact-language": "0.18"})
    own = _hit(r, f"{LEGACY}/reference/ledger-adt.mdx")["factors"]["version_match"]
    inferred = _hit(r, f"{LEGACY}/reference/opaque.mdx")["factors"]["version_match"]
    assert own["multiplier"] == site.policy.version.satisfies > inferred["multiplier"]
    # without a target a hit shows what it states itself, never what it inherits
    plain = _hit(site.search("Opaque string values from a DApp", k=5), f"{LEGACY}/reference/opaque.mdx")
    assert plain["factors"]["version_match"]["evidence"]["constraints"] == {"docs": ["0.0.0"]}
    # permissive: a current page inheriting 0.23 is demoted, not excluded
    other = site.search("start the proof server", k=10, targets={"compact-language": "0.18"})
    current = _hit(other, "docs/guides/run-proof-server.mdx")["factors"]["version_match"]
    assert current["multiplier"] == site.policy.version.inferred_breaking


def test_strict_refuses_an_inference_the_page_itself_contradicts(site):
    q = "configure the private state provider and call deployContract"
    r = site.search(q, k=10, targets={"compact-language": "0.23"})
    hit = next(h for h in r["hits"] if h["provenance"]["path"] == "docs/guides/deploy-contract.mdx"
               and "pragma" not in h["text"])  # fmt: skip
    (t,) = hit["factors"]["version_match"]["evidence"]["targets"]
    assert t["status"] == "unknown" and t["inferred"] and t["contradicted_by"]["constraint"] == "0.16"
    strict = site.search(q, k=10, targets={"compact-language": "0.23"}, strict=True)
    assert "docs/guides/deploy-contract.mdx" not in _paths(strict)


def test_typedoc_pages_carry_their_packages_version(site):
    q = "persistentHash function of the compact runtime"
    old = site.search(q, k=5, targets={"@midnight-ntwrk/compact-runtime": "0.9.0"}, strict=True)
    assert _paths(old) == [f"{LEGACY}/reference/api/runtime/functions/persistentHash.md"]
    (t,) = old["hits"][0]["factors"]["version_match"]["evidence"]["targets"]
    assert (t["origin"], t["constraint"], t["status"]) == ("typedoc", "0.9.0", "satisfies")
    new = site.search(q, k=5, targets={"compact-runtime": "0.16"}, strict=True)
    assert _paths(new)[0] == "api-reference/runtime/functions/persistentHash.md"
    gen = site.search("move tokens across the wallet bridge", k=5, targets={"@acme/wallet-bridge": "1.4"}, strict=True)
    assert _paths(gen) == ["sdk-docs/functions/bridgeTokens.md"]
    (t,) = gen["hits"][0]["factors"]["version_match"]["evidence"]["targets"]
    assert (t["origin"], t["constraint"]) == ("typedoc", "1.4.2")


# -- 3. names without a registry --------------------------------------------------------------------------------
def test_a_scoped_package_name_answers_and_spellings_merge(site):
    from trustindex.serve.listing import list_versions

    r = site.search("encrypted private state storage", k=5, targets={"@midnight-ntwrk/midnight-js": "3.0.0"},
                    strict=True)  # fmt: skip
    assert _paths(r)[0] == "docs/relnotes/midnight-js/midnight-js-3-0-0.mdx"
    (t,) = r["targets"]
    assert t["component"] == "midnight-js" and t["component_requested"] == "@midnight-ntwrk/midnight-js"
    member = site.search("encrypted private state", k=5, targets={"@midnight-ntwrk/midnight-js-utils": "3.0.0"})
    assert "member of family 'midnight-js-*'" in member["targets"][0]["component_resolution"]
    listed = {c["component"]: c for c in list_versions(site.data)["components"]}
    assert not [c for c in listed if c.endswith(("-", "*"))]  # the table's `@midnight-ntwrk/midnight-js-*` row
    assert "@midnight-ntwrk/midnight-js" in listed["midnight-js"]["merged"]
    # the release-notes folder, its index page's title and heading, and the matrix's row are one component
    (toolchain,) = [c for c in listed.values() if "Compact toolchain" in c.get("merged", ())]
    assert {"compact", "compact-compiler"} <= set(toolchain["merged"]) and "0.31.1" in toolchain["constraints"]


def test_stats_shows_the_merges(site, capsys):
    from trustindex.cli.main import main

    data = site.data.dir.parent.parent
    assert main(["stats", "--data", str(data), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)["docs"]
    assert "midnight-js" in s["chunks_per_version_component"]
    assert "@midnight-ntwrk/midnight-js" in s["version_component_merges"]["midnight-js"]
    assert not [c for c in s["chunks_per_version_component"] if c.endswith(("-", "*"))]


# -- 4. a misspelt name --------------------------------------------------------------------------------------------
def test_a_misspelt_name_is_refused_in_one_line_with_close_matches(site):
    with pytest.raises(QueryError) as e:
        site.search("release notes", k=5, targets={"midnite-js": "3.0.0"})
    line = str(e.value)
    assert "\n" not in line and "did you mean midnight-js" in line and len(line) < 300
