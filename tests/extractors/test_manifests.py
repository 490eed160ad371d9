"""extractors.manifests: package.json, Cargo.toml, workspaces, nearest manifest."""

import json

import pytest

from trustindex.extractors.base import ExtractionError
from trustindex.extractors.manifests import (
    manifest_deprecation,
    nearest_manifest,
    parse_cargo_toml,
    parse_package_json,
    resolve_cargo_workspace,
    resolve_workspaces,
)
from trustindex.schemas.versions import ConstraintSet, parse_version


def _pkg(doc: dict, path="package.json", allowlist=None):
    return parse_package_json(json.dumps(doc).encode(), path, allowlist)


def _by_component(targets):
    return {t.component: t for t in targets}


# Shapes of the ecosystem's real package.json files (DESIGN.md, "Known traps").
APP = {
    "name": "@midnight-ntwrk/counter-contract",
    "version": "0.1.0",
    "private": True,
    "dependencies": {
        "@midnight-ntwrk/compact-runtime": "0.16.0",
        "@midnight-ntwrk/midnight-js-contracts": "^4.0.4",
        "@midnightntwrk/other-scope": "~1.2.0",
        "ledger": "npm:@midnight-ntwrk/ledger-v6@6.1.0-alpha.3",
        "@midnight-ntwrk/wallet-sdk-facade": "latest",
        "react": "^19.0.0",
    },
    "peerDependencies": {"@midnight-ntwrk/ledger-v8": ">=8.0.0 <9"},
    "devDependencies": {"@midnight-ntwrk/compact-compiler": "^0.16.0", "typescript": "^5.9.3"},
}


@pytest.mark.parametrize(
    "component, constraint, status, inside",
    [
        ("@midnight-ntwrk/compact-runtime", "0.16.0", "parsed", "0.16.0"),
        ("@midnight-ntwrk/midnight-js-contracts", "^4.0.4", "parsed", "4.9.0"),
        ("@midnightntwrk/other-scope", "~1.2.0", "parsed", "1.2.7"),
        ("@midnight-ntwrk/ledger-v6", "6.1.0-alpha.3", "parsed", "6.1.0-alpha.3"),
        ("@midnight-ntwrk/ledger-v8", ">=8.0.0 <9", "parsed", "8.1.3"),
        ("@midnight-ntwrk/counter-contract", "0.1.0", "parsed", "0.1.0"),
        ("@midnight-ntwrk/wallet-sdk-facade", "latest", "unparsed", None),
    ],
)
def test_package_json_targets(component, constraint, status, inside):
    m = _pkg(APP)
    t = _by_component(m.targets)[component]
    assert (t.constraint, t.status, t.origin) == (constraint, status, "manifest")
    if inside:
        assert ConstraintSet.from_json(t.intervals).contains(parse_version(inside))


def test_package_json_skips_dev_and_foreign_packages():
    names = set(_by_component(_pkg(APP).targets))
    assert "react" not in names and "typescript" not in names
    assert "@midnight-ntwrk/compact-compiler" not in names  # devDependencies only
    assert "ledger" not in names  # the alias key; the aliased package is the component


def test_package_json_fields_and_details():
    m = _pkg({**APP, "deprecated": "use @midnight-ntwrk/ledger-v8", "workspaces": {"packages": ["pkgs/*"]}})
    assert (m.name, m.version, m.private, m.workspaces) == (
        "@midnight-ntwrk/counter-contract",
        "0.1.0",
        True,
        ["pkgs/*"],
    )
    t = _by_component(m.targets)
    assert t["@midnight-ntwrk/counter-contract"].detail == "own version"
    assert t["@midnight-ntwrk/ledger-v6"].detail == "dependencies (npm alias ledger)"
    assert t["@midnight-ntwrk/ledger-v8"].detail == "peerDependencies"
    d = manifest_deprecation(m)
    assert (d.scope, d.marker) == ("document", "package_json") and "ledger-v8" in d.reason
    assert manifest_deprecation(_pkg(APP)) is None


def test_own_version_only_for_allowlisted_names():
    m = _pkg({"name": "counter-cli", "version": "1.0.0"})
    assert m.targets == []
    m = _pkg({"name": "counter-cli", "version": "1.0.0"}, allowlist=["counter-*"])
    assert [t.detail for t in m.targets] == ["own version"]


def test_workspaces_resolve_to_the_workspace_version():
    root = _pkg({"name": "root", "private": True, "workspaces": ["packages/*"]})
    runtime = _pkg({"name": "@midnight-ntwrk/compact-runtime", "version": "0.16.2"}, "packages/runtime/package.json")
    app = _pkg(
        {
            "name": "@midnight-ntwrk/app",
            "version": "1.0.0",
            "dependencies": {"@midnight-ntwrk/compact-runtime": "workspace:*"},
        },
        "packages/app/package.json",
    )
    caret = _pkg({"name": "x", "dependencies": {"@midnight-ntwrk/compact-runtime": "workspace:^"}}, "a/package.json")
    star = _pkg({"name": "y", "dependencies": {"@midnight-ntwrk/compact-runtime": "*"}}, "b/package.json")
    missing = _pkg({"name": "z", "dependencies": {"@midnight-ntwrk/gone": "workspace:~"}}, "c/package.json")
    assert app.pending and not [t for t in app.targets if t.component == "@midnight-ntwrk/compact-runtime"]
    out = resolve_workspaces({m.path: m for m in (root, runtime, app, caret, star, missing)})
    rt = "@midnight-ntwrk/compact-runtime"
    assert _by_component(out[app.path].targets)[rt].constraint == "0.16.2"
    assert "workspace:*" in _by_component(out[app.path].targets)[rt].detail
    assert _by_component(out[caret.path].targets)[rt].constraint == "^0.16.2"
    assert _by_component(out[star.path].targets)[rt].constraint == "0.16.2"
    gone = _by_component(out[missing.path].targets)["@midnight-ntwrk/gone"]
    assert gone.status == "unparsed" and "not found" in gone.detail
    assert all(not m.pending for m in out.values())


@pytest.mark.parametrize(
    "data, fragment",
    [
        (b'{"name": "x",\n  "version": }', "line 2 column"),
        (b"[1, 2]", "not an object"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"", "line 1 column 1"),
    ],
)
def test_malformed_package_json(data, fragment):
    with pytest.raises(ExtractionError) as err:
        parse_package_json(data, "pkgs/a/package.json", None)
    assert "pkgs/a/package.json" in str(err.value) and fragment in str(err.value)


def test_odd_sections_warn_not_crash():
    m = _pkg({"name": "x", "dependencies": ["a"], "peerDependencies": {"@midnight-ntwrk/a": 3}})
    assert m.targets == [] and len(m.warnings) == 2


# ---------------------------------------------------------------- Cargo
CARGO = b"""
[package]
name = "midnight-ledger"
version = "0.5.2"

[dependencies]
midnight-base-crypto = "0.5"
midnight_transient = { version = "=1.2.3", features = ["x"] }
mn-storage = { package = "midnight-storage", version = "~1.4" }
midnight-zswap = { git = "https://example.org/z.git" }
serde = "1"

[dev-dependencies]
midnight-test-utils = "9"

[build-dependencies]
midnight-build = "9"

[target.'cfg(unix)'.dependencies]
midnight-unix = ">= 1.2, < 1.5"
"""


@pytest.mark.parametrize(
    "component, constraint, status, inside, outside",
    [
        ("midnight-ledger", "0.5.2", "parsed", "0.5.2", "0.5.3"),
        ("midnight-base-crypto", "0.5", "parsed", "0.5.9", "0.6.0"),
        ("midnight_transient", "=1.2.3", "parsed", "1.2.3", "1.2.4"),
        ("midnight-storage", "~1.4", "parsed", "1.4.9", "1.5.0"),
        ("midnight-unix", ">= 1.2, < 1.5", "parsed", "1.4.0", "1.5.0"),
        ("midnight-zswap", "", "unparsed", None, None),
    ],
)
def test_cargo_targets(component, constraint, status, inside, outside):
    m = parse_cargo_toml(CARGO, "ledger/Cargo.toml")
    t = _by_component(m.targets)[component]
    assert (t.constraint, t.status) == (constraint, status)
    if inside:
        cs = ConstraintSet.from_json(t.intervals)
        assert cs.contains(parse_version(inside)) and not cs.contains(parse_version(outside))


def test_cargo_skips_dev_build_and_foreign():
    names = set(_by_component(parse_cargo_toml(CARGO, "Cargo.toml").targets))
    assert not names & {"serde", "midnight-test-utils", "midnight-build"}
    assert (
        "renamed mn-storage" in _by_component(parse_cargo_toml(CARGO, "Cargo.toml").targets)["midnight-storage"].detail
    )


def test_a_cargo_rename_names_the_crate_or_else_its_key():
    # found by the property test: ``package = ""`` named no crate and the target came out with an empty component
    doc = b"""[dependencies]
midnight-ledger = { package = "", git = "https://example.org/ledger" }
mn-zswap = { package = "midnight-zswap", path = "../zswap" }
"""
    targets = _by_component(parse_cargo_toml(doc, "Cargo.toml").targets)
    assert set(targets) == {"midnight-ledger", "midnight-zswap"}
    assert targets["midnight-ledger"].detail == "dependencies: git dependency without a version requirement"
    # an unversioned rename says which key it was written under, as a versioned one does
    assert (
        targets["midnight-zswap"].detail
        == "dependencies (renamed mn-zswap): path dependency without a version requirement"
    )


def test_cargo_workspace_inheritance():
    root = parse_cargo_toml(
        b"""
[workspace]
members = ["ledger", "zswap"]
[workspace.package]
version = "4.0.0"
[workspace.dependencies]
midnight-base-crypto = { version = "0.5.1" }
midnight-serialize = "1.0"
""",
        "Cargo.toml",
    )
    member = parse_cargo_toml(
        b"""
[package]
name = "midnight-zswap"
version.workspace = true
[dependencies]
midnight-base-crypto = { workspace = true, features = ["std"] }
midnight-missing = { workspace = true }
""",
        "zswap/Cargo.toml",
    )
    assert root.is_workspace_root and root.workspace_members == ["ledger", "zswap"]
    assert member.version_from_workspace and len(member.pending) == 2
    out = resolve_cargo_workspace({root.path: root, member.path: member})
    t = _by_component(out[member.path].targets)
    assert out[member.path].version == "4.0.0" and t["midnight-zswap"].constraint == "4.0.0"
    assert t["midnight-base-crypto"].constraint == "0.5.1" and "Cargo.toml" in t["midnight-base-crypto"].detail
    assert t["midnight-missing"].status == "unparsed"
    assert set(_by_component(root.targets)) == {"midnight-base-crypto", "midnight-serialize"}


@pytest.mark.parametrize(
    "data, fragment",
    [
        (b'[package]\nname = "x"\nversion = \n', "line 3"),
        (b"[package\n", "invalid TOML"),
        (b"\xff", "not UTF-8"),
    ],
)
def test_malformed_cargo_toml(data, fragment):
    with pytest.raises(ExtractionError) as err:
        parse_cargo_toml(data, "crates/x/Cargo.toml")
    assert "crates/x/Cargo.toml" in str(err.value) and fragment in str(err.value)


# ---------------------------------------------------------------- nearest manifest
MANIFESTS = ["package.json", "packages/a/package.json", "packages/a/nested/package.json", "crates/z/Cargo.toml"]


@pytest.mark.parametrize(
    "path, expected",
    [
        ("README.md", "package.json"),
        ("packages/a/src/index.ts", "packages/a/package.json"),
        ("packages/a/nested/x/y.ts", "packages/a/nested/package.json"),
        ("packages/ab/index.ts", "package.json"),  # a sibling with a common prefix is not an ancestor
        ("packages/a/package.json", "packages/a/package.json"),
    ],
)
def test_nearest_manifest(path, expected):
    assert nearest_manifest(path, MANIFESTS) == expected


def test_nearest_manifest_dirs_and_none():
    assert nearest_manifest("crates/z/src/lib.rs", ["crates/z", "crates"]) == "crates/z"
    assert nearest_manifest("docs/x.md", ["packages/a/package.json"]) is None
    assert nearest_manifest("docs/x.md", [""]) == ""
