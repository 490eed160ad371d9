"""Issue 29 item 1: bounded resources for a registry of many sources.

Real git repositories, the real flow, the real int8 encoder: at most N source tasks run at once (read from the
progress lines each task writes as it starts and ends), one model load and one embedding worker serve every
source, the progress names sources done, texts waiting and an ETA, today's behaviour (every source at once, a
worker per source) gives the same snapshot, and a repository on this machine is borrowed, not copied.
"""

from __future__ import annotations

import io
import re

import pytest

from tests.kits.gitutil import RepoBuilder
from trustindex.crawl.git import borrowed_objects, ensure_mirror, mirror_path, open_mirror, resolve_ref
from trustindex.encoder.pipeline import PER_SOURCE, WORKER_ENV, worker_mode
from trustindex.flows.sources_run import SOURCES_ENV, eta_text, sources_at_once
from trustindex.runtime import progress
from trustindex.schemas.config import BuildConfig, Identities, Person, Publisher, Source
from trustindex.schemas.policy import Policy
from trustindex.schemas.refresh_run import RefreshRequest, RefreshResult

NAMES = ("alpha", "beta", "gamma", "delta", "epsilon")


def _page(i: int, source: str) -> str:
    words = [" ".join(f"w{i}{k}{j}" for j in range(20)) for k in range(2)]
    body = "\n\n".join(f"## Part {k}\n\n{source} topic {i}.{k}: {words[k]}" for k in range(2))
    return f"# {source} page {i}\n\n{body}\n"


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    root = tmp_path_factory.mktemp("org")
    ids = Identities()
    ids.publishers["mf"] = Publisher("mf", "Midnight Foundation", "foundation")
    ids.add_person(Person("Ada", ("ada@example.org",), "mf"))
    sources = []
    for name in NAMES:
        b = RepoBuilder(root / name)
        b.commit({f"docs/p{i}.md": _page(i, name) for i in range(6)}, "docs")
        # the same page in every source: embedded once, though five sources submit it
        b.commit({"docs/shared.md": "# Shared\n\nThe same text in every repository of the organisation.\n"}, "shared")
        sources.append(Source(name=name, url=str(b.path), ref="main", publisher="mf", include=("**/*.md",)))
    return sources, ids, root


def _refresh(sources, ids, data, **kw) -> tuple[RefreshResult, str]:
    from trustindex.flows.refresh import refresh_flow

    out = io.StringIO()
    with progress.enabled(progress.LINES, every=0.0, stream=out):
        result = refresh_flow(BuildConfig(sources, ids, [], Policy.default()), RefreshRequest(str(data), **kw))
    return result, out.getvalue()


def _most_at_once(lines: str) -> int:
    """Source tasks running at the same time, from their first ("fetch X: started") and last ("ingest X: done")
    progress lines, in the order they were written."""
    running, most = 0, 0
    for line in lines.splitlines():
        if re.match(r"trustindex: fetch \S+: started", line):
            running += 1
            most = max(most, running)
        elif re.match(r"trustindex: ingest \S+: done", line):
            running -= 1
    return most


def test_a_capped_refresh_runs_two_sources_at_a_time_and_matches_every_source_at_once(
    registry, tmp_path, monkeypatch, prefect_harness
):
    sources, ids, _ = registry
    capped, lines = _refresh(sources, ids, tmp_path / "capped", max_sources=2)
    assert capped.failures == {}
    assert _most_at_once(lines) == 2
    assert capped.resources.sources_at_once == 2 and capped.resources.embed_worker == "shared"
    # one model for the process, however many sources (and runs) ask for it
    assert capped.resources.model_loads <= 1  # 0 when this process holds it already (a shared encoder cache)
    # the whole set's progress: sources done, texts waiting to embed, an ETA
    status = [ln for ln in lines.splitlines() if ln.startswith("trustindex: sources: ") and "sources done" in ln]
    assert status and "texts waiting to embed" in status[-1] and "ETA" in status[-1]
    assert f"{len(NAMES)}/{len(NAMES)} sources done" in lines
    # each source's texts were embedded while it was extracted: the build found them all in the cache
    assert capped.embeddings.encoded > 0
    per_source = {r["source"]: r for r in capped.stages if r["stage"] == "embed" and r["source"]}
    assert set(per_source) == set(NAMES)
    # the shared page was embedded once: the other four sources found another source had submitted it first
    assert sum(r["count"] for r in per_source.values()) == capped.embeddings.encoded
    assert sum(r["shared"] for r in per_source.values()) >= len(NAMES) - 1

    monkeypatch.setenv(SOURCES_ENV, "all")
    monkeypatch.setenv(WORKER_ENV, PER_SOURCE)
    before, lines = _refresh(sources, ids, tmp_path / "today")
    assert before.resources.sources_at_once == len(NAMES) and before.resources.embed_worker == PER_SOURCE
    assert _most_at_once(lines) >= 2
    assert before.snapshot_id == capped.snapshot_id


def test_the_run_record_adds_up_to_its_summary(registry, tmp_path, prefect_harness):
    """Issue 41 item 4: every embed record's count and cache hits sum to the summary's, the drain of queued texts is
    a stage with its count, the run's own stages fit in its time, and a progress line's count and status agree."""
    sources, ids, _ = registry
    data = tmp_path / "data"
    _refresh(sources[:3], ids, data, max_sources=2)
    # two more sources: the first three's tables are reused (their texts are in the cache, submitted by no source),
    # and the shared page is in the cache for the first new source and shared with it for the second
    result, lines = _refresh(sources, ids, data, max_sources=2)
    embeds = [r for r in result.stages if r["stage"] == "embed"]
    assert sum(r["count"] for r in embeds) == result.embeddings.encoded > 0
    assert sum(r["cache_hits"] for r in embeds) == result.embeddings.cache_hits > 0
    build = next(r for r in embeds if r["source"] is None)
    assert build["cache_hits"] > 0  # the reused sources' texts: counted by the build, as no source submitted them
    new = [r for r in embeds if r["source"] in ("delta", "epsilon")]
    assert sum(r["cache_hits"] for r in new) >= 1 and sum(r["shared"] for r in new) >= 1  # the shared page
    # the run's own stages (sources, the drain, the build's) follow one another inside the flow's time
    own = [r for r in result.stages if r["source"] is None]
    assert [r["stage"] for r in own][:2] == ["sources", "drain"] and own[0]["count"] == len(NAMES)
    assert sum(r["seconds"] for r in own) <= result.seconds
    drain = own[1]
    assert drain["unit"] == "texts" and 0 <= drain["encoded"] <= drain["count"]
    assert re.search(r"trustindex: drain: done, [\d.]+ s, [\d,]+ texts", lines)
    for line in lines.splitlines():  # "sources: N/5 sources (...); N/5 sources done, ..."
        m = re.match(r"trustindex: sources: (\d+)/(\d+) sources .*; (\d+)/(\d+) sources done", line)
        assert m is None or (m[1], m[2]) == (m[3], m[4]), line


def test_the_cap_and_the_worker_switch_are_read_and_checked(monkeypatch):
    monkeypatch.delenv(SOURCES_ENV, raising=False)
    assert 1 <= sources_at_once(50) <= 50 and sources_at_once(1) == 1
    assert sources_at_once(50, 3) == 3 and sources_at_once(2, "all") == 2 and sources_at_once(5, 9) == 5
    monkeypatch.setenv(SOURCES_ENV, "all")
    assert sources_at_once(40) == 40
    monkeypatch.setenv(SOURCES_ENV, "zero")
    with pytest.raises(ValueError, match=SOURCES_ENV):
        sources_at_once(4)
    monkeypatch.setenv(WORKER_ENV, "each")
    with pytest.raises(ValueError, match=WORKER_ENV):
        worker_mode()
    assert eta_text(0, 10, 5.0) == "ETA unknown"
    assert eta_text(5, 10, 50.0) == "ETA 50 s" and eta_text(1, 10, 60.0) == "ETA 9.0 min"


def test_a_repository_on_this_machine_is_borrowed_not_copied(tmp_path):
    src = tmp_path / "alpha"
    b = RepoBuilder(src)
    first = b.commit({f"docs/p{i}.md": _page(i, "alpha") for i in range(6)}, "docs")
    dest = mirror_path(tmp_path / "data", "alpha")
    repo = ensure_mirror(str(src), dest)
    assert borrowed_objects(dest) == [str(src / ".git" / "objects")]
    assert not list((dest / "objects" / "pack").glob("*.pack"))  # nothing copied
    assert resolve_ref(repo, "main") == first
    # a later commit arrives by fetch, still without a copy
    new = b.commit({"docs/late.md": "# Late\n\nA page added after the first crawl.\n"}, "late")
    assert resolve_ref(ensure_mirror(str(src), dest), "main") == new
    assert not list((dest / "objects" / "pack").glob("*.pack"))
    # a file:// URL asks for a copy of its own
    copy = mirror_path(tmp_path / "data", "alpha-copy")
    ensure_mirror(src.as_uri(), copy)
    assert borrowed_objects(copy) == [] and resolve_ref(open_mirror(copy), "main") == new
