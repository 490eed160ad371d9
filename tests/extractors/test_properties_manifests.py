"""Property-based tests of the manifest parsers (issue item 7): any JSON/TOML value, no crash, allowlist kept.

package.json and Cargo.toml come from repositories other people control: any
document must give a result (with warnings) or ExtractionError naming the file,
never another exception.  Targets only ever name allowlisted packages
(extractors/manifests.py: the dependency's published name or its key), and every
target is either parsed (its intervals are a stored ConstraintSet) or unparsed
with empty intervals and a detail that says why.
"""

from __future__ import annotations

import json
import os
from fnmatch import fnmatchcase

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trustindex.extractors.base import ExtractionError
from trustindex.extractors.manifests import (
    parse_cargo_toml,
    parse_package_json,
    resolve_cargo_workspace,
    resolve_workspaces,
)
from trustindex.schemas.versions import ConstraintSet

# Bounded so the file stays well under 20 s; HYPOTHESIS_EXAMPLES=2000 searches harder.
SETTINGS = settings(
    max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", 150)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
NPM_ALLOW = ["@midnight-ntwrk/*", "@midnightntwrk/*"]
CARGO_ALLOW = ["midnight-*"]

text = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
scalars = (
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats(allow_nan=False, allow_infinity=False) | text
)
json_values = st.recursive(
    scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(text, c, max_size=4), max_leaves=12
)
NPM_NAMES = (
    st.sampled_from(
        ["@midnight-ntwrk/ledger", "@midnightntwrk/wallet-api", "react", "ledger", "@midnight-ntwrk/x", "midnight"]
    )
    | text
)
SPECS = (
    st.sampled_from(
        [
            "^1.2.3",
            "~0.8",
            "1.x",
            ">=1 <2",
            "*",
            "",
            "latest",
            "workspace:*",
            "workspace:^",
            "npm:@midnight-ntwrk/ledger-v6@6.1.0-alpha.3",
            "npm:react@18",
            "npm:@midnight-ntwrk/y",
            "file:../x",
            "git+https://x/y.git",
            "1.2.3 - 2",
            "||",
            "^",
            "v1.0.0",
            "1" * 30,
        ]
    )
    | text
)
package_json = st.fixed_dictionaries(
    {},
    optional={
        "name": NPM_NAMES | json_values,
        "version": st.sampled_from(["1.0.0", "0.1", "x", ""]) | json_values,
        "deprecated": st.booleans() | text | json_values,
        "private": json_values,
        "workspaces": st.lists(text | json_values, max_size=3) | st.fixed_dictionaries({"packages": json_values}),
        "dependencies": st.dictionaries(NPM_NAMES, SPECS | json_values, max_size=5) | json_values,
        "peerDependencies": st.dictionaries(NPM_NAMES, SPECS | json_values, max_size=5) | json_values,
        "devDependencies": st.dictionaries(NPM_NAMES, SPECS, max_size=5),
    },
)


def _all_keys(v):
    if isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from _all_keys(x)
    elif isinstance(v, list):
        for x in v:
            yield from _all_keys(x)


def _allowed(name, allowlist) -> bool:
    return isinstance(name, str) and any(fnmatchcase(name, p) for p in allowlist)


def _check_targets(targets, allowlist, keys: set[str]) -> None:
    for t in targets:
        assert isinstance(t.component, str) and t.origin == "manifest"
        assert (
            _allowed(t.component, allowlist)
            or _allowed(t.component.replace("_", "-"), allowlist)
            or any(_allowed(k, allowlist) or _allowed(k.replace("_", "-"), allowlist) for k in keys if k in t.detail)
        ), t  # an alias/rename names its allowlisted key in the detail
        assert t.status in ("parsed", "unparsed")
        if t.status == "parsed":
            ConstraintSet.from_json(t.intervals)
        else:
            assert t.intervals == "" and t.detail


# ---------------------------------------------------------------- package.json
@SETTINGS
@given(package_json)
def test_package_json_documents_never_crash_and_respect_the_allowlist(doc):
    data = json.dumps(doc).encode()
    m = parse_package_json(data, "pkg/package.json", NPM_ALLOW)
    keys = {k for sec in ("dependencies", "peerDependencies") if isinstance(doc.get(sec), dict) for k in doc[sec]}
    _check_targets(m.targets, NPM_ALLOW, keys)
    assert not any(t.detail.startswith("devDependencies") for t in m.targets)  # never reach users
    resolved = resolve_workspaces({"pkg/package.json": m})["pkg/package.json"]
    _check_targets(resolved.targets, NPM_ALLOW, keys)
    assert resolved.pending == []


@SETTINGS
@given(json_values)
def test_package_json_any_json_value(value):
    try:
        m = parse_package_json(json.dumps(value).encode(), "package.json")
    except ExtractionError as exc:
        assert not isinstance(value, dict) and "package.json" in str(exc)
        return
    assert isinstance(value, dict)
    _check_targets(m.targets, NPM_ALLOW, set(value))


@SETTINGS
@given(st.binary(max_size=200))
def test_package_json_any_bytes(data):
    try:
        parse_package_json(data, "package.json")
    except ExtractionError as exc:
        assert str(exc).startswith("package.json: ")


# ---------------------------------------------------------------- Cargo.toml
def toml_value(v) -> str:
    """Inline TOML for a JSON-like value (TOML has no null: None becomes a string)."""
    if v is None:
        return '"null"'
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v) if isinstance(v, int) else json.dumps(v).replace("e+", "e")
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a TOML basic string (no lone surrogates: see `text`)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + "}"


def toml_doc(doc: dict) -> str:
    return "\n".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in doc.items()) + "\n"


CRATES = st.sampled_from(["midnight-ledger", "midnight_zswap", "serde", "midnight", "ledger"]) | text
DEP = st.one_of(
    st.sampled_from(["0.5", "^1.2", "=1.0.0", "1.*", "*", ">=1, <2", "~1", "bad", ""]) | text,
    st.fixed_dictionaries(
        {},
        optional={
            "version": st.sampled_from(["0.5", "1"]) | json_values,
            "package": CRATES | json_values,
            "workspace": json_values,
            "git": text,
            "path": text,
        },
    ),
    json_values,
)
DEPS = st.dictionaries(CRATES, DEP, max_size=4)
cargo_toml = st.fixed_dictionaries(
    {},
    optional={
        "package": st.fixed_dictionaries(
            {},
            optional={
                "name": CRATES | json_values,
                "version": st.sampled_from(["1.0.0", "0.1"]) | json_values | st.just({"workspace": True}),
            },
        )
        | json_values,
        "workspace": st.fixed_dictionaries(
            {},
            optional={
                "members": st.lists(text, max_size=3) | json_values,
                "package": st.fixed_dictionaries({}, optional={"version": json_values | st.just("2.0.0")})
                | json_values,
                "dependencies": DEPS | json_values,
            },
        )
        | json_values,
        "dependencies": DEPS | json_values,
        "dev-dependencies": DEPS,
        "target": st.dictionaries(
            text, st.fixed_dictionaries({}, optional={"dependencies": DEPS | json_values}) | json_values, max_size=2
        )
        | json_values,
    },
)


@SETTINGS
@given(cargo_toml)
def test_cargo_toml_documents_never_crash_and_respect_the_allowlist(doc):
    try:
        m = parse_cargo_toml(toml_doc(doc).encode(), "crate/Cargo.toml", CARGO_ALLOW)
    except ExtractionError as exc:
        assert "invalid TOML" in str(exc)  # only for values our serializer cannot spell (e.g. -0.0 keys)
        return
    keys = set(_all_keys(doc))
    _check_targets(m.targets, CARGO_ALLOW, keys)
    assert not any("dev-dependencies" in t.detail for t in m.targets)
    root = parse_cargo_toml(b'[workspace]\n[workspace.package]\nversion = "3.0.0"\n', "Cargo.toml", CARGO_ALLOW)
    resolved = resolve_cargo_workspace({"Cargo.toml": root, "crate/Cargo.toml": m}, CARGO_ALLOW)
    _check_targets(resolved["crate/Cargo.toml"].targets, CARGO_ALLOW, keys)


@SETTINGS
@given(st.binary(max_size=200))
def test_cargo_toml_any_bytes(data):
    try:
        parse_cargo_toml(data, "Cargo.toml")
    except ExtractionError as exc:
        assert str(exc).startswith("Cargo.toml: ")


# ---------------------------------------------------------------- crashes these tests found (now fixed)
@pytest.mark.parametrize("members", ["5", "true", "1.5", '"crates/*"', "{ a = 1 }"])
def test_cargo_workspace_members_not_a_list(members):
    """``members = 5`` iterated an int (TypeError); a string or table is not a member list either."""
    m = parse_cargo_toml(f"[workspace]\nmembers = {members}\n".encode(), "Cargo.toml")
    assert m.is_workspace_root and m.workspace_members == []


@pytest.mark.parametrize("entry", ["5", '["crates/~"]', "true"])
def test_cargo_workspace_dependency_not_a_table(entry):
    """An entry neither string nor table reached resolve_cargo_workspace's (entry or {}).get (AttributeError)."""
    root = parse_cargo_toml(
        f"[workspace]\n[workspace.dependencies]\nmidnight-ledger = {entry}\n".encode(), "Cargo.toml"
    )
    member = parse_cargo_toml(
        b'[package]\nname = "a"\n[dependencies]\nmidnight-ledger = { workspace = true }\n', "a/Cargo.toml"
    )
    out = resolve_cargo_workspace({"Cargo.toml": root, "a/Cargo.toml": member})
    assert out["a/Cargo.toml"].targets[0].status == "unparsed"


@pytest.mark.parametrize(
    "parse,data",
    [
        (parse_package_json, b'{"dependencies": {"@midnight-ntwrk/a": "' + b"1" * 5000 + b'"}}'),
        (parse_cargo_toml, b'[dependencies]\nmidnight-a = "' + b"1" * 5000 + b'"\n'),
    ],
)
def test_huge_version_numbers_become_unparsed_targets(parse, data):
    """A 5000-digit version raised ValueError through the parsers (Python's int() limit)."""
    m = parse(data, "manifest")
    assert [t.status for t in m.targets] == ["unparsed"]
