"""Version-evidence coverage of a docs tree, extractor by extractor (no git, no index).

    python bench/version_coverage.py [DOCS_DIR] [--config-from GIT_DIR]

DOCS_DIR defaults to ../shared/corpus/midnight-docs (Markdown only: its docusaurus.config.js and
main_versions.json are not in the copy, so ``--config-from`` reads them from a git directory, e.g. the bare
mirror that the search tool's ``fetch`` returns; without it the real files' shape is assumed from DESIGN.md).
Prints per tree: chunks, share with a docs version (and which), legacy chunks, chunks with a chunk-scoped
``compact-language`` target from a fence, documents with any ``compact-language`` target, fence/page
disagreements.  Nothing of the corpus is written anywhere.
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
from trustindex.extractors.docs_fences import fence_pragma_targets, record_disagreements  # noqa: E402
from trustindex.extractors.docs_versions import (  # noqa: E402
    docs_version_deprecations,
    docs_version_targets,
    load_docs_versions,
)
from trustindex.extractors.markdown import extract_markdown  # noqa: E402
from trustindex.extractors.version_stamps import extract_stamps  # noqa: E402

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


def measure(docs: Path, configs: dict[str, bytes]) -> dict:
    paths = sorted(p.relative_to(docs).as_posix() for p in docs.rglob("*") if p.suffix in (".md", ".mdx"))
    dv = load_docs_versions(paths + sorted(configs), configs)
    per_tree: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for rel in paths:
        tree = rel.split("/", 1)[0] if "/" in rel else "(root)"
        c = per_tree[tree]
        text = (docs / rel).read_text("utf-8", "replace")
        ex = extract_markdown(text.encode(), FileContext("bench", rel))
        n = len(ex.chunks)
        c["documents"] += 1
        c["chunks"] += n
        [docs_t] = docs_version_targets(rel, dv) or [None]
        if docs_t is not None:
            c[f"chunks docs={docs_t.constraint}"] += n
        if docs_version_deprecations(rel, dv):
            c["legacy chunks"] += n
        fenced, _ = fence_pragma_targets(text, ex.chunks)
        stamps = extract_stamps(text, ex.chunks)
        _, disagreements = record_disagreements(stamps + fenced)
        c["fence disagreements"] += len(disagreements)
        c["chunks with a fence compact-language target"] += len(
            {t.chunk_ordinal for t in fenced if t.component == "compact-language"}
        )
        if any(t.component == "compact-language" for t in fenced + stamps):
            c["documents with a compact-language target"] += 1
    return {"warnings": dv.warnings, "trees": {k: dict(v) for k, v in sorted(per_tree.items())}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("docs", nargs="?", default=str(DEFAULT_DOCS))
    ap.add_argument("--config-from", type=Path, default=None, help="a git directory holding the Docusaurus config")
    a = ap.parse_args(argv)
    docs = Path(a.docs)
    if not docs.is_dir():
        print(f"{docs}: not a directory", file=sys.stderr)
        return 2
    print(json.dumps(measure(docs, _configs(a.config_from)), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
