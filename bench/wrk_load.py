"""bench/bench_serve.py's second load generator: the real ``wrk`` (https://github.com/wg/wrk; Debian package
``wrk``), when it is on PATH.

Why a second one: on a 2-core machine the Python clients of bench/serve_load.py (threads with httpx, one GIL)
spend about as much CPU per request as the server does, so their figures mix the server's cost with the load
generator's.  wrk is an event loop in C: one thread holds every connection, so the same closed loop (N
connections, each sending its next request when the previous answer arrives) measures the server with little
of the machine taken from it.  Both are reported side by side; neither replaces the other.

The request bodies cycle through the same query list as the Python clients; a Lua script (written per run,
loopback only) stops each thread after its share of ``max_requests`` and prints one JSON line at the end with the
counts and latency percentiles (wrk's own histogram, microseconds).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from bench.serve_load import LoadBounds

WRK = "wrk"
RESULT_MARK = "WRK-RESULT "
SCRIPT = r"""
local bodies = {%(bodies)s}
local limit = %(limit)d
local i, answered = 0, 0
local headers = {["Content-Type"] = "application/json"}
request = function()
  i = i %% #bodies + 1
  return wrk.format("POST", "/v1/search", headers, bodies[i])
end
response = function(status, hdrs, body)
  answered = answered + 1
  if answered >= limit then wrk.thread:stop() end
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '%(mark)s{"requests": %%d, "duration_us": %%d, "connect": %%d, "read": %%d, "write": %%d, "status": %%d, '
    .. '"timeout": %%d, "p50_us": %%d, "p95_us": %%d, "p99_us": %%d, "max_us": %%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(95), latency:percentile(99), latency.max))
end
"""


def available() -> bool:
    return shutil.which(WRK) is not None


def lua_string(s: str) -> str:
    """A Lua long-bracket string literal holding ``s`` verbatim (a level of '=' that ``s`` does not close)."""
    level = 0
    while f"]{'=' * level}]" in s:
        level += 1
    eq = "=" * level
    return f"[{eq}[{s}]{eq}]"


def wrk_load(url: str, queries: list[str], clients: int, bounds: LoadBounds, threads: int = 1) -> dict:
    """``clients`` wrk connections (``threads`` event loops) posting searches for ``bounds``; the same keys as
    serve_load.http_load's result (latencies over every answered request: wrk does not separate failures')."""
    if not url.startswith("http://127.0.0.1:"):
        raise ValueError(f"wrk load is for loopback servers only, got {url}")
    bodies = ",\n".join(lua_string(json.dumps({"query": q, "k": 10})) for q in queries)
    threads = max(1, min(threads, clients))
    script = SCRIPT % {"bodies": bodies, "limit": max(1, bounds.max_requests // threads), "mark": RESULT_MARK}
    with tempfile.TemporaryDirectory(prefix="trustindex-wrk-") as tmp:
        lua = Path(tmp) / "search.lua"
        lua.write_text(script, encoding="utf-8")
        cmd = [WRK, "-t", str(threads), "-c", str(clients), "-d", f"{bounds.duration_s:g}s", "-s", str(lua)]
        cmd += ["--timeout", "30s", url]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=bounds.duration_s + 120, env=os.environ)
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith(RESULT_MARK)), None)
    if p.returncode != 0 or line is None:
        raise RuntimeError(f"wrk failed ({p.returncode}): {p.stderr[-2000:] or p.stdout[-2000:]}")
    r = json.loads(line[len(RESULT_MARK) :])
    errors = {k: r[k] for k in ("connect", "read", "write", "status", "timeout") if r[k]}
    wall_s = r["duration_us"] / 1e6
    return {
        "requests": r["requests"],
        "ok": r["requests"] - r["status"],
        "errors": sum(errors.values()),
        "wall_s": round(wall_s, 3),
        "qps": round(r["requests"] / wall_s, 1) if wall_s > 0 else 0.0,
        "p50_ms": round(r["p50_us"] / 1000, 2),
        "p95_ms": round(r["p95_us"] / 1000, 2),
        "p99_ms": round(r["p99_us"] / 1000, 2),
        "max_ms": round(r["max_us"] / 1000, 2),
        "clients": clients,
        "failures": errors,
        "generator": f"wrk -t {threads} -c {clients}",
    }
