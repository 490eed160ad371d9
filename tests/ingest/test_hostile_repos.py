"""Hostile repositories: every odd tree entry ends as one clean report row, and nothing escapes.

The repositories are built from git plumbing (``RawRepo``) so that a test can
write what a hostile remote can serve but a porcelain refuses: any path bytes,
symlinks and gitlinks that are never materialised, ``.git``/``..`` tree
entries, duplicate names, commit headers with broken dates and non-UTF-8 names.
Rules under test: crawl/git.py, crawl/history.py, ingest/files.py and the
report contract of ingest/source.py (every tree entry is ingested, skipped with
a rule, or failed with a stage and reason; one bad file never fails a source).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.kits.rawrepo import CASES, DEEP, DUPLICATE, SECRET, RawRepo, build_hostile_repo, ingest
from trustindex.crawl.git import SourceError, decode_path, ensure_mirror, mirror_path
from trustindex.crawl.history import read_log
from trustindex.extractors.base import ExtractionError, FileContext
from trustindex.ingest.dispatch import extractor_for, kind_of


def report_rows(result) -> dict[str, dict]:
    return {r["path"]: r for r in result.tables["ingest_report"].to_pylist()}


# --- the hostile tree -------------------------------------------------------------------------


CASE_PARAMS = [pytest.param(c, id=c[0]) for c in CASES]


def case_path(case) -> str:
    return decode_path(case[2])[0] if isinstance(case[2], bytes) else case[2]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """The hostile repository, ingested once."""
    tmp = tmp_path_factory.mktemp("hostile")
    repo, head = build_hostile_repo(tmp)
    t0 = time.perf_counter()
    result = ingest(repo.path, tmp / "data")
    return {
        "repo": repo,
        "head": head,
        "result": result,
        "seconds": time.perf_counter() - t0,
        "data": tmp / "data",
        "rows": report_rows(result),
    }


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_hostile_entry_ends_as_one_clean_row(hostile, case):
    _cid, _mode, _path, _content, status, rule_or_stage, reason = case
    row = hostile["rows"][case_path(case)]
    assert row["status"] == status, row
    if status == "skipped":
        assert (row["rule"], row["stage"]) == (rule_or_stage, ""), row
    elif status == "failed":
        assert (row["rule"], row["stage"]) == ("", rule_or_stage), row
    else:
        assert (row["rule"], row["stage"]) == ("", ""), row
    assert reason in row["reason"], row


def test_duplicate_tree_entry_is_one_row_and_neither_content_is_read(hostile):
    assert hostile["repo"].paths(hostile["head"]).count(DUPLICATE) == 2  # the tree really lists it twice
    assert [r for r in hostile["result"].tables["ingest_report"].to_pylist() if r["path"] == DUPLICATE] == [
        {
            "source": "h",
            "commit": hostile["head"],
            "path": DUPLICATE,
            "status": "skipped",
            "rule": "duplicate_path",
            "stage": "",
            "reason": "",
        }
    ]
    assert DUPLICATE not in hostile["result"].tables["documents"].column("path").to_pylist()


def test_hostile_tree_is_ingested_quickly(hostile):
    assert hostile["seconds"] < 20


def test_weird_paths_are_stored_exactly(hostile):
    docs = {d["path"]: d for d in hostile["result"].tables["documents"].to_pylist()}
    for path in (
        "docs/new\nline.md",
        "docs/quo\"te's.md",
        "docs/déjà vu/日本語.md",
        "docs/tab\there\\x.md",
        "--upload-pack=touch PWNED.md",
        "docs/with space.md",
    ):
        assert path in docs
        assert docs[path]["commit"] == hostile["head"]
    assert not Path("PWNED.md").exists() and not (hostile["data"] / "PWNED.md").exists()


def _all_strings(tables) -> list[str]:
    out = []
    for t in tables.values():
        for col in t.columns:
            for v in col.to_pylist():
                if isinstance(v, str):
                    out.append(v)
                elif isinstance(v, list):
                    out.extend(x for x in v if isinstance(x, str))
    return out


def test_symlinks_and_submodules_are_never_followed(hostile):
    strings = _all_strings(hostile["result"].tables)
    assert strings and not any(SECRET in s for s in strings)
    mirror = mirror_path(hostile["data"], "h")
    assert not (mirror / "modules").exists()  # no submodule was cloned into the mirror
    assert sorted(p.name for p in (hostile["data"] / "mirrors").iterdir()) == ["h.git"]
    # A bare mirror: no working tree where a symlink could have been materialised.
    assert not any(p.is_symlink() for p in mirror.rglob("*"))


@pytest.mark.parametrize("path", list(DEEP), ids=[Path(p).name for p in DEEP])
def test_pathological_input_extracts_or_fails_cleanly_within_two_seconds(path):
    ctx = FileContext(source="h", path=path)
    t0 = time.perf_counter()
    try:
        ex = extractor_for(kind_of(path))(DEEP[path], ctx)
        assert ex.chunks
        assert all(c.token_count <= ctx.max_tokens for c in ex.chunks)
    except ExtractionError as e:
        assert str(e)
    assert time.perf_counter() - t0 < 2.0


# --- hostile commit metadata ----------------------------------------------------------------------


def test_hostile_commit_headers_and_messages_do_not_break_history(tmp_path):
    """Non-UTF-8 names, separator bytes that once forged a log record, and dates git cannot print."""
    repo = RawRepo(tmp_path / "r")
    base = [(0o100644, "a.md", b"# A\n\none\n")]
    c1 = repo.commit(base, when=1736155800)
    forged = (
        b"subject \xfe\n\nbody\x1e0000000000000000000000000000000000000000\x1f\x1f"
        b"Ada\x1fada@midnight.example\x1f2030-01-01T00:00:00+00:00\x1f1893456000\x1f"
    )
    b_entry = (0o100644, "b.md", b"# B\n\ntwo\n")
    c2 = repo.commit(
        base + [b_entry],
        author=b"Ev\xff\xfee <eve@evil.example>",
        author_date=b"abc +0000",
        committer_date=b"1738368000 +0000",
        raw_message=forged,
    )
    c3 = repo.commit(
        [(0o100644, "a.md", b"# A\n\none changed\n"), b_entry],
        author_date=b"99999999999999 +0000",
        committer_date=b"1740787200 +9959",
    )
    c4 = repo.commit(
        [(0o100644, "a.md", b"# A\n\none changed\n"), b_entry, (0o100644, "c.md", b"# C\n")], when=1743465600
    )
    result = ingest(repo.path, tmp_path / "data")
    rows = report_rows(result)
    assert {p: r["status"] for p, r in rows.items()} == {"a.md": "ingested", "b.md": "ingested", "c.md": "ingested"}

    log = read_log(ensure_mirror(str(repo.path), mirror_path(tmp_path / "data", "h")), c4)
    assert [c.sha for c in log] == [c4, c3, c2, c1]  # the \x1e/\x1f in c2's message forged nothing
    assert all("ada@midnight.example" not in (c.author_email, c.committer_email) for c in log)
    by = {c.sha: c for c in log}
    assert by[c2].author_date == by[c2].commit_date == datetime(2025, 2, 1, tzinfo=UTC)
    assert "\ufffd" in by[c2].author_name and "\x1e" in by[c2].message
    assert by[c3].commit_date.astimezone(UTC) == datetime(2025, 3, 1, tzinfo=UTC)

    docs = {d["path"]: d for d in result.tables["documents"].to_pylist()}
    assert docs["b.md"]["last_modified_commit"] == c2  # the commit the forged bytes tried to hide
    assert docs["a.md"]["last_modified_commit"] == c3
    attr = {r["doc_id"]: r for r in result.tables["attribution"].to_pylist()}
    assert attr[docs["b.md"]["doc_id"]]["author_name"] == "Ev\ufffd\ufffde"  # c2's Latin-1 name, replaced
    assert result.tables["verifications"].num_rows == 0


def test_unreadable_date_on_the_head_commit_does_not_fail_the_source(tmp_path):
    repo = RawRepo(tmp_path / "r")
    repo.commit([(0o100644, "a.md", b"# A\n")], committer_date=b"abc +0000", author_date=b"abc +0000")
    rows = report_rows(ingest(repo.path, tmp_path / "data"))
    assert rows["a.md"]["status"] == "ingested"


# --- sources that cannot be read at all -----------------------------------------------------------


def _empty(tmp: Path) -> tuple[str, str]:
    RawRepo(tmp / "empty")
    return str(tmp / "empty"), "main"


def _one_commit(tmp: Path) -> RawRepo:
    repo = RawRepo(tmp / "one")
    repo.commit([(0o100644, "a.md", b"# A\n")])
    return repo


SOURCE_FAILURES = [
    ("empty_repository", _empty, "the repository is empty"),
    (
        "ref_does_not_exist",
        lambda tmp: (str(_one_commit(tmp).path), "release/v9-does-not-exist"),
        "no such ref 'release/v9-does-not-exist'",
    ),
    ("path_does_not_exist", lambda tmp: (str(tmp / "nowhere"), "main"), "does not exist"),
    (
        "directory_not_a_repository",
        lambda tmp: ("file://" + str(tmp), "main"),
        "does not appear to be a git repository",
    ),
    ("https_unreachable", lambda tmp: ("https://127.0.0.1:9/x.git", "main"), "unable to access"),
    ("git_protocol_unreachable", lambda tmp: ("git://127.0.0.1:9/x.git", "main"), "unable to connect"),
    (
        "ext_transport_command",
        lambda tmp: (f"ext::sh -c touch% {tmp}/EXT-PWNED", "main"),
        "transport 'ext' not allowed",
    ),
]


@pytest.mark.parametrize("make, fragment", [c[1:] for c in SOURCE_FAILURES], ids=[c[0] for c in SOURCE_FAILURES])
def test_unreadable_source_fails_with_a_clear_message(tmp_path, make, fragment):
    url, ref = make(tmp_path)
    t0 = time.perf_counter()
    with pytest.raises(SourceError) as e:
        ingest(url, tmp_path / "data", ref=ref)
    assert fragment in str(e.value)
    assert url in str(e.value)
    assert "\n" not in str(e.value)
    assert time.perf_counter() - t0 < 10
    assert not (tmp_path / "EXT-PWNED").exists()
    # A failed first clone leaves no half-made mirror that a later run would trust.
    mirrors = tmp_path / "data" / "mirrors"
    leftovers = [p.name for p in mirrors.iterdir()] if mirrors.exists() else []
    assert leftovers in ([], ["h.git"]) and (not leftovers or fragment.startswith(("the repository", "no such")))
