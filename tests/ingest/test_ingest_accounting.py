"""Nothing lost: every tree entry ends in ``ingest_report`` exactly once, and a bad source fails alone.

ingest/source.py's contract: every path of ``git ls-tree -r`` at the commit
ends as ingested, skipped (with the rule that skipped it) or failed (with the
stage and the reason), and only ingested paths have documents.  flows/refresh.py's
contract: a source that cannot be fetched is retried (git failures are
transient), then reported failed while the others publish; a source that
fails after a good run keeps serving its last good tables.  ``trustindex
report --json`` shows both.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from tests.kits.rawrepo import IDS, POLICY, RawRepo, build_hostile_repo, ingest
from trustindex.ingest.incremental import Previous
from trustindex.schemas.embedding_model import Backend
from trustindex.schemas.tables import PER_DOCUMENT_TABLES

STATUSES = {"ingested", "skipped", "failed"}
STAGES = {"read", "extract", "manifest", "evidence"}


def accounting_problems(paths: list[str], result) -> list[str]:
    """What breaks "every path exactly once, with a valid status" (empty when sound)."""
    rows = result.tables["ingest_report"].to_pylist()
    problems = []
    counts = Counter(r["path"] for r in rows)
    problems += [f"{p!r}: {n} rows" for p, n in counts.items() if n != 1]
    missing, extra = set(paths) - set(counts), set(counts) - set(paths)
    problems += [f"{p!r}: no row" for p in sorted(missing)] + [f"{p!r}: not in the tree" for p in sorted(extra)]
    for r in rows:
        ok = {
            "ingested": not r["rule"] and not r["stage"],
            "skipped": bool(r["rule"]) and not r["stage"] and not r["reason"],
            "failed": not r["rule"] and r["stage"] in STAGES and bool(r["reason"]),
        }.get(r["status"], False)
        if not ok or r["commit"] != result.commit:
            problems.append(f"{r['path']!r}: bad row {r}")
    ingested = {r["path"] for r in rows if r["status"] == "ingested"}
    docs = result.tables["documents"].column("path").to_pylist()
    if sorted(docs) != sorted(ingested):
        problems.append(f"documents {sorted(set(docs) ^ ingested)} differ from the ingested rows")
    doc_ids = set(result.tables["documents"].column("doc_id").to_pylist())
    for name in PER_DOCUMENT_TABLES:
        orphans = set(result.tables[name].column("doc_id").to_pylist()) - doc_ids
        if orphans:
            problems.append(f"{name}: rows for no document {sorted(orphans)[:3]}")
    return problems


def _unique(paths: list[str]) -> list[str]:
    return sorted(set(paths))  # a duplicated tree entry is one path (rule duplicate_path)


# --- repositories, each with the source settings that ingest it --------------------------------


def _hostile(tmp: Path):
    repo, head = build_hostile_repo(tmp)
    return repo, head, {}


def _rules(tmp: Path):
    repo = RawRepo(tmp / "rules")
    head = repo.commit(
        [
            (0o100644, p, b"# Page\n\ntext\n")
            for p in ("docs/a.md", "docs/drafts/wip.md", "docs/img.svg", "README.md", "src/x.ts", "blog/2024/post.mdx")
        ]
    )
    return repo, head, {"include": ("docs/**/*.md", "**/*.ts"), "exclude": ("**/drafts/**",)}


def _manifests(tmp: Path):
    repo = RawRepo(tmp / "manifests")
    head = repo.commit(
        [
            (
                0o100644,
                "package.json",
                b'{"name": "root", "workspaces": ["pkg/*"], "dependencies": '
                b'{"@midnight-ntwrk/compact-runtime": "^0.8.1"}}',
            ),
            (0o100644, "pkg/a/package.json", b'{"name": "a", "dependencies": {"@midnight-ntwrk/x": "workspace:*"'),
            (0o100644, "pkg/a/index.ts", b"export const a = 1;\n"),
            (
                0o100644,
                "crates/c/Cargo.toml",
                b'[package]\nname = "c"\nversion = "0.1.0"\n[dependencies]\nmidnight-ledger = { version = ">=1.2',
            ),
            (0o100644, "crates/c/src/lib.rs", b"pub fn c() {}\n"),
            (0o100644, "versions.json", b'["2.0", '),
            (0o100644, "docs/guide.md", b"# Guide\n"),
        ]
    )
    return repo, head, {"include": ("**/*",)}


def _everything_fails(tmp: Path):
    repo = RawRepo(tmp / "fails")
    head = repo.commit([(0o100644, f"docs/{i}.md", b"# \xff\xfe bad " + bytes([i])) for i in range(5)])
    return repo, head, {}


REPOS = [
    ("hostile_tree", _hostile),
    ("include_and_exclude_rules", _rules),
    ("malformed_manifests_fail_alone", _manifests),
    ("every_file_fails_source_does_not", _everything_fails),
]


@pytest.mark.parametrize("build", [b for _n, b in REPOS], ids=[n for n, _b in REPOS])
def test_every_tree_path_is_reported_exactly_once(tmp_path, build):
    repo, head, settings = build(tmp_path)
    settings = {"include": ("**/*",), **settings}
    result = ingest(repo.path, tmp_path / "data", **settings)
    assert result.commit == head
    assert accounting_problems(_unique(repo.paths(head)), result) == []


def test_rules_name_why_each_path_was_skipped(tmp_path):
    repo, head, settings = _rules(tmp_path)
    rows = {r["path"]: r for r in ingest(repo.path, tmp_path / "data", **settings).tables["ingest_report"].to_pylist()}
    assert {p: (r["status"], r["rule"]) for p, r in rows.items()} == {
        "docs/a.md": ("ingested", ""),
        "src/x.ts": ("ingested", ""),
        "docs/drafts/wip.md": ("skipped", "excluded:**/drafts/**"),
        "docs/img.svg": ("skipped", "not_included"),
        "README.md": ("skipped", "not_included"),
        "blog/2024/post.mdx": ("skipped", "not_included"),
    }


def test_a_malformed_manifest_fails_alone_and_the_files_beneath_it_are_ingested(tmp_path):
    repo, head, settings = _manifests(tmp_path)
    rows = {r["path"]: r for r in ingest(repo.path, tmp_path / "data", **settings).tables["ingest_report"].to_pylist()}
    failed = {p: r["stage"] for p, r in rows.items() if r["status"] == "failed"}
    assert failed == {"pkg/a/package.json": "manifest", "crates/c/Cargo.toml": "manifest"}
    for p in ("package.json", "pkg/a/index.ts", "crates/c/src/lib.rs", "docs/guide.md"):
        assert rows[p]["status"] == "ingested", rows[p]


def _rewrite(repo: RawRepo, commit: str, drop=(), change: dict | None = None, when: int = 1736242200) -> str:
    """A new commit: the tree of ``commit`` without ``drop``, with ``change`` (path -> (mode, content)) applied."""
    change = dict(change or {})
    entries = []
    for rec in repo.git("ls-tree", "-r", "-z", "--full-tree", commit).split(b"\0"):
        if not rec:
            continue
        meta, _, path = rec.partition(b"\t")
        mode, _typ, sha = meta.split()
        if path in drop:
            continue
        if path in change:
            mode, content = change.pop(path)
        else:
            mode = int(mode, 8)
            content = sha.decode() if mode == 0o160000 else repo.git("cat-file", "blob", sha.decode())
        entries.append((mode, path, content))
    entries += [(m, p, c) for p, (m, c) in change.items()]  # new paths
    return repo.commit(entries, message="next", when=when)


MANIFESTS = (b"package.json", b"crates/x/Cargo.toml")


def test_incremental_refresh_keeps_the_accounting_exact(tmp_path):
    """Carried rows, re-extracted rows, deletions and a file turned into a symlink: still one row each."""
    repo, hostile = build_hostile_repo(tmp_path)
    c1 = _rewrite(repo, hostile, drop=MANIFESTS)  # failing manifests: see the test below
    first = ingest(repo.path, tmp_path / "data", commit=c1)
    c2 = _rewrite(
        repo,
        c1,
        drop=(b"docs/fm.md", b"docs/dup.md"),
        change={
            b"docs/with space.md": (0o100644, b"# Space\n\nchanged substantively\n"),
            b"docs/quo\"te's.md": (0o120000, b"/etc/passwd"),
            b"docs/new.md": (0o100644, b"# New\n"),
        },
        when=1736328600,
    )
    second = ingest(repo.path, tmp_path / "data", previous=Previous(first.commit, first.tables))
    assert second.commit == c2 and second.note.startswith("incremental"), second.note
    assert accounting_problems(_unique(repo.paths(c2)), second) == []
    rows = {r["path"]: r for r in second.tables["ingest_report"].to_pylist()}
    assert rows["docs/quo\"te's.md"]["rule"] == "symlink"
    assert rows["docs/new.md"]["status"] == "ingested" and "docs/fm.md" not in rows


def test_incremental_refresh_reports_a_failing_manifest_once(tmp_path):
    repo = RawRepo(tmp_path / "r")
    c1 = repo.commit([(0o100644, "package.json", b'{"name": '), (0o100644, "docs/a.md", b"# A\n")])
    first = ingest(repo.path, tmp_path / "data")
    c2 = _rewrite(repo, c1, change={b"docs/a.md": (0o100644, b"# A\n\nchanged\n")})
    second = ingest(repo.path, tmp_path / "data", previous=Previous(first.commit, first.tables))
    assert second.note.startswith("incremental")
    assert accounting_problems(_unique(repo.paths(c2)), second) == []


# --- one failing source among others, through the Prefect flow -------------------------------------


def _refresh(sources, data: Path):
    from trustindex.flows.refresh import refresh_flow
    from trustindex.schemas.config import BuildConfig
    from trustindex.schemas.refresh_run import RefreshRequest

    # The reference backend: one in-process model load, no ONNX export when this file runs alone.
    request = RefreshRequest(str(data), backend=Backend.SENTENCE_TRANSFORMERS)
    state = refresh_flow(BuildConfig(sources, IDS, [], POLICY), request, return_state=True)
    return state.result(), _run_counts(state.state_details.flow_run_id)


def _run_counts(flow_run_id) -> list[int]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId, TaskRunFilter, TaskRunFilterName

    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])),
            task_run_filter=TaskRunFilter(name=TaskRunFilterName(like_="source")),
        )
    return sorted(r.run_count for r in runs)


def _report_json(data: Path, capsys) -> dict:
    from trustindex.cli.main import main

    capsys.readouterr()
    assert main(["report", "--json", "--data", str(data)]) == 0
    return json.loads(capsys.readouterr().out)


def test_failing_sources_fail_alone_retried_reported_and_the_last_good_tables_serve(prefect_harness, tmp_path, capsys):
    from trustindex.schemas.config import Source

    good, flaky = RawRepo(tmp_path / "good"), RawRepo(tmp_path / "flaky")
    good.commit([(0o100644, "docs/good.md", b"# Good\n\nThe good source publishes.\n")])
    flaky.commit([(0o100644, "docs/flaky.md", b"# Flaky\n\nServed from its last good tables.\n")])
    missing = tmp_path / "no-such-repo"
    sources = [
        Source("good", str(good.path), "main", "p"),
        Source("flaky", str(flaky.path), "main", "p"),
        Source("missing", str(missing), "main", "p"),
    ]
    data = tmp_path / "data"

    first, counts = _refresh(sources, data)
    assert counts == [1, 1, 3]  # the missing source was tried three times (two retries), the others once
    assert set(first.failures) == {"missing"} and "does not exist" in first.failures["missing"]
    assert first.published

    shutil.move(flaky.path, tmp_path / "flaky-gone")  # the remote disappears between runs
    second, counts = _refresh(sources, data)
    assert counts == [1, 3, 3]
    rows = {s.source: s for s in second.sources}
    assert (rows["good"].status, rows["flaky"].status, rows["missing"].status) == ("ok", "failed", "failed")
    assert "serving its last good tables" in rows["flaky"].note
    assert rows["flaky"].commit == first.sources[1].commit
    assert rows["missing"].note == "failed; no earlier tables to serve"

    report = _report_json(data, capsys)
    assert report["snapshot_id"] == second.snapshot_id
    srcs = {s["source"]: s for s in report["sources"]}
    assert srcs["missing"]["status"] == "failed" and str(missing) in srcs["missing"]["error"]
    assert srcs["flaky"]["status"] == "failed" and "cannot fetch" in srcs["flaky"]["error"]
    assert srcs["good"] == {"source": "good", "commit": rows["good"].commit, "status": "ok", "error": None}
    files = {(f["source"], f["path"]): f["status"] for f in report["files"]}
    assert files == {("good", "docs/good.md"): "ingested", ("flaky", "docs/flaky.md"): "ingested"}
