"""What the serving tests share: a real S3 endpoint (moto's server) and ``trustindex serve`` in its own process.

Both listen on loopback only; the server process is bounded by a readiness deadline and stopped on exit."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from bench.serve_load import free_port, stop_process
from trustindex.cli.main import main as cli
from trustindex.serve.http_app import ServeConfig, build_app
from trustindex.serve.live import SnapshotHolder
from trustindex.serve.metrics import ServeMetrics

S3_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


@contextmanager
def moto_s3() -> Iterator[str]:
    """A real S3 endpoint on loopback (moto's server), with test credentials in the environment; yields its URL."""
    from moto.server import ThreadedMotoServer

    with pytest.MonkeyPatch.context() as mp:
        for k, v in S3_ENV.items():
            mp.setenv(k, v)
        mp.delenv("AWS_ENDPOINT_URL", raising=False)
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        try:
            yield f"http://{host}:{port}"
        finally:
            server.stop()


class ServeProcess:
    """``trustindex serve ARGS`` on a free loopback port, polling every 0.2 s; ready once /readyz answers."""

    def __init__(self, args: list[str], log: Path, ready_timeout_s: float = 240):
        self.url = f"http://127.0.0.1:{free_port()}"
        self.argv = [sys.executable, "-m", "trustindex.cli.main", "serve", *args]
        self.argv += ["--port", self.url.rsplit(":", 1)[1], "--poll", "0.2"]
        self.log_path = log
        self.ready_timeout_s = ready_timeout_s

    def __enter__(self):
        self.log = self.log_path.open("w")
        env = {**os.environ, **S3_ENV}
        self.proc = subprocess.Popen(self.argv, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if httpx.get(f"{self.url}/readyz", timeout=5).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.__exit__()
        raise AssertionError(f"{' '.join(self.argv[3:])} did not become ready:\n{self.log_path.read_text()[-3000:]}")

    def __exit__(self, *exc) -> None:
        stop_process(self.proc)
        self.log.close()


class Running:
    def __init__(self, holder: SnapshotHolder, config: ServeConfig):
        import uvicorn

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.metrics = ServeMetrics()
        holder.events = self.metrics
        holder.poll()
        app = build_app(holder, config, self.metrics)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = f"http://127.0.0.1:{port}"

    def __enter__(self) -> Running:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


QUERIES = [  # (text, keyword arguments of Index.search)
    ("How do I install the Compact compiler?", {}),
    ("How do I install and pin a Compact compiler version with compact update?", {"k": 3}),
    ("How do witness functions supply private data to a circuit?", {}),
    ("Which operations do the MerkleTree and HistoricMerkleTree ledger types support?", {"k": 10}),
    ("What is the difference between the NIGHT token and DUST?", {}),
    ("proof server memory and CPU", {"k": 20}),
    ("counter contract circuit", {"targets": ["compact-language=0.23"], "strict": True}),
    ("counter contract circuit", {"targets": {"compact-language": "0.23.0"}, "k": 15}),
    ("counter contract", {"targets": ["compact-language=0.1.0"], "strict": True}),
    ("compact runtime version", {"targets": ["@midnight-ntwrk/compact-runtime=^0.8.0"]}),
    ("wallet api", {"targets": ["docs=v1"]}),
    ("ledger state", {"targets": ["compact-compiler=0.31", "compact-language=>=0.22"]}),
    ("Michael Jackson albums", {}),
    ("how to file taxes", {"k": 1}),
    ("Michael Jackson albums", {"also": ["The proof server generates zero-knowledge proofs."]}),
    ("Is the Wallet API still supported?", {}),
    ("Which ledger ADT operations are deprecated?", {"k": 7}),
    ("the of and", {}),
    ("proof\x00 server\x07 — доказательство 証明 سرور", {}),
    ("Escrow contract where the buyer releases payment", {"targets": ["compact-language=0.16"]}),
]


def export(data: Path, sid: str, to: str, endpoint: str | None, capsys) -> None:
    argv = ["export", sid, "--to", to, "--data", str(data)] + (["--endpoint", endpoint] if endpoint else [])
    assert cli(argv) == 0, capsys.readouterr().err
    assert f"exported snapshot {sid} to" in capsys.readouterr().out


def demo_with_page(demo: Path, work: Path, path: str, text: str) -> Path:
    """The demo corpus with one more community page (``path`` in community-contracts holding ``text``, committed by
    a community author), refreshed into ``work/data``; the session's demo stays as it is.  Returns the data dir."""
    import shutil
    from datetime import datetime, timedelta, timezone

    import git

    from trustindex.cli.build import load_build_config, run_refresh
    from trustindex.schemas.refresh_run import RefreshRequest

    repo = git.Repo(demo.parent / "repos" / "community-contracts")
    clone = work / "corpus" / "community-contracts"
    repo.clone(clone)
    sources = demo.parent / "sources.toml"
    text_of = sources.read_text(encoding="utf-8").replace('url = "repos/community-contracts"', f'url = "{clone}"')
    (clone.parent / "sources.toml").write_text(text_of, encoding="utf-8")
    for name in ("identities.toml", "verifications.toml", "policy.toml", "components.toml"):
        if (demo.parent / name).exists():
            shutil.copy(demo.parent / name, clone.parent / name)
    for name in ("midnight-docs", "partner-sdk"):
        (clone.parent / "repos").mkdir(exist_ok=True)
        (clone.parent / "repos" / name).symlink_to(demo.parent / "repos" / name)
    page = clone / path
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text, encoding="utf-8")
    r = git.Repo(clone)
    r.index.add([path])
    when = datetime(2026, 10, 25, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    who = git.Actor("Mika Tan", "mika@nightowls.example")
    r.index.commit(f"Add {path}", author=who, committer=who, author_date=when, commit_date=when)
    data = work / "data"
    run_refresh(load_build_config(str(clone.parent / "sources.toml")), RefreshRequest(str(data)))
    return data
