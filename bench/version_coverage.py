"""Version-evidence coverage of a docs tree, through the ingest's own evidence (no git, no index).

    python bench/version_coverage.py [DOCS_DIR] [--config-from GIT_DIR] [--components FILE]

DOCS_DIR defaults to ../shared/corpus/midnight-docs (Markdown only: its docusaurus.config.js and
main_versions.json are not in the copy, so ``--config-from`` reads them from a git directory, e.g. the bare
mirror that the search tool's ``fetch`` returns).  ``--components`` (default examples/components.toml) maps
names to canonical ids as a build would.  Prints per top-level folder (the docs, their legacy version, the API
reference, …) and for the whole tree: chunks; the share with a docs version (and which), a language version
(``compact-language``), a component/package target (any other component but ``network``), a network; legacy
chunks; chunks with a fenced pragma; targets by origin; fence/page disagreements; the components seen.  A
chunk "has" a target when its own or its document's rows name that component (as the index reads them).
Nothing of the corpus is written anywhere.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from trustindex.extractors.base import FileContext  # noqa: E402
from trustindex.extractors.markdown import extract_markdown  # noqa: E402
from trustindex.ingest.evidence import SourceEvidence  # noqa: E402
from trustindex.schemas.components import NETWORK, ComponentRegistry, load_components  # noqa: E402
from trustindex.schemas.docs_versions import COMPONENT as DOCS  # noqa: E402
from trustindex.schemas.docs_versions import LEGACY_MARKER  # noqa: E402
from trustindex.schemas.policy import Policy  # noqa: E402

DEFAULT_DOCS = ROOT.parent / "shared" / "corpus" / "midnight-docs"
CONFIG_NAMES = ("docusaurus.config.js", "main_versions.json")


def _configs(git_dir: Path | None) -> dict[str, bytes]:
    if git_dir is None:
        return {}
    out = {}
    for name in CONFIG_NAMES:
        r = subprocess.run(["git", "-C", str(git_dir), "show", f"HEAD:{name}"], capture_output=True, check=False)
        if r.returncode == 0:
            out[name] = r.stdout
    return out


LANGUAGE = "compact-language"


def _chunk_components(targets, n_chunks: int) -> list[set[str]]:
    """Per chunk, the components it has a target for (its own rows override nothing here: presence only)."""
    page = {t.component for t in targets if t.chunk_ordinal is None and t.status == "parsed"}
    own: dict[int, set[str]] = collections.defaultdict(set)
    for t in targets:
        if t.chunk_ordinal is not None and t.status == "parsed":
            own[t.chunk_ordinal].add(t.component)
    return [page | own[i] for i in range(n_chunks)]


def measure(docs: Path, configs: dict[str, bytes], registry: ComponentRegistry | None = None) -> dict:
    registry = registry or ComponentRegistry()
    paths = sorted(p.relative_to(docs).as_posix() for p in docs.rglob("*") if p.suffix in (".md", ".mdx"))
    ev = SourceEvidence(Policy.default(), configs, paths + sorted(configs))
    per_tree: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    comps: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for rel in paths:
        tree = rel.split("/", 1)[0] if "/" in rel else "(root)"
        text = (docs / rel).read_text("utf-8", "replace")
        ex = extract_markdown(text.encode(), FileContext("bench", rel))
        targets = ev.version_targets(rel, "markdown", text, ex)
        for t in targets:
            t.component = registry.canonical(t.component) if t.component not in (DOCS, NETWORK) else t.component
        deps = ev.deprecations(rel, "markdown", text, ex)
        n = len(ex.chunks)
        for c in (per_tree[tree], per_tree["(all)"]):
            c["documents"] += 1
            c["chunks"] += n
            c["fence disagreements"] += sum("disagrees with the page" in t.detail for t in targets)
            for t in targets:
                c[f"targets from {t.origin}"] += 1
            for names in _chunk_components(targets, n):
                c["chunks with a docs version"] += DOCS in names
                c["chunks with a language version"] += LANGUAGE in names
                c["chunks with a component/package target"] += bool(names - {DOCS, NETWORK, LANGUAGE})
                c["chunks with a network"] += NETWORK in names
            for t in targets:
                if t.component == DOCS and t.chunk_ordinal is None:
                    c[f"chunks docs={t.constraint}"] += n
            if any(d.marker == LEGACY_MARKER for d in deps):
                c["legacy chunks"] += n
            c["chunks with a fenced pragma"] += len(
                {t.chunk_ordinal for t in targets if t.origin == "docs_fence" and t.component == LANGUAGE}
            )
        for t in targets:
            if t.component not in (DOCS, NETWORK):
                comps[t.component][t.origin] += 1
    trees = {}
    for name, c in sorted(per_tree.items()):
        row = dict(sorted(c.items()))
        for key in [k for k in row if k.startswith("chunks with") or k == "legacy chunks"]:
            row[f"share {key}"] = round(row[key] / row["chunks"], 4) if row["chunks"] else 0.0
        trees[name] = row
    return {
        "warnings": ev.docs.warnings,
        "trees": trees,
        "components": {k: dict(v) for k, v in sorted(comps.items())},
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("docs", nargs="?", default=str(DEFAULT_DOCS))
    ap.add_argument("--config-from", type=Path, default=None, help="a git directory holding the Docusaurus config")
    ap.add_argument("--components", type=Path, default=ROOT / "examples" / "components.toml")
    a = ap.parse_args(argv)
    docs = Path(a.docs)
    if not docs.is_dir():
        print(f"{docs}: not a directory", file=sys.stderr)
        return 2
    print(json.dumps(measure(docs, _configs(a.config_from), load_components(a.components)), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
