"""atheris target: package.json and Cargo.toml parsing (extractors/manifests.py) and workspace resolution.

The first input byte picks a mode, the rest is the file's bytes:
  0  package.json → parse_package_json, then resolve_workspaces with a local package
  1  Cargo.toml   → parse_cargo_toml as a member, then resolve_cargo_workspace with a root
  2  Cargo.toml   → parse_cargo_toml as the workspace root, resolved with a fixed member

Documented outcomes: ExtractionError naming the file for bytes that are not UTF-8 JSON
object / TOML; otherwise a result whose every target is allowlisted (by its package
name or its dependency key), ``parsed`` with a stored constraint set or ``unparsed``
with a reason.  Anything else propagates, and atheris reports it as a crash.

    .venv/bin/python fuzz/fuzz_manifests.py -max_total_time=60 fuzz/corpus/manifests
"""

from __future__ import annotations

import json
import sys
import tomllib
from fnmatch import fnmatchcase
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

with atheris.instrument_imports():
    from trustindex.extractors.base import ExtractionError
    from trustindex.extractors.manifests import (
        DEFAULT_CARGO_ALLOWLIST,
        DEFAULT_NPM_ALLOWLIST,
        parse_cargo_toml,
        parse_package_json,
        resolve_cargo_workspace,
        resolve_workspaces,
    )
    from trustindex.schemas.versions import ConstraintSet

LOCAL = parse_package_json(b'{"name": "@midnight-ntwrk/local", "version": "1.4.0"}', "packages/local/package.json")
MEMBER = parse_cargo_toml(
    b'[package]\nname = "midnight-member"\nversion.workspace = true\n'
    b"[dependencies]\nmidnight-ledger = { workspace = true }\n",
    "crates/m/Cargo.toml",
)
ROOT = parse_cargo_toml(
    b'[workspace]\nmembers = ["crates/*"]\n[workspace.package]\nversion = "2.0.0"\n'
    b'[workspace.dependencies]\nmidnight-ledger = "0.5"\n',
    "Cargo.toml",
)


def _allowed(name, allowlist) -> bool:
    return isinstance(name, str) and any(fnmatchcase(n, p) for p in allowlist for n in (name, name.replace("_", "-")))


def _naming_keys(doc, component: str):
    """Keys under which ``component`` is written: ``"key": "npm:component@1"``, ``key = { package = "component" }``."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            if (isinstance(v, str) and component in v) or (isinstance(v, dict) and v.get("package") == component):
                yield k
            yield from _naming_keys(v, component)
    elif isinstance(doc, list):
        for v in doc:
            yield from _naming_keys(v, component)


def check_targets(targets, allowlist, docs) -> None:
    """Every target is allowlisted by its package name or by the key it is written under (alias, rename)."""
    for t in targets:
        assert isinstance(t.component, str) and t.origin == "manifest", t
        assert _allowed(t.component, allowlist) or any(
            _allowed(k, allowlist) for d in docs for k in _naming_keys(d, t.component)
        ), t
        if t.status == "parsed":
            ConstraintSet.from_json(t.intervals)
        else:
            assert t.status == "unparsed" and t.intervals == "" and t.detail, t


MEMBER_DOC = {"dependencies": {"midnight-ledger": {"workspace": True}}}


def TestOneInput(data: bytes) -> None:
    if not data:
        return
    mode, body = data[0] % 3, data[1:]
    try:
        if mode == 0:
            m = parse_package_json(body, "packages/app/package.json")
        else:
            m = parse_cargo_toml(body, "Cargo.toml" if mode == 2 else "crates/x/Cargo.toml")
    except ExtractionError as exc:
        assert str(exc).startswith(("packages/app/package.json: ", "Cargo.toml: ", "crates/x/Cargo.toml: "))
        return
    # parsing succeeded, so the document parses here too
    doc = json.loads(body.decode("utf-8-sig")) if mode == 0 else tomllib.loads(body.decode("utf-8-sig"))
    if mode == 0:
        check_targets(m.targets, DEFAULT_NPM_ALLOWLIST, [doc])
        out = resolve_workspaces({m.path: m, LOCAL.path: LOCAL})
        check_targets(out[m.path].targets, DEFAULT_NPM_ALLOWLIST, [doc])
        assert all(not r.pending for r in out.values())
    else:
        check_targets(m.targets, DEFAULT_CARGO_ALLOWLIST, [doc])
        pair = {m.path: m, MEMBER.path: MEMBER} if mode == 2 else {ROOT.path: ROOT, m.path: m}
        for r in resolve_cargo_workspace(pair).values():
            assert not r.pending
            check_targets(r.targets, DEFAULT_CARGO_ALLOWLIST, [doc, MEMBER_DOC])


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
