"""package.json and Cargo.toml → the ecosystem versions the code next to them targets.

Only dependencies whose (published) name matches an allowlist of glob patterns
become targets: the ecosystem's own packages are what a query names, a project's
``typescript`` or ``serde`` pin is noise.  The pipeline maps every other file to
its :func:`nearest_manifest`.  Workspace references need the other manifests of
the repository and are resolved in a second pass (:func:`resolve_workspaces`,
:func:`resolve_cargo_workspace`).
"""

from __future__ import annotations

import dataclasses
import json
import posixpath
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from trustindex.extractors.base import Deprecation, ExtractionError, VersionTarget
from trustindex.schemas.version_parsers import parse_cargo, parse_npm
from trustindex.schemas.versions import ConstraintSet, VersionSyntaxError, parse_version

DEFAULT_NPM_ALLOWLIST = ["@midnight-ntwrk/*", "@midnightntwrk/*"]
DEFAULT_CARGO_ALLOWLIST = ["midnight-*"]
NPM_SECTIONS = ("dependencies", "peerDependencies")  # devDependencies do not reach users
MANIFEST_NAMES = ("package.json", "Cargo.toml")


@dataclass
class PackageManifest:
    path: str
    name: str | None = None
    version: str | None = None
    deprecated: str | None = None
    private: bool = False
    workspaces: list[str] = field(default_factory=list)
    targets: list[VersionTarget] = field(default_factory=list)
    # (component, spec as written, section): workspace references awaiting resolve_workspaces
    pending: list[tuple[str, str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class CargoManifest:
    path: str
    name: str | None = None
    version: str | None = None
    version_from_workspace: bool = False  # [package] version.workspace = true
    is_workspace_root: bool = False
    workspace_members: list[str] = field(default_factory=list)
    workspace_version: str | None = None  # [workspace.package] version
    workspace_dependencies: dict[str, dict] = field(default_factory=dict)
    targets: list[VersionTarget] = field(default_factory=list)
    # (dependency key, its table, section): `{ workspace = true }` awaiting resolve_cargo_workspace
    pending: list[tuple[str, dict, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _allowed(name: str, allowlist: Iterable[str]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in allowlist)


def _target(component: str, constraint: str, parse, detail: str) -> VersionTarget:
    try:
        intervals, status = parse(constraint).to_json(), "parsed"
    except VersionSyntaxError as exc:
        intervals, status, detail = "", "unparsed", f"{detail}: {exc.reason}"
    return VersionTarget(
        component=component, constraint=constraint, origin="manifest", intervals=intervals, status=status, detail=detail
    )


def _exact(text: str) -> ConstraintSet:
    return ConstraintSet.exact(parse_version(text))


def _own_version(name: str | None, version: str | None, allowlist) -> list[VersionTarget]:
    """A package's own name and version, when the name is an allowlisted (ecosystem) one.

    Workspace membership alone is not enough: example apps and test harnesses
    are workspace packages too, and nobody queries ``counter-cli``.
    """
    if not name or not isinstance(version, str) or not _allowed(name, allowlist):
        return []
    return [_target(name, version, _exact, "own version")]


def _load_json(data: bytes, path: str) -> dict:
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ExtractionError(f"{path}: not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ExtractionError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    if not isinstance(doc, dict):
        raise ExtractionError(f"{path}: package.json is a JSON {type(doc).__name__}, not an object")
    return doc


def _split_alias(spec: str) -> tuple[str, str]:
    """``npm:@scope/pkg@range`` → (``@scope/pkg``, ``range``); the range may be empty."""
    body = spec[4:]
    at = body.rfind("@")
    if at <= 0:  # "npm:pkg" or "npm:@scope/pkg" without a range
        return body, ""
    return body[:at], body[at + 1 :]


def parse_package_json(data: bytes, path: str, allowlist: list[str] | None = None) -> PackageManifest:
    """Name, version, ``deprecated``, workspaces and allowlisted dependency targets of a package.json.

    Sections read: ``dependencies`` and ``peerDependencies``.  ``npm:`` aliases
    target the aliased package (``"ledger": "npm:@midnight-ntwrk/ledger-v6@6.1.0-alpha.3"``
    → component ``@midnight-ntwrk/ledger-v6``, constraint ``6.1.0-alpha.3``).
    ``workspace:`` specs and ``*`` (npm workspaces link a local package for
    ``*``) wait in ``pending`` for :func:`resolve_workspaces`.  Tags
    (``latest``), URLs and paths are kept as ``unparsed`` targets.
    """
    allowlist = DEFAULT_NPM_ALLOWLIST if allowlist is None else allowlist
    doc = _load_json(data, path)
    m = PackageManifest(path=path)
    m.name = doc.get("name") if isinstance(doc.get("name"), str) else None
    m.version = doc.get("version") if isinstance(doc.get("version"), str) else None
    dep = doc.get("deprecated")
    m.deprecated = dep if isinstance(dep, str) and dep.strip() else ("deprecated" if dep is True else None)
    m.private = doc.get("private") is True
    ws = doc.get("workspaces")
    ws = ws.get("packages") if isinstance(ws, dict) else ws  # yarn's {"packages": [...]} form
    m.workspaces = [w for w in ws if isinstance(w, str)] if isinstance(ws, list) else []
    m.targets.extend(_own_version(m.name, m.version, allowlist))
    for section in NPM_SECTIONS:
        deps = doc.get(section)
        if deps is None:
            continue
        if not isinstance(deps, dict):
            m.warnings.append(f"{path}: {section} is not an object; ignored")
            continue
        for key, spec in deps.items():
            if not isinstance(spec, str):
                m.warnings.append(f"{path}: {section}.{key} is not a string; ignored")
                continue
            component, rng, detail = key, spec.strip(), section
            if rng.startswith("npm:"):
                component, rng = _split_alias(rng)
                detail = f"{section} (npm alias {key})"
            if not (_allowed(component, allowlist) or _allowed(key, allowlist)):
                continue
            if rng.startswith("workspace:") or rng in ("*", ""):
                m.pending.append((component, rng, section))
            else:
                m.targets.append(_target(component, rng, parse_npm, detail))
    return m


def _workspace_spec(written: str, version: str) -> str:
    """pnpm/yarn publish-time rewriting: ``workspace:*`` → ``1.5.0``, ``workspace:^`` → ``^1.5.0``, ``workspace:~``
    → ``~1.5.0``, ``workspace:<range>`` → ``<range>``; npm's ``*`` on a workspace package links that package."""
    rest = written[len("workspace:") :] if written.startswith("workspace:") else "*"
    if rest in ("*", ""):
        return version
    if rest in ("^", "~"):
        return rest + version
    return rest


def resolve_workspaces(manifests: dict[str, PackageManifest]) -> dict[str, PackageManifest]:
    """Resolve every pending workspace reference against the repository's own packages (by name)."""
    by_name = {m.name: m for m in manifests.values() if m.name}
    out = {}
    for path, m in manifests.items():
        targets = list(m.targets)
        for component, written, section in m.pending:
            local = by_name.get(component)
            if local is not None and local.version:
                spec = _workspace_spec(written, local.version)
                targets.append(
                    _target(
                        component,
                        spec,
                        parse_npm,
                        f"{section}: {written or '(empty)'} → workspace package {local.path}",
                    )
                )
            else:
                why = (
                    "workspace package not found in this repository"
                    if written.startswith("workspace:")
                    else "wildcard: no version information"
                )
                targets.append(
                    VersionTarget(
                        component=component,
                        constraint=written,
                        origin="manifest",
                        status="unparsed",
                        detail=f"{section}: {why}",
                    )
                )
        out[path] = dataclasses.replace(m, targets=targets, pending=[])
    return out


def manifest_deprecation(m: PackageManifest) -> Deprecation | None:
    """The package.json ``deprecated`` field as a document-scoped deprecation."""
    if not m.deprecated:
        return None
    return Deprecation(
        scope="document", reason=f"package {m.name or m.path} is deprecated: {m.deprecated}", marker="package_json"
    )


# ---------------------------------------------------------------- Cargo
def _cargo_name_allowed(name: str, allowlist) -> bool:
    # crates.io treats '-' and '_' in crate names as the same name
    return _allowed(name, allowlist) or _allowed(name.replace("_", "-"), allowlist)


def _cargo_dep(key: str, spec, section: str, allowlist, path: str, m: CargoManifest) -> None:
    table = {"version": spec} if isinstance(spec, str) else spec
    if not isinstance(table, dict):
        m.warnings.append(f"{path}: {section}.{key} is neither a string nor a table; ignored")
        return
    package = table.get("package")
    # a rename names the crate (``package = "..."``); an empty or non-string one names nothing: the key stands
    component = package if isinstance(package, str) and package else key
    if not (_cargo_name_allowed(component, allowlist) or _cargo_name_allowed(key, allowlist)):
        return
    detail = section if component == key else f"{section} (renamed {key})"
    if table.get("workspace") is True:
        m.pending.append((key, table, section))
    elif isinstance(table.get("version"), str):
        m.targets.append(_target(component, table["version"], parse_cargo, detail))
    else:
        source = "git" if "git" in table else "path" if "path" in table else "unknown"
        m.targets.append(
            VersionTarget(
                component=component,
                constraint="",
                origin="manifest",
                status="unparsed",
                detail=f"{detail}: {source} dependency without a version requirement",
            )
        )


def parse_cargo_toml(data: bytes, path: str, allowlist: list[str] | None = None) -> CargoManifest:
    """``[package]`` name/version, allowlisted ``[dependencies]`` (and ``[target.*.dependencies]``) and, in a
    workspace root, ``[workspace.dependencies]``; dev- and build-dependencies are skipped.  Requirements use
    Cargo's syntax (a bare ``0.5`` is a caret requirement)."""
    allowlist = DEFAULT_CARGO_ALLOWLIST if allowlist is None else allowlist
    try:
        doc = tomllib.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ExtractionError(f"{path}: not UTF-8 (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ExtractionError(f"{path}: invalid TOML: {exc}") from None
    m = CargoManifest(path=path)
    package = doc.get("package") if isinstance(doc.get("package"), dict) else {}
    m.name = package.get("name") if isinstance(package.get("name"), str) else None
    version = package.get("version")
    if isinstance(version, dict) and version.get("workspace") is True:
        m.version_from_workspace = True
    elif isinstance(version, str):
        m.version = version
        m.targets.extend(_own_version(m.name, version, allowlist))
    workspace = doc.get("workspace")
    if isinstance(workspace, dict):
        m.is_workspace_root = True
        members = workspace.get("members", [])
        m.workspace_members = [x for x in members if isinstance(x, str)] if isinstance(members, list) else []
        wpkg = workspace.get("package") if isinstance(workspace.get("package"), dict) else {}
        m.workspace_version = wpkg.get("version") if isinstance(wpkg.get("version"), str) else None
        wdeps = workspace.get("dependencies") if isinstance(workspace.get("dependencies"), dict) else {}
        for key, spec in wdeps.items():
            # a string is a version; a table is kept; anything else (a number, a list) carries no version
            m.workspace_dependencies[key] = (
                {"version": spec} if isinstance(spec, str) else spec if isinstance(spec, dict) else {}
            )
            _cargo_dep(key, spec, "workspace.dependencies", allowlist, path, m)
    sections = [("dependencies", doc.get("dependencies"))]
    targets = doc.get("target") if isinstance(doc.get("target"), dict) else {}
    sections += [
        (f"target.{cfg}.dependencies", t.get("dependencies")) for cfg, t in targets.items() if isinstance(t, dict)
    ]
    for section, deps in sections:
        if deps is None:
            continue
        if not isinstance(deps, dict):
            m.warnings.append(f"{path}: [{section}] is not a table; ignored")
            continue
        for key, spec in deps.items():
            _cargo_dep(key, spec, section, allowlist, path, m)
    return m


def _ancestors(directory: str) -> list[str]:
    out = [directory]
    while directory:
        directory = posixpath.dirname(directory)
        out.append(directory)
    return out


def resolve_cargo_workspace(
    manifests: dict[str, CargoManifest], allowlist: list[str] | None = None
) -> dict[str, CargoManifest]:
    """Resolve ``{ workspace = true }`` dependencies and ``version.workspace = true`` from the workspace root:
    the nearest manifest at or above the member's directory that has a ``[workspace]`` table (Cargo's own
    search)."""
    allowlist = DEFAULT_CARGO_ALLOWLIST if allowlist is None else allowlist
    roots = {_dir(p): m for p, m in manifests.items() if m.is_workspace_root}
    out = {}
    for path, m in manifests.items():
        root = next((roots[d] for d in _ancestors(_dir(path)) if d in roots), None)
        if not m.pending and not m.version_from_workspace:
            out[path] = m
            continue
        targets, warnings, version = list(m.targets), list(m.warnings), m.version
        if m.version_from_workspace:
            if root is not None and root.workspace_version:
                version = root.workspace_version
                targets.extend(_own_version(m.name, version, allowlist))
            else:
                warnings.append(f"{path}: version.workspace = true but no [workspace.package] version found")
        for key, table, section in m.pending:
            entry = root.workspace_dependencies.get(key) if root is not None else None
            component = table.get("package") or (entry or {}).get("package") or key
            if isinstance(entry, dict) and isinstance(entry.get("version"), str):
                targets.append(
                    _target(component, entry["version"], parse_cargo, f"{section}: workspace = true → {root.path}")
                )
            else:
                targets.append(
                    VersionTarget(
                        component=component,
                        constraint="",
                        origin="manifest",
                        status="unparsed",
                        detail=f"{section}: workspace = true, no version in the workspace root",
                    )
                )
        out[path] = dataclasses.replace(m, targets=targets, pending=[], version=version, warnings=warnings)
    return out


# ---------------------------------------------------------------- which manifest governs a file
def _dir(entry: str) -> str:
    entry = posixpath.normpath(entry.strip("/")) if entry.strip("/") else ""
    entry = "" if entry == "." else entry
    return posixpath.dirname(entry) if posixpath.basename(entry) in MANIFEST_NAMES else entry


def nearest_manifest(path: str, manifest_dirs: Iterable[str]) -> str | None:
    """The entry of ``manifest_dirs`` whose directory is the closest ancestor of ``path`` (or None).

    Entries may be manifest paths (``packages/a/package.json``) or directories
    (``packages/a``; ``""`` for the repository root); the entry is returned as
    given.  Paths are repository-relative, ``/``-separated.
    """
    by_dir = {}
    for entry in manifest_dirs:
        by_dir.setdefault(_dir(entry), entry)
    file_dir = posixpath.dirname(posixpath.normpath(path.strip("/")))
    for d in _ancestors("" if file_dir == "." else file_dir):
        if d in by_dir:
            return by_dir[d]
    return None
