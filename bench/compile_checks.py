"""Compile checks on the real Midnight docs: per compiler, checked / passed / rejected / timed out, and what the
fragment wrapping adds (docs/benchmarks.md, "Compile checks").

    python bench/compile_checks.py COMPACTC [COMPACTC ...] [--docs ../shared/corpus/midnight-docs]
        [--standalone]   # also every compact fence as written, with the first compiler
        [--git DIR ...]  # every .compact file (with its imports, from blobs) and docs fence of a git repository at
                         # HEAD, as a refresh selects them (ingest.compile_checks.select_checks)

Each COMPACTC is a runnable compiler (an installed one, or ``<data>/compilers/<tag>+chez-<v>/obj/compactc``, which
``trustindex compilers build`` makes).  Runs in the compile sandbox (ingest.compile_runner), one check at a time.
The wrapping's false-pass probe: every wrapped fragment that passes is compiled again with a call of an
undefined circuit appended; a pass of that would mean the wrapping hides errors.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections import Counter
from pathlib import Path

import git

from trustindex.crawl.git import list_tree
from trustindex.extractors.compact_program import checkable_fences
from trustindex.extractors.docs_fences import fences
from trustindex.ingest.compile_checks import select_checks
from trustindex.ingest.compile_runner import Limits, compile_text, identify
from trustindex.schemas.compilers import KIND_WRAPPED
from trustindex.schemas.tables import table_from_rows

ROOT = Path(__file__).resolve().parents[1]
PROBE = "\nexport circuit ti_probe(): [] { ti_undefined_circuit(); }\n"


def _docs(root: Path):
    for p in sorted(root.rglob("*")):
        if p.suffix in (".md", ".mdx") and p.is_file():
            yield p.relative_to(root).as_posix(), p.read_text("utf-8", "replace")


def _git_items(git_dir: Path) -> list:
    """The checks a refresh makes of a repository at HEAD (its .compact files and Markdown pages)."""
    repo = git.Repo(git_dir)
    commit = repo.head.commit.hexsha
    paths = [e.path for e in list_tree(repo, commit) if e.path.endswith((".compact", ".md", ".mdx"))]
    paths = [p for p in paths if "node_modules/" not in p]
    docs = table_from_rows("documents", [{"doc_id": p, "path": p} for p in paths])
    tables = {"documents": docs, "chunks": table_from_rows("chunks", [])}
    items, _skipped = select_checks(repo, commit, git_dir.parent.name, tables)
    return [(f"{git_dir.parent.name}/{i.path}", i.files, i.main, i.kind == KIND_WRAPPED) for i in items]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("compilers", nargs="+")
    ap.add_argument("--docs", default=str(ROOT.parent / "shared" / "corpus" / "midnight-docs"))
    ap.add_argument("--standalone", action="store_true")
    ap.add_argument("--git", action="append", default=[])
    ap.add_argument("--skip-docs", action="store_true")
    a = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="ti-compile-bench-"))
    limits = Limits(seconds=30)
    compilers = [([c], identify([c], scratch)) for c in a.compilers]
    docs = list(_docs(Path(a.docs)))
    all_compact = [f.code for _p, text in docs for f in fences(text) if f.tag == "compact"]
    if a.skip_docs:
        docs, all_compact = [], []
    items = [
        (p, {"contract.compact": code.encode()}, "contract.compact", wrapped)
        for p, text in docs
        for _a, _b, code, wrapped in checkable_fences(text)
    ]
    for repo in a.git:
        items += _git_items(Path(repo))
    out: dict = {
        "load_average": os.getloadavg(),
        "compact_fences": len(all_compact),
        "whole_programs": sum(1 for p, _f, _m, w in items if not w and not p.endswith(".compact")),
        "compact_files": sum(1 for p, _f, _m, _w in items if p.endswith(".compact")),
        "wrappable_fragments": sum(1 for _p, _f, _m, w in items if w),
        "per_compiler": {},
    }
    for argv, ident in compilers:
        counts: dict[str, Counter] = {"whole": Counter(), "file": Counter(), "wrapped": Counter()}
        seconds, probe_passes, rejected_reasons = [], 0, Counter()
        for path, files, name, wrapped in items:
            kind = "wrapped" if wrapped else ("file" if path.endswith(".compact") else "whole")
            r = compile_text(argv, files, name, limits, scratch)
            counts[kind][r.outcome] += 1
            seconds.append(r.seconds)
            if r.outcome == "rejected" and kind != "wrapped":
                rejected_reasons[r.reason.split(": ", 2)[-1][:60]] += 1
            if wrapped and r.outcome == "passed":
                p = compile_text(argv, {name: files[name] + PROBE.encode()}, name, limits, scratch)
                probe_passes += p.outcome == "passed"
        entry = {k: dict(v) for k, v in counts.items()}
        entry["wrapped_probe_false_passes"] = probe_passes
        entry["seconds_per_check_mean"] = round(sum(seconds) / max(1, len(seconds)), 3)
        entry["top_rejections"] = rejected_reasons.most_common(4)
        out["per_compiler"][ident.key] = entry
        print(ident.key, json.dumps(entry), flush=True)
    if a.standalone:
        argv, ident = compilers[0]
        started = time.monotonic()
        got = Counter(
            compile_text(argv, {"c.compact": c.encode()}, "c.compact", limits, scratch).outcome for c in all_compact
        )
        out["standalone_as_written"] = {
            "compiler": ident.key,
            **dict(got),
            "seconds": round(time.monotonic() - started),
        }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
