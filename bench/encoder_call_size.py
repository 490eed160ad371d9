"""The build's encoder fed 512 texts in one call or in parts of 128, in one run (issue 41 item 5).

    PYTHONPATH=. .venv/bin/python bench/encoder_call_size.py --data DATA_DIR [--texts 2048] [--rounds 3]

A killed build loses the embedding worker's call in flight and the vectors not yet committed, so both are kept as
small as the encoder's throughput allows (``worker.MAX_TEXTS_PER_CALL``, ``embedding_cache.COMMIT_TEXTS``).  The
worker hands the encoder what has queued up, in the order the sources extracted it, and the encoder runs the texts
of one token length together inside each call: a smaller call holds shorter same-length runs.  This measures what
that costs on the real length mix.

Texts: ``encoder_alone.real_mix`` (the model inputs of ``--data``'s live snapshot, distinct, sampled evenly over
their content hashes). Each round feeds every call size the same texts, the sizes taking turns on blocks of 512
texts (the first size rotates per block); the throughput ratio to 512-text calls is taken within a round and its
median over rounds reported (neighbours change the machine's speed from second to second).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import ENCODER_CACHE, WORK, figure, machine, print_figures, save, setup_env  # noqa: E402
from bench.encoder_alone import real_mix  # noqa: E402
from trustindex.encoder.worker import ENCODE_PART, MAX_TEXTS_PER_CALL, encode_parts  # noqa: E402

BLOCK = MAX_TEXTS_PER_CALL  # what the worker takes from its queue at most
PART = ENCODE_PART  # what it hands the encoder at once, then commits
SIDES = (
    f"one call of {BLOCK}",  # the worker before this change, the reference
    f"{BLOCK} sorted by length, calls of {PART}",  # the worker now
    f"calls of {PART} in arrival order",
)


def measure(texts: list[str], rounds: int) -> list[dict[str, float]]:
    """Seconds per side per round, over the same blocks of texts (in the snapshot's sampled order)."""
    from trustindex.encoder.onnx_embedder import OnnxEmbedder

    encoder = OnnxEmbedder(ENCODER_CACHE)  # the default recipe and threads, as the build's worker loads it
    encoder.encode(texts[:16])  # untimed: sessions and thread pool warmed

    def in_parts(block: list[str]) -> None:
        for i in range(0, len(block), PART):
            encoder.encode(block[i : i + PART])

    def as_the_worker(block: list[str]) -> None:
        call = dict(enumerate(block))
        for part in encode_parts(call):
            encoder.encode([call[j] for j in part])

    run = {SIDES[0]: encoder.encode, SIDES[1]: as_the_worker, SIDES[2]: in_parts}
    blocks = [texts[i : i + BLOCK] for i in range(0, len(texts), BLOCK)]
    per_round = []
    for _ in range(rounds):
        took = dict.fromkeys(SIDES, 0.0)
        for j, block in enumerate(blocks):
            for side in SIDES[j % len(SIDES) :] + SIDES[: j % len(SIDES)]:
                t0 = time.perf_counter()
                run[side](block)
                took[side] += time.perf_counter() - t0
        per_round.append(took)
    return per_round


def figures(n: int, rounds: list[dict[str, float]]) -> list[dict]:
    ref = SIDES[0]
    out = []
    for side in SIDES:
        rate = statistics.median(n / r[side] for r in rounds)
        kw: dict = {}
        if side != ref:
            kw = {
                "reference": f"{ref}, same texts",
                "reference_value": statistics.median(n / r[ref] for r in rounds),
                "ratio": statistics.median(r[ref] / r[side] for r in rounds),  # > 1: faster than the reference
            }
        out.append(figure(f"encoder fed {side} (real mix)", rate, "texts/s", **kw))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=WORK / "retrieval" / "data", help="a data directory with a snapshot")
    ap.add_argument("--texts", type=int, default=2048, help="distinct texts sampled from the snapshot")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-save", action="store_true", help="leave bench/results.json and docs/benchmarks.md alone")
    a = ap.parse_args(argv)
    setup_env()
    texts = real_mix(a.data, a.texts)
    rounds = measure(texts, a.rounds)
    figs = figures(len(texts), rounds)
    print_figures("the build's encoder by call size", figs)
    if not a.no_save:
        save(
            "encoder_call_size",
            {
                "figures": figs,
                "machine": machine(),
                "method": (
                    f"bench/encoder_call_size.py: {len(texts)} distinct model inputs of a real-docs snapshot, encoded "
                    f"by the default int8 encoder, blocks of {BLOCK} texts fed as {'; '.join(SIDES)}, the sides "
                    f"taking turns per block; {a.rounds} rounds, median of the per-round ratios."
                ),
            },
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
