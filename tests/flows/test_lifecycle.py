"""Issue 5: incremental refresh, rewritten history, backfills, the publish gate, one writer, snapshot commands."""

import json
import os
import subprocess
import sys
from datetime import UTC, timedelta
from pathlib import Path

import pytest

from tests.kits.gitutil import RepoBuilder
from trustindex.schemas.config import BuildConfig, Identities, Person, Publisher, Source
from trustindex.schemas.policy import Policy
from trustindex.schemas.refresh_run import BackfillRequest, ConfigFiles, RefreshRequest
from trustindex.schemas.snapshot import resolve_current, verify_snapshot
from trustindex.warehouse.snapshots import current_id

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def page(title: str, body: str) -> str:
    return f"---\ntitle: {title}\n---\n# {title}\n\n{body}\n"


@pytest.fixture()
def world(tmp_path, prefect_harness):
    b = RepoBuilder(tmp_path / "docs")
    files = {
        f"docs/p{i}.md": page(f"Page {i}", f"Topic {i}: " + " ".join(f"word{i}_{j}" for j in range(40)))
        for i in range(8)
    }
    first = b.commit(files, "initial docs")
    ids = Identities()
    ids.publishers["mf"] = Publisher("mf", "Midnight Foundation", "foundation")
    ids.add_person(Person("Ada", ("ada@example.org",), "mf"))
    src = Source(name="docs", url=str(b.path), ref="main", publisher="mf", include=("**/*.md",))
    return {"builder": b, "source": src, "ids": ids, "data": tmp_path / "data", "first": first, "files": files}


def refresh(w, **kw):
    from trustindex.flows.refresh import refresh_flow

    cfg = BuildConfig([w["source"]], w["ids"], [], kw.pop("policy", Policy.default()))
    return refresh_flow(cfg, RefreshRequest(str(w["data"]), **kw))


def paths_in_live(data: Path) -> set[str]:
    import pyarrow.parquet as pq

    return set(pq.read_table(resolve_current(data) / "documents.parquet").column("path").to_pylist())


def test_incremental_refresh_extracts_only_changes(world):
    r1 = refresh(world)
    assert r1.sources[0].note == "full build"
    b = world["builder"]
    b.commit(
        {
            "docs/new.md": page("New", "a brand new page about zswap"),
            "docs/p1.md": page("Page 1", "edited body text for page one"),
            "docs/p2.md": None,
        },
        "add, edit, delete",
    )
    b.repo.git.mv("docs/p3.md", "docs/moved.md")
    b.commit({}, "rename p3")
    r2 = refresh(world)
    note = r2.sources[0].note
    assert note.startswith("incremental") and "carried forward" in note
    assert paths_in_live(world["data"]) == {f"docs/p{i}.md" for i in (0, 1, 4, 5, 6, 7)} | {
        "docs/new.md",
        "docs/moved.md",
    }
    e = r2.embeddings
    assert 0 < e.encoded <= 3  # new page, edited page, renamed page's heading path
    assert r2.snapshot_id != r1.snapshot_id


def test_rewritten_history_rebuilds_and_says_so(world):
    refresh(world)
    b = world["builder"]
    b.commit({"docs/p0.md": page("Page 0", "to be force-pushed away")}, "will vanish")
    refresh(world)
    b.repo.head.reset(world["first"], index=True, working_tree=True)
    b.commit({"docs/p5.md": page("Page 5", "rewritten history")}, "new tip after force-push")
    r = refresh(world)
    assert "history rewritten" in r.sources[0].note
    run = json.loads((world["data"] / "last_run.json").read_text())
    assert "history rewritten" in run["sources"][0]["note"]


def test_backfill_as_of_is_idempotent_and_does_not_move_current(world, tmp_path):
    from trustindex.flows.backfill import backfill_flow

    b = world["builder"]
    b.commit({"docs/late.md": page("Late", "added much later")}, "late page", days=60)
    live = refresh(world).snapshot_id
    sources = tmp_path / "sources.toml"
    sources.write_text(f'[[source]]\nname = "docs"\nurl = "{b.path}"\npublisher = "mf"\ninclude = ["**/*.md"]\n')
    (tmp_path / "identities.toml").write_text('[[publisher]]\nid = "mf"\nname = "MF"\ntier = "foundation"\n')
    day = (b.t - timedelta(days=30)).astimezone(UTC).date().isoformat()
    one = backfill_flow(ConfigFiles(str(sources)), BackfillRequest(str(world["data"]), as_of=day))
    two = backfill_flow(ConfigFiles(str(sources)), BackfillRequest(str(world["data"]), as_of=day))
    assert one.commits["docs"] == world["first"]
    assert one.snapshot_id == two.snapshot_id != live
    assert current_id(world["data"]) == live
    verify_snapshot(world["data"] / "snapshots" / one.snapshot_id)


def count_fetches(mirror: Path, tmp_path: Path) -> Path:
    """Make every fetch into ``mirror`` leave a line in the returned file.

    Fetching from a local path runs ``remote.origin.uploadpack`` as the serving side: a wrapper there that
    logs, then runs git's own upload-pack, sees each real fetch (a run's internal calls cannot hide one).
    """
    log = tmp_path / "fetches.log"
    log.write_text("")
    wrapper = tmp_path / "counting-upload-pack"
    wrapper.write_text(f'#!/bin/sh\necho fetch >> "{log}"\nexec git upload-pack "$@"\n')
    wrapper.chmod(0o755)
    import git

    with git.Repo(mirror).config_writer() as cfg:
        cfg.set_value('remote "origin"', "uploadpack", str(wrapper))
    return log


def test_a_run_fetches_each_source_once(world, tmp_path):
    from trustindex.crawl.git import mirror_path
    from trustindex.flows.backfill import backfill_flow

    b = world["builder"]
    refresh(world)  # the first run clones the mirror
    fetches = count_fetches(mirror_path(world["data"], "docs"), tmp_path)

    b.commit({"docs/p1.md": page("Page 1", "an edit, so this refresh ingests again")}, "edit p1")
    changed = refresh(world)
    assert changed.sources[0].note.startswith("incremental")  # the source changed and was ingested
    assert fetches.read_text().splitlines() == ["fetch"]

    fetches.write_text("")
    sources = tmp_path / "sources.toml"
    sources.write_text(f'[[source]]\nname = "docs"\nurl = "{b.path}"\npublisher = "mf"\ninclude = ["**/*.md"]\n')
    (tmp_path / "identities.toml").write_text('[[publisher]]\nid = "mf"\nname = "MF"\ntier = "foundation"\n')
    day = (b.t - timedelta(days=1)).astimezone(UTC).date().isoformat()
    back = backfill_flow(ConfigFiles(str(sources)), BackfillRequest(str(world["data"]), as_of=day))
    assert back.sources[0].status == "ok" and back.commits["docs"] != changed.sources[0].commit
    assert fetches.read_text().splitlines() == ["fetch"]


def test_publish_gate_refuses_a_big_loss_unless_forced(world):
    from trustindex.warehouse.publish_gate import PublishRefused

    live = refresh(world).snapshot_id
    world["builder"].commit({f"docs/p{i}.md": None for i in range(7)}, "delete almost everything")
    with pytest.raises(PublishRefused, match="would lose"):
        refresh(world)
    assert current_id(world["data"]) == live
    forced = refresh(world, force=True)
    assert current_id(world["data"]) == forced.snapshot_id != live
    assert forced.forced_past_gate


def test_failed_source_keeps_serving_its_last_tables(world):
    refresh(world)
    before = paths_in_live(world["data"])
    repo = world["builder"].path
    repo.rename(repo.with_name("away"))  # the remote is unreachable; the configuration is unchanged
    try:
        r = refresh(world)
    finally:
        repo.with_name("away").rename(repo)
    assert r.failures and r.sources[0].status == "failed"
    assert "does not appear to be a git repository" in r.sources[0].error
    assert "serving its last good tables" in r.sources[0].note
    assert paths_in_live(world["data"]) == before


def test_second_writer_fails_clearly(tmp_path):
    from trustindex.warehouse.lock import LockBusy, data_dir_lock

    with data_dir_lock(tmp_path, what="refresh"):
        with pytest.raises(LockBusy, match="is writing this data directory"):
            with data_dir_lock(tmp_path):
                pass
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        (tmp_path / "s.toml").write_text('[[source]]\nname = "a"\nurl = "x"\npublisher = "p"\n')
        (tmp_path / "identities.toml").write_text('[[publisher]]\nid = "p"\ntier = "community"\n')
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "trustindex.cli.main",
                "refresh",
                "--sources",
                str(tmp_path / "s.toml"),
                "--data",
                str(tmp_path),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=120,
        )
        assert out.returncode == 1 and "is writing this data directory" in out.stderr
    with data_dir_lock(tmp_path):  # released
        pass


def test_snapshot_commands(world):
    a = refresh(world).snapshot_id
    world["builder"].commit({"docs/extra.md": page("Extra", "one more page")}, "extra")
    b = refresh(world).snapshot_id
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "trustindex.cli.main", "snapshots", *args, "--data", str(world["data"])],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=120,
        )

    listed = json.loads(cli("list", "--json").stdout)
    assert [s["snapshot_id"] for s in listed][-2:] == [a, b] and listed[-1]["live"]
    assert "verified" in cli("verify").stdout
    assert cli("rollback").stdout.strip() == f"CURRENT -> {a}"
    assert current_id(world["data"]) == a
    (world["data"] / "snapshots" / ".tmp-orphan").mkdir()
    out = cli("gc")
    assert out.returncode == 0 and ".tmp-orphan" in out.stdout
