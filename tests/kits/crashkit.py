"""Crash-injection harness for the publish path: a fork server ("zygote") whose children SIGKILL themselves.

Why a zygote: a child that starts Python, pyarrow and bm25s costs ~2.5 s here (and
Prefect 10-60 s); forking a process that already loaded everything costs a few ms,
so dozens of crash trials fit in a test run.  The zygote is a separate, single-
threaded process (never the pytest process, which runs Prefect and torch threads).

What the children run is the real publish path of ``flows.refresh.build_and_publish``:
``new_build_dir`` → ``warehouse.build.write_snapshot_files`` → ``finish_snapshot`` →
``set_current``, on the real per-source tables a refresh saved under ``warehouse/``.
Vectors come from that refresh's own embedding cache (every chunk is cached), so
:class:`CachedModel` carries the real model identity and never needs the model:
loading torch costs ~30 s here and the embedding pass is not what a crash trial tests.

Kill points: in the child, ``os.fsync``, ``os.rename``, ``os.replace``, ``tempfile.mkdtemp``,
``os.unlink``/``os.rmdir`` (for gc) and the build steps ``write_table``, ``np.save``,
``build_bm25`` are wrapped; each call is two *events* (``before``/``after``).  A plan
``{"kill_at": k}`` SIGKILLs the child at event k; ``{"stop_at": k}`` SIGSTOPs it (the
test resumes it with SIGCONT); ``{"trace": path}`` writes every event to a JSON-lines file.

Protocol: one JSON object a line on stdin, one reply a line on stdout.
    {"op": "run", "job": "publish"|"gc", "data": DIR, "variant": N, "plan": {...},
     "lock_wait": S|None, "detach": bool, "result": FILE}
    → {"pid": P, "status": "exited"|"killed"|"stopped"|"detached", "code": N}
    {"op": "wait", "pid": P} → the same reply for a detached child.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- child side (runs in the zygote)
class Inputs:
    """Everything a publish needs, read once from a refreshed data directory."""

    def __init__(self, src_data: Path, work: Path):
        import pyarrow.parquet as pq

        from trustindex.encoder.embedding_cache import EmbeddingCache
        from trustindex.schemas.snapshot import read_manifest, resolve_current
        from trustindex.warehouse.tables import load_source_tables

        live = resolve_current(src_data)
        self.manifest = read_manifest(live)
        self.source_rows = pq.read_table(live / "sources.parquet").to_pylist()
        self.per_source = {}
        for row in self.source_rows:
            tables = load_source_tables(src_data, row["source"])
            if tables is None:
                raise RuntimeError(f"{src_data}: no saved tables for source {row['source']}")
            self.per_source[row["source"]] = tables
        self.model = CachedModel(self.manifest.embedding_model, live, self.manifest.files, work)
        self.cache = EmbeddingCache(src_data / "cache" / "embeddings", self.model.cache_key, self.model.dimensions)
        self.cache._load()  # into memory before forking: children never read the shared cache directory


def _embedder_base():
    from trustindex.encoder.embedding_cache import Embedder

    return Embedder


class CachedModel(_embedder_base()):
    """The refresh's model identity (id, backend, weights sha256) with its vectors served from its cache."""

    def __init__(self, info: dict, live: Path, files: dict, work: Path):
        import shutil

        self._info = dict(info)
        self.backend = info["backend"]
        self.dimensions = int(info["dimensions"])
        # Files the snapshot carries for its query encoder (onnx-int8: encoder/*), copied to a private
        # directory: builds hard-link them, and a trial must never share inodes with the source snapshot.
        enc = info.get("encoder_dir")
        self._files = {}
        if enc:
            private = Path(work) / "crashkit-encoder"
            for rel in files:
                if rel.startswith(enc + "/"):
                    dst = private / rel
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(live / rel, dst)
                    self._files[rel] = dst

    def snapshot_files(self) -> dict:
        return dict(self._files)

    def info(self) -> dict:
        return dict(self._info)

    def encode(self, texts):
        raise RuntimeError(
            f"crash trial needed the model for {len(texts)} uncached texts; every chunk of the "
            "source refresh should be in its embedding cache"
        )


def publish(data: Path, inp: Inputs, variant: int) -> str:
    """One real publish; ``variant`` changes the sources table so each variant is a distinct snapshot."""
    from trustindex.warehouse.build import write_snapshot_files
    from trustindex.warehouse.snapshots import finish_snapshot, new_build_dir, set_current

    rows = [dict(r, ref=f"{r['ref']}@crash-variant-{variant}") for r in inp.source_rows]
    build = new_build_dir(data)
    counts, _stats = write_snapshot_files(build, inp.per_source, rows, inp.model, inp.cache)
    m = finish_snapshot(
        data,
        build,
        sources=sorted(rows, key=lambda r: r["source"]),
        embedding_model=inp.model.info(),
        row_counts=counts,
        build_policy_id=inp.manifest.build_policy_id,
        extra={"build_inputs": f"variant-{variant}"},
    )
    set_current(data, m.snapshot_id)
    return m.snapshot_id


class _Events:
    def __init__(self, plan: dict):
        self.n = 0
        self.plan = plan
        self.trace = open(plan["trace"], "a", encoding="utf-8") if plan.get("trace") else None

    def __call__(self, name: str, detail: str, phase: str) -> None:
        if self.trace:
            self.trace.write(
                json.dumps({"i": self.n, "name": name, "detail": detail, "phase": phase, "t": time.monotonic()}) + "\n"
            )
            self.trace.flush()
        if self.n == self.plan.get("kill_at"):
            os.kill(os.getpid(), signal.SIGKILL)
        if self.n == self.plan.get("stop_at"):
            os.kill(os.getpid(), signal.SIGSTOP)
        self.n += 1


def _fd_name(fd: int, data: Path) -> str:
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return "?"
    return _rel(target, data)


def _rel(path, data: Path) -> str:
    try:
        rel = Path(os.fspath(path)).resolve().relative_to(data.resolve()).as_posix()
    except ValueError:
        return os.fspath(path) if isinstance(path, str) else repr(path)
    # snapshots/.tmp-abc12/bm25/x → snapshots/.tmp/bm25/x: names stable across runs
    parts = [
        ".tmp" if p.startswith(".tmp-") else ".CURRENT.tmp" if p.startswith(".CURRENT.") else p for p in rel.split("/")
    ]
    return "/".join(parts) or "."


def install_hooks(plan: dict, data: Path) -> None:
    """Wrap the calls a publish (or gc) makes so each is a numbered kill point."""
    import tempfile

    import numpy as np

    import trustindex.warehouse.build as build

    ev = _Events(plan)

    def wrap(owner, attr, describe):
        real = getattr(owner, attr)

        def hooked(*a, **kw):
            d = describe(*a, **kw)
            ev(attr, d, "before")
            out = real(*a, **kw)
            ev(attr, d, "after")
            return out

        setattr(owner, attr, hooked)

    wrap(os, "fsync", lambda fd: _fd_name(fd, data))
    wrap(os, "rename", lambda src, dst, **kw: f"{_rel(src, data)} -> {_rel(dst, data)}")
    wrap(os, "replace", lambda src, dst, **kw: f"{_rel(src, data)} -> {_rel(dst, data)}")
    wrap(os, "unlink", lambda p, **kw: str(p))
    wrap(os, "rmdir", lambda p, **kw: str(p))
    wrap(tempfile, "mkdtemp", lambda **kw: kw.get("prefix", ""))
    wrap(build, "write_table", lambda table, path: Path(path).name)
    wrap(build, "build_bm25", lambda texts, out: "bm25")
    wrap(np, "save", lambda f, *a, **kw: "embeddings.npy")


def _child(cmd: dict, inp: Inputs) -> int:
    data = Path(cmd["data"])
    result = Path(cmd["result"]) if cmd.get("result") else None
    try:
        from trustindex.warehouse.lock import data_dir_lock

        install_hooks(cmd.get("plan") or {}, data)
        wait = cmd.get("lock_wait")
        if cmd.get("job", "publish") == "gc":
            from trustindex.warehouse.snapshots import gc

            out = {"removed": gc(data, int(cmd.get("keep", 1)))}
        elif wait is None:
            out = {"snapshot_id": publish(data, inp, int(cmd.get("variant", 0)))}
        else:
            with data_dir_lock(data, wait_seconds=float(wait), what=f"crash-trial writer {cmd.get('variant')}"):
                t0 = time.time()
                sid = publish(data, inp, int(cmd.get("variant", 0)))
                out = {"snapshot_id": sid, "locked": [t0, time.time()]}
        code = 0
    except BaseException as exc:  # reported to the test, which decides
        out, code = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}, 1
    if result:
        result.write_text(json.dumps(out))
    return code


def _status(pid: int, flags: int = 0) -> dict:
    _, st = os.waitpid(pid, flags | os.WUNTRACED)
    if os.WIFSTOPPED(st):
        return {"pid": pid, "status": "stopped", "code": os.WSTOPSIG(st)}
    if os.WIFSIGNALED(st):
        return {"pid": pid, "status": "killed", "code": os.WTERMSIG(st)}
    return {"pid": pid, "status": "exited", "code": os.WEXITSTATUS(st)}


def serve(src_data: str, work: str) -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.path.insert(0, str(ROOT))
    inp = Inputs(Path(src_data), Path(work))
    import trustindex.warehouse.build  # noqa: F401  (everything a child needs, imported before forking)
    import trustindex.warehouse.lock  # noqa: F401
    import trustindex.warehouse.snapshots  # noqa: F401

    out = sys.stdout
    out.write(json.dumps({"ready": True, "chunks": inp.manifest.row_counts.get("chunks")}) + "\n")
    out.flush()
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["op"] == "wait":
            reply = _status(int(cmd["pid"]))
        else:
            pid = os.fork()
            if pid == 0:  # the child: never return into the loop, never run the zygote's exit handlers
                code = 1
                try:
                    code = _child(cmd, inp)
                finally:
                    os._exit(code)
            reply = {"pid": pid, "status": "detached", "code": None} if cmd.get("detach") else _status(pid)
        out.write(json.dumps(reply) + "\n")
        out.flush()


# ---------------------------------------------------------------- test side
class Zygote:
    """The test's handle on a running fork server."""

    def __init__(self, src_data: Path, work: Path):
        env = dict(os.environ, PYTHONPATH=str(ROOT), TOKENIZERS_PARALLELISM="false")
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "serve", str(src_data), str(work)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        ready = self._read()
        if not ready.get("ready"):
            raise RuntimeError(f"crash zygote did not start: {ready}")

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"crash zygote exited (rc {self.proc.wait()})")
        return json.loads(line)

    def call(self, **cmd) -> dict:
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def run(
        self,
        data: Path,
        *,
        job: str = "publish",
        variant: int = 0,
        plan: dict | None = None,
        result: Path | None = None,
        lock_wait: float | None = None,
        detach: bool = False,
        keep: int = 1,
    ) -> dict:
        reply = self.call(
            op="run",
            job=job,
            data=str(data),
            variant=variant,
            plan=plan or {},
            keep=keep,
            result=str(result) if result else None,
            lock_wait=lock_wait,
            detach=detach,
        )
        if result and reply["status"] == "exited" and Path(result).is_file():
            reply["result"] = json.loads(Path(result).read_text())
        return reply

    def wait(self, pid: int) -> dict:
        return self.call(op="wait", pid=pid)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def read_trace(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "serve":
    serve(sys.argv[2], sys.argv[3])
