"""TypeDoc's Markdown output: the package and version a generated page documents (its header, or the generator's
configuration in the repository)."""

from __future__ import annotations

import json

from trustindex.extractors.typedoc import TypedocOutputs, header_targets

MEMBER = """[**@midnight-ntwrk/compact-runtime v0.16.0**](../README.md)

***

[@midnight-ntwrk/compact-runtime](../globals.md) / persistentHash

# Function: persistentHash()
"""
PROJECT_MEMBER = """[**Midnight.js API Reference v4.0.4**](../../../README.md)

***

[Midnight.js API Reference](../../../packages.md) / [@midnight-ntwrk/midnight-js-contracts](../README.md) / deploy

# Function: deployContract()
"""
README = """# Compact runtime API

**@midnight-ntwrk/compact-runtime v0.9.0**

***

# Compact runtime library
"""


def _seen(path: str, text: str) -> list[tuple[str, str]]:
    return [(t.component, t.constraint) for t in header_targets(path, text)]


def test_a_member_page_and_a_readme_name_their_package_and_version():
    assert _seen("api-reference/runtime/functions/persistentHash.md", MEMBER) == [
        ("@midnight-ntwrk/compact-runtime", "0.16.0")
    ]
    assert _seen("api/runtime/README.md", README) == [("@midnight-ntwrk/compact-runtime", "0.9.0")]
    (t,) = header_targets("x.md", MEMBER)
    assert t.origin == "typedoc" and t.chunk_ordinal is None and "line 1" in t.detail


def test_a_project_of_packages_names_both_the_project_and_the_package():
    path = "api/midnight-js/@midnight-ntwrk/midnight-js-contracts/functions/deployContract.md"
    assert _seen(path, PROJECT_MEMBER) == [
        ("Midnight.js", "4.0.4"),
        ("@midnight-ntwrk/midnight-js-contracts", "4.0.4"),
    ]
    # without the folder, the breadcrumb names the package
    assert _seen("api/deployContract.md", PROJECT_MEMBER)[1] == ("@midnight-ntwrk/midnight-js-contracts", "4.0.4")


def test_bold_versions_elsewhere_are_not_a_header():
    assert _seen("docs/guide.md", "# Guide\n\n**Midnight.js v4.0.4** is out.\n\nMore text.\n") == []
    assert _seen("docs/guide.md", "# Guide\n\nText\n\nMore\n\n\n\n\n\n[**x v1.0.0**](a.md)\n\n***\n") == []


def test_the_generators_configuration_dates_its_output():
    files = {
        "packages/sdk/typedoc.json": json.dumps({"entryPoints": ["src/index.ts"], "out": "../../sdk-docs"}).encode(),
        "packages/sdk/package.json": json.dumps({"name": "@acme/wallet-bridge", "version": "1.4.2"}).encode(),
        "tools/typedoc.json": b"{not json",
        "typedoc.json": json.dumps({"out": "."}).encode(),  # the repository's root as output dates nothing
        "package.json": json.dumps({"name": "x", "version": "1.0.0"}).encode(),
    }
    outputs = TypedocOutputs(files)
    (t,) = outputs.targets("sdk-docs/functions/bridgeTokens.md")
    assert (t.component, t.constraint, t.origin) == ("@acme/wallet-bridge", "1.4.2", "typedoc")
    assert "packages/sdk/typedoc.json" in t.detail and "packages/sdk/package.json" in t.detail
    assert outputs.targets("docs/guide.md") == [] and outputs.targets("guide.md") == []
    assert len(outputs.warnings) == 1 and outputs.warnings[0].startswith("tools/typedoc.json: not read")
