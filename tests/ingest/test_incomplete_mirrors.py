"""Mirrors that lack objects: a damaged copy fails only the files whose blobs are gone, and a partial
clone (``blob_limit``) never downloads the blobs it left out."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.kits.gitutil import RepoBuilder
from tests.kits.rawrepo import IDS, POLICY
from trustindex.crawl.git import BlobReadError, ensure_mirror, mirror_path, missing_objects, open_mirror, read_blob
from trustindex.extractors.base import approx_token_count
from trustindex.ingest.source import IngestRun, ingest_source
from trustindex.schemas.config import ConfigError, Source, load_sources

DOC = "# {t}\n\nHow to {t} with the Compact toolchain, step by step.\n"


def _report(result) -> dict[str, dict]:
    return {r["path"]: r for r in result.tables["ingest_report"].to_pylist()}


def _git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_NO_LAZY_FETCH="1")
    return subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, text=True).stdout


def _source(url: str, **kw) -> Source:
    return Source("docs", url, "main", "p", include=("**/*.md",), **kw)


def test_a_missing_blob_fails_its_file_alone_at_read(tmp_path):
    b = RepoBuilder(tmp_path / "src")
    b.commit({"docs/a.md": DOC.format(t="install"), "docs/b.md": DOC.format(t="deploy")}, "docs")
    b.commit({"docs/b.md": DOC.format(t="deploy a contract"), "docs/c.md": DOC.format(t="test")}, "more docs")
    # a file:// URL copies the objects (a plain path borrows them through git alternates): this copy gets damaged
    source = _source((tmp_path / "src").as_uri())
    dest = mirror_path(tmp_path / "data", source.name)
    ensure_mirror(source.url, dest)
    # Loose objects, so one blob can be taken away as a damaged copy loses it.
    for pack in (dest / "objects" / "pack").glob("*.pack"):
        moved = tmp_path / pack.name
        shutil.move(pack, moved)
        pack.with_suffix(".idx").unlink()
        subprocess.run(["git", "-C", str(dest), "unpack-objects", "-q"], stdin=moved.open("rb"), check=True)
    gone = _git(dest, "rev-parse", "main:docs/b.md").strip()
    (dest / "objects" / gone[:2] / gone[2:]).unlink()

    repo = open_mirror(dest)
    assert missing_objects(repo, "main") == {gone}
    result = ingest_source(source, tmp_path / "data", IDS, [], POLICY, approx_token_count, IngestRun(repo=repo))

    report = _report(result)
    assert report["docs/b.md"]["status"] == "failed" and report["docs/b.md"]["stage"] == "read"
    assert gone in report["docs/b.md"]["reason"] and "not in the mirror" in report["docs/b.md"]["reason"]
    assert {p for p, r in report.items() if r["status"] == "ingested"} == {"docs/a.md", "docs/c.md"}
    assert sorted(result.tables["documents"].column("path").to_pylist()) == ["docs/a.md", "docs/c.md"]
    with pytest.raises(BlobReadError, match=gone):
        read_blob(repo, gone)
    assert read_blob(repo, _git(dest, "rev-parse", "main:docs/a.md").strip()).startswith(b"# install")


def test_blob_limit_clones_partially_and_never_downloads_what_it_left_out(tmp_path):
    b = RepoBuilder(tmp_path / "src")
    big_v1 = "# Big\n\n" + "A long generated reference table row.\n" * 2000
    b.commit({"docs/a.md": DOC.format(t="install"), "docs/big.md": big_v1}, "docs")
    b.commit({"docs/a.md": DOC.format(t="install on a mac"), "docs/big.md": big_v1 + "One more row.\n"}, "grow")
    b.repo.git.config("uploadpack.allowFilter", "true")
    source = _source((tmp_path / "src").resolve().as_uri(), blob_limit=10_000)
    data = tmp_path / "data"

    result = ingest_source(source, data, IDS, [], POLICY, approx_token_count)

    dest = mirror_path(data, source.name)
    assert _git(dest, "config", "remote.origin.partialclonefilter").strip() == "blob:limit=10000"
    big_now = _git(dest, "rev-parse", "main:docs/big.md").strip()
    assert big_now in missing_objects(open_mirror(dest), "main")
    report = _report(result)
    assert report["docs/big.md"]["status"] == "skipped"
    assert report["docs/big.md"]["rule"] == "too_large:>=10000 (blob_limit)"
    assert report["docs/a.md"]["status"] == "ingested"
    # The read left the promisor's blobs where they were: nothing was fetched on demand.
    assert big_now in missing_objects(open_mirror(dest), "main")
    assert _git(dest, "cat-file", "-e", big_now) == "" and not (dest / "objects" / big_now[:2] / big_now[2:]).exists()
    with pytest.raises(BlobReadError):
        read_blob(open_mirror(dest), big_now)

    # A second refresh fetches into the partial mirror with the filter it recorded.
    b.commit({"docs/big.md": big_v1 + "Two more rows.\n"}, "grow again")
    repo = ensure_mirror(source.url, dest, source.blob_limit)
    newer = _git(dest, "rev-parse", "main:docs/big.md").strip()
    assert newer != big_now and newer in missing_objects(repo, "main")


def test_blob_limit_is_a_positive_number_of_bytes(tmp_path):
    f = tmp_path / "sources.toml"
    f.write_text('[[source]]\nname = "d"\nurl = "d"\npublisher = "p"\nblob_limit = 1048576\n')
    assert load_sources(f)[0].blob_limit == 1048576
    f.write_text('[[source]]\nname = "d"\nurl = "d"\npublisher = "p"\nblob_limit = "1m"\n')
    with pytest.raises(ConfigError, match=r"blob_limit.*positive number of bytes"):
        load_sources(f)
