"""Crash safety of publish (issue item 5): SIGKILL at every stage, then CURRENT, the next run and gc.

The promise (warehouse/snapshots.py, dlt's commit-by-rename model): whatever instant a
writer dies, CURRENT names a complete snapshot that passes ``verify_snapshot``, no
directory is visible under a snapshot id unless it is complete, the next run succeeds,
and ``gc`` removes what the crash left (``snapshots/.tmp-*``, ``.CURRENT.*.tmp``).

Trials (see tests/kits/crashkit.py for the kill mechanism):
* 22 named stages of one real publish (``KILL_POINTS``), each killed exactly there;
* 3 kills at random instants of a publish (seed in the test id's output);
* a re-publish of existing content killed while it deletes its duplicate build;
* 2 kills of ``gc`` half-way through deleting an old snapshot;
* 3 kills of the real ``python -m trustindex.cli.main refresh`` process (start-up, crawl, build), then a real
  refresh that succeeds, ``snapshots gc`` and ``snapshots verify``;
* writers under ``warehouse.lock.data_dir_lock``: refused with a clear message, queued with
  ``wait_seconds``, never interleaved, and freed when the holder is SIGKILLed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

import pytest

from tests.kits.clienv import cli_env
from tests.kits.crashkit import ROOT, Zygote, read_trace
from trustindex.schemas.snapshot import CURRENT, SNAPSHOTS_DIR, verify_snapshot
from trustindex.warehouse.lock import LockBusy, data_dir_lock
from trustindex.warehouse.snapshots import current_id, gc

pytestmark = pytest.mark.slow

SEED = int(os.environ.get("TRUSTINDEX_CRASH_SEED", time.time_ns() % (1 << 31)))

# (label, phase, hooked call, detail it must equal or None, occurrence among the matches)
KILL_POINTS = [
    ("after-mkdtemp", "after", "mkdtemp", None, 0),
    ("before-write-documents", "before", "write_table", "documents.parquet", 0),
    ("after-write-chunks", "after", "write_table", "chunks.parquet", 0),
    ("before-write-sources", "before", "write_table", "sources.parquet", 0),
    ("before-save-embeddings", "before", "save", "embeddings.npy", 0),
    ("inside-build-bm25", "before", "save", "embeddings.npy", 2),  # bm25s saving its second array
    ("after-build-bm25", "after", "build_bm25", None, 0),
    ("before-first-file-fsync", "before", "fsync", None, 0),
    ("after-fsync-embeddings", "after", "fsync", "snapshots/.tmp/embeddings.npy", 0),
    ("before-fsync-bm25-vocab", "before", "fsync", "snapshots/.tmp/bm25/vocab.index.json", 0),
    ("before-fsync-manifest", "before", "fsync", "snapshots/.tmp/manifest.json", 0),
    ("after-fsync-manifest", "after", "fsync", "snapshots/.tmp/manifest.json", 0),
    ("before-fsync-build-dir", "before", "fsync", "snapshots/.tmp", 0),
    ("after-fsync-bm25-dir", "after", "fsync", "snapshots/.tmp/bm25", 0),
    ("before-rename", "before", "rename", None, 0),
    ("after-rename", "after", "rename", None, 0),
    ("after-fsync-snapshots-dir", "after", "fsync", "snapshots", 0),
    ("before-fsync-current-tmp", "before", "fsync", ".CURRENT.tmp", 0),
    ("after-fsync-current-tmp", "after", "fsync", ".CURRENT.tmp", 0),
    ("before-replace-current", "before", "replace", None, 0),
    ("after-replace-current", "after", "replace", None, 0),
    ("after-fsync-data-dir", "after", "fsync", ".", 0),  # publish complete; dies before exiting
]


def event_index(trace: list[dict], phase: str, name: str, detail: str | None, occurrence: int) -> int:
    hits = [
        e["i"] for e in trace if e["phase"] == phase and e["name"] == name and (detail is None or e["detail"] == detail)
    ]
    assert len(hits) > occurrence, f"the publish trace has no {phase} {name} {detail} #{occurrence}: {trace}"
    return hits[occurrence]


def leftovers(data: Path) -> set[str]:
    snaps = data / SNAPSHOTS_DIR
    out = {p.name for p in snaps.iterdir() if p.name.startswith(".tmp-")} if snaps.is_dir() else set()
    return out | {p.name for p in data.glob(f".{CURRENT}.*.tmp")}


def assert_consistent(data: Path, allowed_current: set[str]) -> str:
    """CURRENT names a complete, verified snapshot; no id-named directory is partial."""
    live = current_id(data)
    assert live in allowed_current, f"CURRENT is {live!r}, expected one of {allowed_current}"
    verify_snapshot(data / SNAPSHOTS_DIR / live)
    for d in (data / SNAPSHOTS_DIR).iterdir():
        if not d.name.startswith("."):
            verify_snapshot(d)  # raises SnapshotError naming the damaged snapshot
    return live


class Kit:
    def __init__(self, zygote: Zygote, base: Path, base_id: str, trace: list[dict], new_id: str, root: Path):
        self.z, self.base, self.base_id, self.trace, self.new_id, self.root = zygote, base, base_id, trace, new_id, root
        self.n = 0

    def fresh(self) -> Path:
        """A data directory holding the base snapshot as CURRENT."""
        self.n += 1
        d = self.root / f"trial-{self.n}"
        shutil.copytree(self.base, d)
        return d

    def recover_and_gc(self, d: Path, expected_left: set[str] | None = None) -> None:
        """The next run succeeds; gc then removes exactly what the crash left."""
        left = leftovers(d)
        if expected_left is not None:
            assert left == expected_left
        r = self.z.run(d, variant=1, result=d.parent / f"{d.name}.next.json")
        assert (r["status"], r["code"]) == ("exited", 0), r
        assert r["result"]["snapshot_id"] == self.new_id
        assert_consistent(d, {self.new_id})
        removed = gc(d, keep=10)
        assert set(removed) == left, f"gc removed {removed}, the crash left {left}"
        assert leftovers(d) == set()
        assert assert_consistent(d, {self.new_id}) == self.new_id
        assert {p.name for p in (d / SNAPSHOTS_DIR).iterdir()} == {self.base_id, self.new_id}


@pytest.fixture(scope="module")
def kit(refreshed, tmp_path_factory):
    root = tmp_path_factory.mktemp("crash")
    z = Zygote(refreshed["data"], root)
    try:
        base = root / "base"
        r = z.run(base, variant=0, result=root / "base.json")
        assert (r["status"], r["code"]) == ("exited", 0), r
        traced = root / "traced"
        shutil.copytree(base, traced)
        t = z.run(traced, variant=1, plan={"trace": str(root / "trace.jsonl")}, result=root / "traced.json")
        assert (t["status"], t["code"]) == ("exited", 0), t
        yield Kit(
            z, base, r["result"]["snapshot_id"], read_trace(root / "trace.jsonl"), t["result"]["snapshot_id"], root
        )
    finally:
        z.close()


@pytest.mark.parametrize("label,phase,name,detail,occurrence", KILL_POINTS, ids=[k[0] for k in KILL_POINTS])
def test_publish_killed_at_stage(kit, label, phase, name, detail, occurrence):
    k = event_index(kit.trace, phase, name, detail, occurrence)
    at = {
        key: event_index(kit.trace, *key)
        for key in [
            ("after", "mkdtemp", None, 0),
            ("after", "rename", None, 0),
            ("after", "replace", None, 0),
            ("before", "fsync", ".CURRENT.tmp", 0),
        ]
    }
    renamed = k >= at[("after", "rename", None, 0)]
    swapped = k >= at[("after", "replace", None, 0)]
    d = kit.fresh()
    r = kit.z.run(d, variant=1, plan={"kill_at": k})
    assert (r["status"], r["code"]) == ("killed", signal.SIGKILL), f"{label}: {r}"
    live = assert_consistent(d, {kit.new_id} if swapped else {kit.base_id})
    assert (d / SNAPSHOTS_DIR / kit.new_id).is_dir() == renamed, label
    expected = set()
    if at[("after", "mkdtemp", None, 0)] <= k and not renamed:
        expected |= {p.name for p in (d / SNAPSHOTS_DIR).glob(".tmp-*")}
        assert len(expected) == 1, f"{label}: one build directory should be left, found {expected}"
    if at[("before", "fsync", ".CURRENT.tmp", 0)] <= k and not swapped:
        expected.add(f".{CURRENT}.{r['pid']}.tmp")
    assert live == (kit.new_id if swapped else kit.base_id)
    kit.recover_and_gc(d, expected)


@pytest.mark.parametrize("trial", range(3))
def test_publish_killed_at_random_instant(kit, trial):
    rng = random.Random(SEED * 10 + trial)
    span = kit.trace[-1]["t"] - kit.trace[0]["t"]
    delay = rng.uniform(0, span * 1.2)
    d = kit.fresh()
    r = kit.z.run(d, variant=1, detach=True)
    time.sleep(delay)
    os.kill(r["pid"], signal.SIGKILL)  # our own trial child (a zombie at worst, until the wait below)
    w = kit.z.wait(r["pid"])
    assert w["status"] in ("killed", "exited"), f"seed {SEED}: {w}"
    assert_consistent(d, {kit.base_id, kit.new_id})
    kit.recover_and_gc(d)


def test_republish_killed_while_deleting_duplicate_build(kit):
    """Content that is already a snapshot: finish_snapshot deletes the new build; kill half-way through."""
    d = kit.fresh()
    assert kit.z.run(d, variant=1)["code"] == 0
    trace_file = d.parent / "dup-trace.jsonl"
    assert kit.z.run(d, variant=1, plan={"trace": str(trace_file)})["code"] == 0
    k = event_index(read_trace(trace_file), "after", "unlink", None, 3)
    r = kit.z.run(d, variant=1, plan={"kill_at": k})
    assert r["status"] == "killed", r
    assert assert_consistent(d, {kit.new_id}) == kit.new_id
    assert len(leftovers(d)) == 1  # the half-deleted duplicate build
    kit.recover_and_gc(d)


@pytest.mark.parametrize("unlinks", [1, 6])
def test_gc_killed_midway_leaves_no_partial_snapshot(kit, unlinks):
    d = kit.fresh()
    ids = []
    for v in (21, 22, 23):
        r = kit.z.run(d, variant=v, result=d.parent / f"gc-{v}.json")
        assert r["code"] == 0, r
        ids.append(r["result"]["snapshot_id"])
    rehearsal = d.parent / f"{d.name}-rehearsal"
    shutil.copytree(d, rehearsal)
    trace_file = d.parent / f"gc-trace-{unlinks}.jsonl"
    assert kit.z.run(rehearsal, job="gc", keep=1, plan={"trace": str(trace_file)})["code"] == 0
    g = kit.z.run(
        d, job="gc", keep=1, plan={"kill_at": event_index(read_trace(trace_file), "after", "unlink", None, unlinks - 1)}
    )
    assert g["status"] == "killed", g
    assert_consistent(d, {ids[-1]})  # no half-deleted directory still carries a snapshot id
    gc(d, keep=1)
    assert sorted(p.name for p in (d / SNAPSHOTS_DIR).iterdir()) == [ids[-1]]


# ---------------------------------------------------------------- one writer at a time
def test_second_writer_is_refused_with_a_clear_message(kit, demo):
    d = kit.fresh()
    holder = kit.z.run(
        d, variant=1, lock_wait=0, detach=False, plan={"stop_at": event_index(kit.trace, "before", "rename", None, 0)}
    )
    assert holder["status"] == "stopped", holder
    try:
        with pytest.raises(LockBusy, match=rf"crash-trial writer 1 \(pid {holder['pid']}\) is writing .*--wait"):
            with data_dir_lock(d):
                pass
        cli = subprocess.run(
            [sys.executable, "-m", "trustindex.cli.main", "refresh", "--sources", str(demo), "--data", str(d)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )
        assert cli.returncode == 1, cli.stderr
        assert f"crash-trial writer 1 (pid {holder['pid']}) is writing this data directory" in cli.stderr
        assert len(cli.stderr.strip().splitlines()) == 1  # one clear line, no traceback
    finally:
        os.kill(holder["pid"], signal.SIGCONT)
        done = kit.z.wait(holder["pid"])
    assert (done["status"], done["code"]) == ("exited", 0)
    assert assert_consistent(d, {kit.new_id}) == kit.new_id


def test_waiting_writers_never_interleave(kit):
    d = kit.fresh()
    pids = {
        v: kit.z.run(d, variant=v, lock_wait=120, detach=True, result=d.parent / f"w{v}.json")["pid"]
        for v in (31, 32, 33)
    }
    spans = []
    for v, pid in pids.items():
        w = kit.z.wait(pid)
        assert (w["status"], w["code"]) == ("exited", 0), (v, w, (d.parent / f"w{v}.json").read_text())
        res = json.loads((d.parent / f"w{v}.json").read_text())
        spans.append((*res["locked"], res["snapshot_id"]))
    spans.sort()
    for (_, e1, _), (s2, _, _) in pairwise(spans):
        assert e1 <= s2, f"writers overlapped: {spans}"
    assert assert_consistent(d, {spans[-1][2]}) == spans[-1][2]
    assert leftovers(d) == set()


def test_sigkilled_holder_frees_the_lock(kit):
    d = kit.fresh()
    holder = kit.z.run(
        d,
        variant=1,
        lock_wait=0,
        plan={"stop_at": event_index(kit.trace, "after", "fsync", "snapshots/.tmp/manifest.json", 0)},
    )
    assert holder["status"] == "stopped"
    os.kill(holder["pid"], signal.SIGKILL)
    assert kit.z.wait(holder["pid"])["status"] == "killed"
    t0 = time.monotonic()
    with data_dir_lock(d, wait_seconds=0):
        assert time.monotonic() - t0 < 1.0
    assert_consistent(d, {kit.base_id})
    kit.recover_and_gc(d)


def test_gc_waits_for_a_running_writer(kit):
    d = kit.fresh()
    holder = kit.z.run(
        d,
        variant=1,
        lock_wait=0,
        result=d.parent / "gcw.json",
        plan={"stop_at": event_index(kit.trace, "before", "rename", None, 0)},
    )
    assert holder["status"] == "stopped"
    try:
        subprocess.run(
            [sys.executable, "-m", "trustindex.cli.main", "snapshots", "gc", "--data", str(d)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )
    finally:
        os.kill(holder["pid"], signal.SIGCONT)
        done = kit.z.wait(holder["pid"])
    assert (done["status"], done["code"]) == ("exited", 0), (d.parent / "gcw.json").read_text()
    assert_consistent(d, {kit.new_id})


# ---------------------------------------------------------------- the real command, killed
def _changed_corpus(demo: Path, dest: Path) -> Path:
    """A copy of the demo corpus with one new page committed, so a refresh must build a new snapshot."""
    import git

    shutil.copytree(Path(demo).parent, dest, symlinks=True)
    repo = git.Repo(dest / "repos" / "midnight-docs")
    page = dest / "repos" / "midnight-docs" / "docs" / "crash-trial.md"
    page.write_text("---\ntitle: Crash trial\n---\n# Crash trial\n\nA page added so that the refresh publishes.\n")
    repo.index.add([str(page.relative_to(repo.working_tree_dir))])
    who = git.Actor("Ada", "ada@example.org")
    when = datetime(2026, 10, 1, 12, tzinfo=UTC)
    repo.index.commit("add crash trial page", author=who, committer=who, author_date=when, commit_date=when)
    return dest / "sources.toml"


def _seed(src: Path, data: Path) -> str:
    """The refreshed data directory's tables, embedding cache and live snapshot (no mirrors, no catalog)."""
    live = current_id(src)
    for part in ("warehouse", "cache"):
        shutil.copytree(src / part, data / part)
    shutil.copytree(src / SNAPSHOTS_DIR / live, data / SNAPSHOTS_DIR / live)
    shutil.copy(src / CURRENT, data / CURRENT)
    return live


def test_real_refresh_killed_then_succeeds(refreshed, demo, tmp_path):
    sources = _changed_corpus(demo, tmp_path / "demo")
    data = tmp_path / "data"
    base_id = _seed(refreshed["data"], data)
    env = cli_env(tmp_path / "prefect-home")
    cmd = [sys.executable, "-m", "trustindex.cli.main", "refresh", "--sources", str(sources), "--data", str(data)]
    rng = random.Random(SEED)
    # (name, file whose appearance starts the clock, random delay after it): each kill lands in a different stage
    trials = [
        ("start-up", None, rng.uniform(0.3, 2.5)),  # imports, lock, Prefect client
        ("crawl", "mirrors", rng.uniform(0.0, 1.0)),  # cloning, extraction, source tables
        ("build", "snapshots/.tmp-*", rng.uniform(0.0, 0.1)),
    ]  # tables, embeddings, BM25, manifest, rename
    for trial, marker, delay in trials:
        with open(tmp_path / f"{trial}.log", "w") as log:
            p = subprocess.Popen(cmd + ["--quiet"], env=env, cwd=ROOT, stdout=log, stderr=log, start_new_session=True)
        t0 = time.monotonic()
        while marker and not list(data.glob(marker)) and p.poll() is None:
            assert time.monotonic() - t0 < 400, f"{trial}: the refresh never reached {marker}"
            time.sleep(0.005)
        time.sleep(delay)
        building = bool(list((data / SNAPSHOTS_DIR).glob(".tmp-*")))
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)  # the refresh and anything it started
        p.wait()
        assert p.returncode == -signal.SIGKILL, (
            f"seed {SEED}: {trial}: the refresh ended before the kill",
            (tmp_path / f"{trial}.log").read_text()[-3000:],
        )
        live = assert_consistent(data, {d.name for d in (data / SNAPSHOTS_DIR).iterdir()})
        print(
            f"seed {SEED}: {trial} kill after {time.monotonic() - t0:.2f} s, build dir present: {building}, "
            f"CURRENT {'unchanged' if live == base_id else 'moved'}, left {sorted(leftovers(data))}"
        )
        with data_dir_lock(data):  # the kernel freed the dead writer's lock
            pass
    done = subprocess.run(cmd + ["--json"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["published"] and result["snapshot_id"] == current_id(data) != base_id
    assert_consistent(data, {result["snapshot_id"]})
    snap = [sys.executable, "-m", "trustindex.cli.main", "snapshots"]
    g = subprocess.run(snap + ["gc", "--data", str(data)], env=env, cwd=ROOT, capture_output=True, text=True)
    assert g.returncode == 0, g.stderr
    assert leftovers(data) == set()
    v = subprocess.run(snap + ["verify", "--data", str(data)], env=env, cwd=ROOT, capture_output=True, text=True)
    assert v.returncode == 0 and f"snapshot {result['snapshot_id']}" in v.stdout, v.stderr
