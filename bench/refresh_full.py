"""The full real-docs corpus, built as a user builds it, against plain torch encoding of the same texts.

Used by bench/bench_refresh.py (``--corpus full``).  Every build and refresh is
``python -m trustindex.cli.main refresh --quiet`` in a fresh process on a data directory that
starts empty, so the whole build includes process start, imports and Prefect's ephemeral
server (its state in the data directory, as a user's first run).  The flow's own time is
``seconds`` in the run's ``last_run.json``; the file is written as the flow ends, so its
modification time places the flow on the wall clock: start-up = flow start − launch, and
what follows the flow (summary, server shut-down, exit) is reported as well.

Reference: ``SentenceTransformer(path, device="cpu").encode(texts, batch_size=32)`` in a
fresh process (parts of 512 length-sorted texts, so a time budget can stop it) on the distinct texts the
build embedded (the snapshot's chunks as
``schemas.embedded_text.embedding_input`` rebuilds them, first text of each content hash, sorted
by length), model load excluded.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import bench_env, run_measured  # noqa: E402

ENCODE_BATCH = 32


def cli_refresh(sources: Path, data: Path, timeout: float = 3600) -> dict:
    """One ``trustindex refresh`` in a fresh process: wall time, peak RSS, the flow's time and start-up."""
    from trustindex.warehouse.runs import RUN_RECORD

    env = bench_env()
    env.pop("PREFECT_HOME", None)  # the command keeps Prefect's state in the data directory, as for a user
    cmd = [sys.executable, "-m", "trustindex.cli.main", "refresh", "--sources", str(sources), "--data", str(data)]
    launched = time.time()
    r = run_measured([*cmd, "--quiet"], env=env, timeout=timeout)
    ended = time.time()
    if r["rc"] != 0:
        raise RuntimeError(f"trustindex refresh failed (exit {r['rc']}):\n{r['stderr'][-3000:]}")
    record_file = data / RUN_RECORD
    record = json.loads(record_file.read_text())
    flow_s = float(record["seconds"])
    flow_end = record_file.stat().st_mtime
    stages: dict[str, float] = {}
    for s in record.get("stages") or []:
        stages[s["stage"]] = round(stages.get(s["stage"], 0.0) + float(s["seconds"]), 3)
    return {
        "wall_s": r["wall_s"],
        "rss_mib": round(r["rss_mib"], 1),
        "flow_s": flow_s,
        # the measuring wrapper's own start (~0.05 s) falls in start-up and after-flow; both are rounded to it
        "start_up_s": max(0.0, flow_end - flow_s - launched),
        "after_flow_s": max(0.0, ended - flow_end),
        "stages_s": stages,
        "reused_snapshot": record.get("reused_snapshot"),
        "embeddings": record.get("embeddings"),
        "chunks": (record.get("row_counts") or {}).get("chunks"),
    }


def distinct_embedded_texts(data: Path) -> list[str]:
    """The texts the build embedded: one per content hash, in chunk order (as encoder.embedding_cache does)."""
    import pyarrow.parquet as pq

    from trustindex.schemas.embedded_text import embedding_input
    from trustindex.schemas.snapshot import TABLE_FILES, resolve_current

    chunks = pq.read_table(resolve_current(data) / TABLE_FILES["chunks"])
    first: dict[str, str] = {}
    for sha, text in zip(chunks.column("content_sha256").to_pylist(), embedding_input(chunks), strict=True):
        first.setdefault(sha, text)
    return list(first.values())


def torch_encode(texts: list[str], work: Path, budget_s: float | None = None, timeout: float = 7200) -> dict:
    """Plain sentence-transformers encoding of ``texts`` in a fresh process (model load timed apart).

    With ``budget_s`` the worker stops after the first part that passes the budget: ``done`` < ``texts``, and
    ``lower_bound_s`` = its time × texts / done, a lower bound of the whole encode (the texts are sorted by
    length, so each one left is at least as long as any encoded).
    """
    work.mkdir(parents=True, exist_ok=True)
    path = work / "texts.json"
    path.write_text(json.dumps(sorted(texts, key=len)))
    cmd = [sys.executable, str(Path(__file__).resolve()), str(path), str(budget_s or 0)]
    r = run_measured(cmd, timeout=timeout)
    if r["rc"] != 0:
        raise RuntimeError(f"torch encode failed:\n{r['stderr'][-3000:]}")
    out = json.loads(r["stdout"].strip().splitlines()[-1])
    out["rss_mib"] = round(r["rss_mib"], 1)
    out["lower_bound_s"] = out["encode_s"] * out["texts"] / max(1, out["done"])
    return out


def encoder_encode(texts: list[str], work: Path, timeout: float = 7200) -> dict:
    """The build's own encoder (the default backend) over ``texts`` in a fresh process, as the build's embedding
    worker calls it (calls of its MAX_TEXTS_PER_CALL in chunk order, each fed by the worker's ``encode_parts``),
    model load timed apart (issue 41 item 3)."""
    work.mkdir(parents=True, exist_ok=True)
    path = work / "texts.json"
    path.write_text(json.dumps(texts))
    r = run_measured([sys.executable, str(Path(__file__).resolve()), str(path), "0", "encoder"], timeout=timeout)
    if r["rc"] != 0:
        raise RuntimeError(f"encoder encode failed:\n{r['stderr'][-3000:]}")
    return json.loads(r["stdout"].strip().splitlines()[-1])


def _encoder_worker(texts_file: str) -> dict:
    from trustindex.encoder.factory import make_embedder
    from trustindex.encoder.worker import MAX_TEXTS_PER_CALL, encode_parts
    from trustindex.schemas.embedding_model import DEFAULT_BACKEND, encoder_cache_dir

    texts = json.loads(Path(texts_file).read_text())
    t0 = time.perf_counter()
    embedder = make_embedder(DEFAULT_BACKEND, cache_dir=encoder_cache_dir(Path(texts_file).parent))
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(0, len(texts), MAX_TEXTS_PER_CALL):
        call = dict(enumerate(texts[i : i + MAX_TEXTS_PER_CALL]))
        for part in encode_parts(call):
            embedder.encode([call[j] for j in part])
    return {"texts": len(texts), "load_s": load_s, "encode_s": time.perf_counter() - t0}


def _encode_worker(texts_file: str, budget_s: float) -> dict:
    from sentence_transformers import SentenceTransformer

    from trustindex.schemas.embedding_model import model_path

    texts = json.loads(Path(texts_file).read_text())
    t0 = time.perf_counter()
    model = SentenceTransformer(str(model_path()), device="cpu")
    load_s = time.perf_counter() - t0
    done, t0 = 0, time.perf_counter()
    # Parts of 16 batches: the same batches as one encode call over the length-sorted texts, with a check of
    # the budget between parts.
    while done < len(texts) and not (budget_s and time.perf_counter() - t0 > budget_s):
        part = texts[done : done + 16 * ENCODE_BATCH]
        model.encode(part, batch_size=ENCODE_BATCH, show_progress_bar=False)
        done += len(part)
    return {"texts": len(texts), "done": done, "load_s": load_s, "encode_s": time.perf_counter() - t0}


if __name__ == "__main__":
    if sys.argv[3:] == ["encoder"]:
        print(json.dumps(_encoder_worker(sys.argv[1])))
    else:
        print(json.dumps(_encode_worker(sys.argv[1], float(sys.argv[2]))))
