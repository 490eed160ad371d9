"""What the serving tests share: a real S3 endpoint (moto's server) and ``trustindex serve`` in its own process.

Both listen on loopback only; the server process is bounded by a readiness deadline and stopped on exit."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from bench.serve_load import free_port, stop_process

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
