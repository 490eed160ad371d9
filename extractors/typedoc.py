"""TypeDoc's Markdown output → the package and version a generated API page documents.

typedoc-plugin-markdown opens every page it writes with the project's name and version, taken from the generating
package.json, then a ``***`` rule (seen in the Midnight docs' ``api-reference/`` and the legacy ``midnight-api/``)::

    [**@midnight-ntwrk/compact-runtime v0.16.0**](../README.md)          a member page: a link to the README
    **Midnight.js API Reference v4.0.4**                                  the README: the same, bold only

followed by a breadcrumb (``[Midnight.js API Reference](../../../packages.md) / [@midnight-ntwrk/midnight-js-contracts]
(../README.md) / deployContract``).  A project of several packages (a monorepo's "Midnight.js API Reference") puts
each package's pages under a folder named after the package (``@midnight-ntwrk/midnight-js-contracts/``), all at
the project's version.  The page then targets the project (a trailing "API Reference", "API" or "Reference" is not
part of its name: "Midnight.js") and the package.

When the repository holds the generator's configuration (a ``typedoc.json`` with ``out`` beside the package.json it
documents), the pages under ``out`` also target that package at that package.json's version (``TypedocOutputs``),
even when a page's header was trimmed.  Nothing is executed: both files are read as JSON.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass

from trustindex.extractors.base import VersionTarget
from trustindex.schemas.components import name_key
from trustindex.schemas.version_parsers import parse_npm
from trustindex.schemas.versions import VersionSyntaxError

ORIGIN = "typedoc"
CONFIG_NAMES = ("typedoc.json",)
_HEADER = re.compile(
    r"^\s*\[?\*\*(?P<name>[^*\n]+?) v(?P<version>\d+\.\d+\.\d+[0-9A-Za-z.+-]*)\*\*\]?(?:\([^)]*\))?\s*$"
)
_RULE = re.compile(r"^\s*\*\*\*\s*$")
_PACKAGE_DIR = re.compile(r"(?:^|/)(?P<package>@[^/]+/[^/]+)/")
_PACKAGE_CRUMB = re.compile(r"\[(?P<package>@[^\]/\s]+/[^\]\s]+)\]\([^)]*\)")
_PROJECT_SUFFIX = re.compile(r"\s+(?:API\s+Reference|API|Reference|Documentation)\s*$", re.IGNORECASE)
_LEAD_LINES = 8  # the header sits in the first lines (a README puts its own title above it)


def _target(component: str, version: str, detail: str) -> VersionTarget | None:
    try:
        intervals = parse_npm(version).to_json()
    except VersionSyntaxError:
        return None
    return VersionTarget(component, version, ORIGIN, intervals, "parsed", None, detail)


def header_targets(path: str, text: str) -> list[VersionTarget]:
    """The project (and package) a TypeDoc page's header names, at its version; none for other pages."""
    lines = text.splitlines()[:_LEAD_LINES]
    for n, line in enumerate(lines, start=1):
        m = _HEADER.match(line)
        following = next((x for x in lines[n:] if x.strip()), "")
        if not m or not _RULE.match(following):
            continue
        written, version = m["name"].strip(), m["version"]
        project = _PROJECT_SUFFIX.sub("", written) or written
        detail = f"TypeDoc header at line {n}: {written} v{version}"
        out = [_target(project, version, detail)]
        package = _package(path, text)
        if package and name_key(package) != name_key(project):
            out.append(_target(package, version, f"{detail}; package {package} (its pages' folder or breadcrumb)"))
        return [t for t in out if t is not None]
    return []


def _package(path: str, text: str) -> str | None:
    m = _PACKAGE_DIR.search(path)
    if m:
        return m["package"]
    crumb = next((x for x in text.splitlines()[: _LEAD_LINES + 4] if " / " in x), "")
    c = _PACKAGE_CRUMB.search(crumb)
    return c["package"] if c else None


@dataclass(frozen=True)
class _Output:
    folder: str  # the generated pages' folder, relative to the repository root ("" never: a root output is skipped)
    package: str
    version: str
    config: str


class TypedocOutputs:
    """The repository's TypeDoc configurations: which folder of generated pages documents which package."""

    def __init__(self, config_files: Mapping[str, bytes]):
        self.outputs: list[_Output] = []
        self.warnings: list[str] = []
        for path, data in sorted(config_files.items()):
            if posixpath.basename(path) in CONFIG_NAMES:
                self._read(path, data, config_files)

    def _read(self, path: str, data: bytes, files: Mapping[str, bytes]) -> None:
        base = posixpath.dirname(path)
        try:
            config = json.loads(data)
            out = config.get("out") if isinstance(config, dict) else None
            manifest = json.loads(files[posixpath.join(base, "package.json")]) if out else None
        except (ValueError, KeyError) as e:
            self.warnings.append(f"{path}: not read as TypeDoc configuration ({type(e).__name__}: {e})")
            return
        if not isinstance(out, str) or not isinstance(manifest, dict):
            return
        folder = posixpath.normpath(posixpath.join(base, out)).lstrip("/")
        name, version = manifest.get("name"), manifest.get("version")
        if folder in ("", ".") or folder.startswith("..") or not isinstance(name, str) or not isinstance(version, str):
            return
        self.outputs.append(_Output(folder, name, version, path))

    def targets(self, path: str) -> list[VersionTarget]:
        """The package a generated page under a configured ``out`` folder documents."""
        out = []
        for o in self.outputs:
            if path.startswith(o.folder + "/"):
                pkg_json = posixpath.join(posixpath.dirname(o.config), "package.json")
                t = _target(o.package, o.version, f"generated by {o.config} (out {o.folder}/) from {pkg_json}")
                if t is not None:
                    out.append(t)
        return out
