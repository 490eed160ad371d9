"""The encoder alone on the real length mix (issue 30 item 4): batch 1 against the batching recipe 5 allows, and
both against torch fp32, in one run.

    PYTHONPATH=. .venv/bin/python bench/encoder_alone.py --data DATA_DIR [--texts 600] [--rounds 3]

Texts: the model's inputs of a built snapshot (``embed_text`` of every chunk of ``--data``'s live snapshot, the real
docs by default: bench_retrieval's data directory), distinct, ordered by content hash and sampled evenly, so the
sample keeps the corpus's length mix (short headings to 256-token passages).

Sides, each on the same texts:

- ``recipe 4, batch 1``: the int8 encoder before issue 30 (dynamic activation scales: one text per run), the
  reference of the goal "≥ 1.5× today's batch-1 int8 encoder";
- ``recipe 5, batch 1``: today's encoder run one text at a time;
- ``recipe 5, batched``: today's encoder as the build runs it (texts of one token length together, up to
  ``SAME_LENGTH_BATCH``);
- ``torch fp32``: sentence-transformers' ``encode(batch_size=32)`` over the length-sorted texts (its best case).

The int8 sides use the encoder's default threads (the usable cores), as the build does.  The sides take turns on
chunks of the sample (the first side rotates per chunk), their times are summed per round, and each ratio is
taken within a round; the median over rounds is reported (neighbours change the machine's speed from second to
second: a ratio of far-apart measurements would measure them).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import ENCODER_CACHE, WORK, figure, print_figures, save, setup_env  # noqa: E402

GOAL_VS_BATCH1 = 1.5  # issue 30: the encoder alone on the real mix >= 1.5x today's batch-1 int8 encoder
CHUNK = 50
SIDES = ("recipe 4, batch 1", "recipe 5, batch 1", "recipe 5, batched", "torch fp32")


def real_mix(data: Path, n: int) -> list[str]:
    """``n`` distinct model inputs of ``data``'s live snapshot, evenly over their content hashes."""
    import pyarrow.parquet as pq

    from trustindex.schemas.embedded_text import embed_text
    from trustindex.schemas.snapshot import resolve_current

    t = pq.read_table(resolve_current(data) / "chunks.parquet", columns=["heading_path", "symbol_path", "path", "text"])
    rows = t.to_pylist()
    texts = {embed_text(r["heading_path"] or [], r["symbol_path"], r["path"], r["text"]) for r in rows}
    ordered = sorted(texts, key=lambda s: hashlib.sha256(s.encode()).hexdigest())
    step = max(1, len(ordered) // n)
    return ordered[::step][:n]


def sides() -> dict[str, Callable[[list[str]], object]]:
    from sentence_transformers import SentenceTransformer

    from trustindex.encoder.onnx_embedder import OnnxEmbedder
    from trustindex.schemas.embedding_model import model_path

    r4 = OnnxEmbedder(ENCODER_CACHE, recipe=4).encoder
    r5 = OnnxEmbedder(ENCODER_CACHE, recipe=5).encoder
    if r4.batch_independent or not r5.batch_independent:
        raise RuntimeError("expected recipe 4 batch-dependent and recipe 5 batch-independent encoders")
    torch_model = SentenceTransformer(str(model_path()), device="cpu", local_files_only=True)

    def torch_encode(texts: list[str]) -> object:
        return torch_model.encode(sorted(texts, key=len), batch_size=32, show_progress_bar=False)

    return {
        SIDES[0]: lambda texts: r4.encode(texts, batch_size=1),
        SIDES[1]: lambda texts: r5.encode(texts, batch_size=1),
        SIDES[2]: lambda texts: r5.encode(texts),
        SIDES[3]: torch_encode,
    }


def measure(texts: list[str], rounds: int) -> dict:
    """Seconds per side per round over the same chunks, the sides taking turns."""
    run = sides()
    for fn in run.values():  # untimed: sessions, thread pools and torch's first call warmed
        fn(texts[:8])
    chunks = [texts[i : i + CHUNK] for i in range(0, len(texts), CHUNK)]
    per_round: list[dict[str, float]] = []
    for _ in range(rounds):
        took = dict.fromkeys(run, 0.0)
        for j, chunk in enumerate(chunks):
            names = list(run)
            for name in names[j % len(names) :] + names[: j % len(names)]:
                t0 = time.perf_counter()
                run[name](chunk)
                took[name] += time.perf_counter() - t0
        per_round.append(took)
    return {"texts": len(texts), "rounds": per_round}


def figures(result: dict) -> list[dict]:
    n, rounds = result["texts"], result["rounds"]

    def median_ratio(side: str, ref: str) -> float:
        return statistics.median(r[ref] / r[side] for r in rounds)  # > 1: ``side`` is faster

    out = []
    for side in SIDES:
        rate = statistics.median(n / r[side] for r in rounds)
        kw: dict = {}
        if side != SIDES[3]:
            kw = {
                "reference": "torch fp32, same texts",
                "reference_value": statistics.median(n / r[SIDES[3]] for r in rounds),
                "ratio": median_ratio(side, SIDES[3]),
            }
        out.append(figure(f"encoder alone on the real mix: {side}", rate, "texts/s", **kw))
    ratio = median_ratio(SIDES[2], SIDES[0])
    out.append(
        figure(
            "encoder alone on the real mix: recipe 5 batched vs recipe 4 batch 1",
            ratio,
            "×",
            goal=f"≥ {GOAL_VS_BATCH1}",
            met=ratio >= GOAL_VS_BATCH1,
        )
    )
    out.append(
        figure("encoder alone on the real mix: recipe 5 batched vs batch 1", median_ratio(SIDES[2], SIDES[1]), "×")
    )
    return out


def run(data: Path, n: int, rounds: int) -> dict:
    texts = real_mix(data, n)
    before = round(os.getloadavg()[0], 2)
    result = measure(texts, rounds)
    result["load_average_1m"] = {"before": before, "after": round(os.getloadavg()[0], 2)}
    return {"figures": figures(result), "encoder_alone": result}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=WORK / "retrieval" / "data", help="a built data directory")
    ap.add_argument("--texts", type=int, default=600, help="texts sampled from the snapshot")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args(argv)
    setup_env()
    r = run(a.data, a.texts, a.rounds)
    print_figures("encoder", r["figures"])
    print(f"  load average (1 min): {r['encoder_alone']['load_average_1m']}")
    if not a.no_save:
        method = (
            f"bench/encoder_alone.py: {a.texts} distinct model inputs of the real docs' snapshot (evenly over their "
            f"content hashes), {a.rounds} rounds; the four sides take turns on chunks of {CHUNK} texts; ratios "
            "within a round, medians over rounds. Sides: recipe 4 int8 batch 1 (the encoder before issue 30), "
            "recipe 5 batch 1, recipe 5 batched (texts of one token length together), torch fp32 batch 32 over "
            "the length-sorted texts."
        )
        save("encoder_alone", {**r, "method": method})
    return 0


if __name__ == "__main__":
    sys.exit(main())
