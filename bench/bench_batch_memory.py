"""What one batch costs a server in memory (issue 40 item 5): the resident memory a ``trustindex serve`` process
gains above its idle RSS while it answers one batch, over MCP (``search_batch`` at ``/mcp``) and over
``/v1/search:batch``.  Two batches of 64 requests with 10,000-character queries (each a different text): the issue's
(k=100 each: 6,400 hits, now refused at the batch's hit cap) and the largest the default caps admit (k=15 each: 960
hits).  With ``--base REV`` the issue's batch also runs against that commit's server in the same run (the reference:
before the caps, the MCP tool returned the contract twice).

    python bench/bench_batch_memory.py [--data DIR] [--base REV] [--no-save]

A fresh server per case, on the real docs' snapshot (bench_retrieval's, built if missing); the RSS is sampled from
/proc every 10 ms while the call runs; idle is the RSS after a warm-up search, just before the call.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import figure, print_figures, save  # noqa: E402
from bench.serve_load import ServerProcess  # noqa: E402

GOAL_MIB = 200
REQUESTS, QUERY_CHARS = 64, 10_000
ISSUE_K, ADMITTED_K = 100, 15  # 6,400 hits; 960, under the default max_batch_hits of 1,000
EXTRA: dict = {}  # more arguments of the search_batch call (max_tokens, detail) when exploring
WORDS = (
    "how do I deploy a Compact contract to the testnet with the proof server and the wallet SDK while keeping "
    "private state in witnesses and reading the ledger from the indexer through the GraphQL API"
).split()


def queries() -> list[str]:
    """64 different 10,000-character questions (the words of one, rotated per request)."""
    out = []
    for n in range(REQUESTS):
        words = WORDS[n % len(WORDS) :] + WORDS[: n % len(WORDS)]
        text = ""
        while len(text) < QUERY_CHARS:
            text += " ".join(words) + f" variant {n}. "
        out.append(text[:QUERY_CHARS])
    return out


class RssSampler:
    """The largest VmRSS of ``pid`` seen every 10 ms while running."""

    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def now(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.now())
            time.sleep(0.01)

    def __enter__(self) -> RssSampler:
        self.peak = self.now()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.now())


def _outcome(responses: list[dict]) -> str:
    unrun = sum(str(r.get("error", "")).startswith("not run") for r in responses)
    hits = sum(len(r.get("hits", [])) for r in responses)
    return f"{len(responses) - unrun} answered ({hits} hits)" + (f", {unrun} not run (byte cap)" if unrun else "")


def _mcp_batch(url: str, requests: list[dict]) -> str:
    import anyio
    from mcp import Client

    async def call() -> str:
        async with Client(f"{url}/mcp", read_timeout_seconds=900) as client:
            r = await client.call_tool("search_batch", {"requests": requests, **EXTRA})
            text = " ".join(c.text for c in r.content if getattr(c, "type", "") == "text")
            if r.is_error:
                return "refused: " + text.split(": ", 1)[-1][:80]
            responses = (r.structured_content or {}).get("responses") or json.loads(text)["responses"]
            return f"{_outcome(responses)}, {len(text):,} characters of text"

    return anyio.run(call)


def _v1_batch(url: str, requests: list[dict]) -> str:
    import httpx

    r = httpx.post(f"{url}/v1/search:batch", json={"requests": requests}, timeout=900)
    if r.status_code != 200:
        return f"refused (HTTP {r.status_code}): {r.json().get('error', '')[:80]}"
    return f"{_outcome(r.json()['responses'])}, {len(r.content):,} bytes"


def one_case(data: Path, transport: str, k: int, work: Path, pythonpath: Path | None = None) -> dict:
    """A fresh server, one warm-up search, then the batch; RSS idle (just before) and peak (during)."""
    import httpx

    requests = [{"query": q, "k": k} for q in queries()]
    with ServerProcess(data, work / f"{transport}-{k}.log", pythonpath=pythonpath) as server:
        httpx.post(f"{server.url}/v1/search", json={"query": "proof server memory", "k": 5}, timeout=300)
        time.sleep(1.0)
        sampler = RssSampler(server.proc.pid)
        idle = sampler.now()
        t0 = time.perf_counter()
        with sampler:
            answer = (_mcp_batch if transport == "mcp" else _v1_batch)(server.url, requests)
        seconds = time.perf_counter() - t0
    return {
        "transport": transport,
        "k": k,
        "idle_mib": round(idle, 1),
        "peak_mib": round(sampler.peak, 1),
        "above_idle_mib": round(sampler.peak - idle, 1),
        "seconds": round(seconds, 2),
        "answer": answer,
    }


def base_tree(rev: str, tmp: Path) -> Path:
    """``rev``'s files laid out as the installed package (trustindex/layout.py), for PYTHONPATH."""
    from trustindex.layout import link_tree

    archive, tree = tmp / "base.tar", tmp / "tree"
    subprocess.run(["git", "archive", "--format=tar", "-o", str(archive), rev], cwd=ROOT, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    link_tree(tree, tmp / "pkg")
    return tmp / "pkg"


NAMES = {"mcp": "MCP search_batch (/mcp)", "v1": "/v1/search:batch"}


def figures_of(cases: list[dict], base: list[dict]) -> list[dict]:
    out = []
    for c in cases:
        ref = next((b for b in base if b["transport"] == c["transport"] and b["k"] == c["k"]), None)
        hits = f"{REQUESTS} × k={c['k']} × {QUERY_CHARS:,} characters"
        out.append(
            figure(
                f"{NAMES[c['transport']]}, {hits}, {c['answer'].split(':')[0]}: RSS above idle",
                c["above_idle_mib"],
                "MiB",
                reference=f"base commit, same batch ({ref['answer'].split(':')[0]})" if ref else None,
                reference_value=ref["above_idle_mib"] if ref else None,
                ratio=round(c["above_idle_mib"] / ref["above_idle_mib"], 3) if ref and ref["above_idle_mib"] else None,
                goal=f"<= {GOAL_MIB} MiB",
                met=c["above_idle_mib"] <= GOAL_MIB,
            )
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="a data directory (default: the real docs' snapshot of bench_retrieval)")
    ap.add_argument("--base", help="also run the issue's batch against this commit's server (the reference)")
    ap.add_argument("--no-save", action="store_true", help="print only; leave results.json and the docs alone")
    a = ap.parse_args()
    if a.data:
        data = Path(a.data).resolve()
    else:
        from bench.bench_retrieval import RETRIEVAL_WORK, build_data

        data = build_data(RETRIEVAL_WORK)
    with tempfile.TemporaryDirectory(prefix="batch-memory-") as tmp:
        work = Path(tmp)
        cases = [one_case(data, t, k, work) for t in ("mcp", "v1") for k in (ISSUE_K, ADMITTED_K)]
        base: list[dict] = []
        if a.base:
            pkg = base_tree(a.base, work)
            base = [one_case(data, t, ISSUE_K, work, pythonpath=pkg) for t in ("mcp", "v1")]
    for c in [*cases, *({**b, "transport": f"{b['transport']} @ {a.base}"} for b in base)]:
        print(
            f"  {c['transport']:>12} k={c['k']:>3}: idle {c['idle_mib']} MiB, peak {c['peak_mib']} MiB "
            f"(+{c['above_idle_mib']}), {c['seconds']} s; {c['answer']}"
        )
    figures = figures_of(cases, base)
    print_figures("batch memory", figures)
    if not a.no_save:
        method = (
            f"bench/bench_batch_memory.py: a fresh `trustindex serve` over the real docs' snapshot per case, one "
            f"warm-up search, then one batch of {REQUESTS} different {QUERY_CHARS:,}-character queries over MCP "
            f"(search_batch at /mcp) or /v1/search:batch; VmRSS sampled every 10 ms, figure = peak during the call "
            f"minus the RSS just before it"
            + (f"; reference: the same batch against commit {a.base}'s server in the same run" if a.base else "")
            + "."
        )
        save("batch_memory", {"figures": figures, "method": method, "cases": cases, "base": base})
    return 0 if all(f["met"] for f in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
