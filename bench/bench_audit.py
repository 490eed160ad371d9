"""The audit log's cost under the serving bench's load (issue 44): ``trustindex serve`` without and with
``--audit-log``, 16 clients, in one run.

    PYTHONPATH=. .venv/bin/python bench/bench_audit.py [--data DIR] [--size 20000] [--rounds 4] [--duration 8]
        [--clients 16] [--no-save]

Two servers over the same snapshot (``--data DIR``, else bench/synthetic.py's ``--size`` passages, as
bench/bench_serve.py), each in its own process (bench/serve_load.py ``ServerProcess``), one plain and one writing
``--audit-log``; both stay up for the whole run and take turns, ``--rounds`` times each, in alternating order
(plain, audit; audit, plain; ...), under bench/serve_load.py's ``http_load`` (threads, one keep-alive httpx client
each, POST /v1/search k 10, the 30 questions of bench/bench_query.py in turn, a round bounded by ``--duration`` s).
Ratio: the audit server's queries/s over the plain one's, every round's requests over every round's time; the goal
(issue 44) is ≥ 0.9.  Afterwards the audit server is stopped (its writer drains) and its file must hold one line
per answered search, none dropped (its /metrics).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import WORK, figure, machine, print_figures, save, setup_env  # noqa: E402
from bench.serve_load import LoadBounds, ServerProcess, http_load  # noqa: E402

GOAL_RATIO = 0.9


def audit_counts(url: str) -> dict[str, int]:
    """The server's trustindex_audit_lines_total by result (its /metrics)."""
    import httpx

    out = {"written": 0, "dropped": 0}
    for line in httpx.get(f"{url}/metrics", timeout=30).text.splitlines():
        if line.startswith("trustindex_audit_lines_total{"):
            out[line.split('result="', 1)[1].split('"', 1)[0]] = int(float(line.rsplit(" ", 1)[1]))
    return out


def line_cost_us(n: int = 20_000) -> float:
    """CPU seconds a search line costs, request side and writer thread together (µs): ``n`` lines of a 10-hit
    search written in a loop through the server's own path (``AccessEvents.answered``), the log closed."""
    import tempfile

    from trustindex.serve.access import Identity
    from trustindex.serve.audit import AccessEvents, AuditLog, AuditSpec, search_fields

    result = {"snapshot_id": "0" * 16, "hits": [{"chunk_id": f"{i:024x}"} for i in range(10)], "abstained": False}
    with tempfile.TemporaryDirectory() as tmp:
        log = AuditLog(AuditSpec(path=f"{tmp}/a.jsonl", queue_size=n + 1))
        events, who = AccessEvents(None, log), Identity("bench", "token")
        start = time.process_time()
        for _ in range(n):
            events.answered(who, "/v1/search", 200, 0.01, search_fields({"query": QUESTION, "k": 10}, result, False))
        log.close()
        return (time.process_time() - start) / n * 1e6


QUESTION = "How do I install the Compact compiler and pin its version?"


def compact(r: dict) -> dict:
    """What a round keeps in results.json."""
    return {k: r[k] for k in ("qps", "requests", "wall_s", "p50_ms", "p99_ms", "errors", "load_average_1m")}


def run(data: Path, rounds: int, clients: int, bounds: LoadBounds) -> dict:
    from bench.bench_query import QUESTIONS

    work = WORK / "audit-bench"
    work.mkdir(parents=True, exist_ok=True)
    log = work / "audit.jsonl"
    for old in work.glob("audit.jsonl*"):
        old.unlink()
    load_before = round(os.getloadavg()[0], 2)
    per: dict[str, list[dict]] = {"plain": [], "audit": []}
    audit_server = ServerProcess(data, work / "serve-audit.log", extra=("--audit-log", str(log)))
    with ServerProcess(data, work / "serve-plain.log") as plain, audit_server as audited:
        servers = {"plain": plain, "audit": audited}
        for n in range(rounds):
            for side in ("plain", "audit") if n % 2 == 0 else ("audit", "plain"):
                r = http_load(servers[side].url, list(QUESTIONS), clients, bounds)
                r["load_average_1m"] = round(os.getloadavg()[0], 2)
                per[side].append(r)
                print(f"  round {n + 1}, {side}: {r['qps']} q/s, p99 {r['p99_ms']} ms, load {r['load_average_1m']}")
        counts = audit_counts(audited.url)
    answered = sum(r["requests"] + clients for r in per["audit"])  # each round: one untimed request per client
    lines = [json.loads(x) for f in sorted(work.glob("audit.jsonl*")) for x in f.read_text().splitlines()]
    searches = sum(1 for x in lines if x.get("route") == "/v1/search")
    qps = {side: sum(r["requests"] for r in rs) / sum(r["wall_s"] for r in rs) for side, rs in per.items()}
    ratio = qps["audit"] / qps["plain"]
    cost = line_cost_us()
    search_ms = 1000 * sum(r["wall_s"] for r in per["plain"]) / sum(r["requests"] for r in per["plain"])
    at = f"{clients} clients, repeated questions"
    figures = [
        figure(f"HTTP queries/s, no audit log @ {at}", round(qps["plain"], 1), "q/s"),
        figure(
            f"HTTP queries/s, audit log on @ {at}",
            round(qps["audit"], 1),
            "q/s",
            reference="no audit log, same run, interleaved",
            reference_value=round(qps["plain"], 1),
            ratio=ratio,
            goal=f"≥ {GOAL_RATIO}×",
            met=ratio >= GOAL_RATIO,
        ),
        figure(
            "audit log lines for the answered searches",
            searches,
            "lines",
            reference="searches answered",
            reference_value=answered,
            goal="one each, none dropped",
            met=searches == answered and counts["dropped"] == 0,
        ),
        figure("CPU per audit line (request side and writer thread), in a loop", round(cost, 1), "µs"),
    ]
    m = machine()
    section = [
        "## The audit log under load (issue 44)",
        "",
        f"`bench/bench_audit.py`: two `trustindex serve` processes over one snapshot ({data.name}), one writing "
        f"`--audit-log`, {clients} clients, {rounds} rounds each of {bounds.duration_s:g} s, interleaved. "
        f"CPU {m.get('cpu_model')}, {m.get('nproc')} cores, 1-minute load {load_before} at the start, "
        f"{max(r['load_average_1m'] for rs in per.values() for r in rs)} at most during the rounds.",
        "",
        "| round | no audit log, q/s | audit log on, q/s |",
        "|---|---|---|",
        *(
            f"| {n + 1} | {a['qps']} | {b['qps']} |"
            for n, (a, b) in enumerate(zip(per["plain"], per["audit"], strict=True))
        ),
        f"| all | {qps['plain']:.1f} | {qps['audit']:.1f} (×{ratio:.3f}) |",
        "",
        f"The audit file held {searches} search lines for {answered} searches answered; "
        f"{counts['dropped']} lines dropped (a full queue; `trustindex_audit_lines_total`). A line costs "
        f"{cost:.0f} µs of CPU (request side and writer thread, 20,000 lines in a loop) against "
        f"the {search_ms:.1f} ms between two answers of the plain server (all its rounds), so the rounds' spread is "
        "the machine's other load, and the ratio over every round is the figure.",
    ]
    return {
        "figures": figures,
        "rounds": {side: [compact(r) for r in rs] for side, rs in per.items()},
        "audit_lines": {"searches": searches, "answered": answered, **counts},
        "load_average_1m_before": load_before,
        "section": section,
        "method": "bench/bench_audit.py: `trustindex serve` without and with --audit-log over the same snapshot, "
        f"both running, taking turns ({rounds} rounds each, alternating order) under bench/serve_load.py's "
        f"http_load at {clients} clients (POST /v1/search k 10, the 30 questions of bench_query.py), "
        f"{bounds.duration_s:g} s a round; ratio = the audit server's requests/s over all its rounds / the plain "
        "one's; the audit file read back after the server stopped.",
    }


def snapshot(data_dir: str | None, size: int) -> Path:
    if data_dir:
        return Path(data_dir)
    from bench import synthetic

    return synthetic.build(size, ann=False)[0]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", metavar="DIR", help="a built data directory (else a synthetic snapshot of --size)")
    ap.add_argument("--size", type=int, default=20_000, help="synthetic passages when no --data")
    ap.add_argument("--rounds", type=int, default=4, help="rounds per server")
    ap.add_argument("--duration", type=float, default=8.0, help="seconds per round")
    ap.add_argument("--max-requests", type=int, default=20_000, help="requests per round at most")
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args(argv)
    setup_env()
    print(f"  load average (1 min) at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    r = run(snapshot(a.data, a.size), a.rounds, a.clients, LoadBounds(a.duration, a.max_requests))
    print_figures("audit", r["figures"])
    if not a.no_save:
        save("audit", r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
