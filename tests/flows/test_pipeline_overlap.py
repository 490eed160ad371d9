"""Issue 17 item 1: embedding overlaps extraction, and the snapshot does not depend on it.

The same two sources (real git repositories) are built into two fresh data directories through the real flow,
the ONNX int8 encoder and the real model: once with the extraction → embedding pipeline, once with it off.
"""

from __future__ import annotations

import gc

import pytest

from tests.kits.gitutil import RepoBuilder
from trustindex.encoder.pipeline import OVERLAP_ENV, overlap_enabled
from trustindex.schemas.config import BuildConfig, Identities, Person, Publisher, Source
from trustindex.schemas.policy import Policy
from trustindex.schemas.refresh_run import RefreshRequest, RefreshResult
from trustindex.schemas.snapshot import resolve_current, verify_snapshot


def _page(i: int, source: str) -> str:
    body = "\n\n".join(
        f"## Part {k}\n\nTopic {i}.{k} of {source}: " + " ".join(f"w{i}_{k}_{j}" for j in range(30)) for k in range(3)
    )
    return f"---\ntitle: Page {i}\n---\n# Page {i}\n\n{body}\n"


@pytest.fixture()
def two_sources(tmp_path):
    ids = Identities()
    ids.publishers["mf"] = Publisher("mf", "Midnight Foundation", "foundation")
    ids.add_person(Person("Ada", ("ada@example.org",), "mf"))
    sources = []
    for name in ("alpha", "beta"):
        b = RepoBuilder(tmp_path / name)
        b.commit({f"docs/p{i}.md": _page(i, name) for i in range(12)}, "docs")
        b.commit({"docs/p0.md": _page(100, name)}, "rewrite p0")
        sources.append(Source(name=name, url=str(b.path), ref="main", publisher="mf", include=("**/*.md",)))
    return sources, ids


def _build(sources, ids, data, monkeypatch, overlap: str) -> RefreshResult:
    from trustindex.flows.refresh import refresh_flow

    monkeypatch.setenv(OVERLAP_ENV, overlap)
    return refresh_flow(BuildConfig(sources, ids, [], Policy.default()), RefreshRequest(str(data)))


def test_overlapped_and_sequential_builds_give_the_same_snapshot(two_sources, tmp_path, monkeypatch, prefect_harness):
    sources, ids = two_sources
    on = _build(sources, ids, tmp_path / "on", monkeypatch, "on")
    frozen = gc.get_freeze_count()
    off = _build(sources, ids, tmp_path / "off", monkeypatch, "off")
    # the first run put the start-up heap out of the cyclic collector's reach, and only the first (flows/refresh.py)
    assert frozen > 0 and gc.get_freeze_count() <= frozen  # (frozen objects can still be freed by refcount)

    assert on.snapshot_id == off.snapshot_id
    # every listed sha256 is the file's, the encoder's (taken from its verified export, not re-read) included
    manifest = verify_snapshot(resolve_current(tmp_path / "on"), checksums=True)
    assert any(name.startswith("encoder/") for name in manifest.files)
    assert (resolve_current(tmp_path / "on") / "embeddings.npy").read_bytes() == (
        resolve_current(tmp_path / "off") / "embeddings.npy"
    ).read_bytes()
    # both runs encoded every distinct text once (fresh caches); only where it happened differs
    assert on.embeddings == off.embeddings and on.embeddings.encoded > 0

    def embeds(result):
        return {r["source"]: r["count"] for r in result.stages if r["stage"] == "embed"}

    early = embeds(on)
    assert set(early) == {"alpha", "beta", None}
    assert early["alpha"] > 0 and early["beta"] > 0  # embedded inside the source tasks, during extraction
    assert early[None] == 0  # so the build found every vector in the cache
    assert embeds(off) == {None: off.embeddings.encoded}  # off: the build embedded everything itself


def test_the_switch_takes_on_or_off_and_names_itself_when_wrong(monkeypatch):
    monkeypatch.delenv(OVERLAP_ENV, raising=False)
    assert overlap_enabled()
    monkeypatch.setenv(OVERLAP_ENV, "off")
    assert not overlap_enabled()
    monkeypatch.setenv(OVERLAP_ENV, "sometimes")
    with pytest.raises(ValueError, match=OVERLAP_ENV):
        overlap_enabled()
