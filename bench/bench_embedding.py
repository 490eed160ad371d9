"""Throughput and equivalence of the int8 ONNX encoder against sentence-transformers.

    PYTHONPATH=. .venv/bin/python bench/bench_embedding.py [--n 400] [--rounds 3] [--out FILE]

Passages: real prose from the Midnight docs corpus (front matter, fenced code, HTML/JSX
tags, comments and import lines removed), cut into 120-word pieces — about 185 tokens
each (median), the size the chunkers aim for — then evenly sampled.

Timing: the baseline is plain ``SentenceTransformer(model_path, device="cpu").encode(texts)``
(torch fp32, its default batch 32).  The two sides take turns on the same chunks of 50
passages (which goes first alternates), their times are summed per round, the ratio is
taken within each round and the median across rounds is reported: on a shared machine
the load changes from second to second, and a ratio of two far-apart measurements would
mostly measure the neighbours.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from trustindex.encoder.onnx_export import ensure_encoder  # noqa: E402
from trustindex.query.onnx_encoder import OnnxEncoder, available_cores  # noqa: E402
from trustindex.schemas.embedding_model import Backend, model_path  # noqa: E402

CORPUS = Path(os.environ.get("TRUSTINDEX_BENCH_CORPUS", ROOT.parent / "shared" / "corpus" / "midnight-docs"))
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_COMMENT = re.compile(r"<!--.*?-->|\{/\*.*?\*/\}", re.S)
_TAG = re.compile(r"</?[A-Za-z][^>\n]*>")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")


def _prose(text: str) -> str:
    """Markdown/MDX with the non-prose parts taken out (what a reader would call the passage's words)."""
    text = _COMMENT.sub(" ", _FENCE.sub(" ", _FRONT_MATTER.sub("", text)))
    text = "\n".join(line for line in text.splitlines() if not line.startswith(("import ", "export ")))
    return _LINK_TARGET.sub("]", _TAG.sub(" ", text))


def corpus_passages(root: Path = CORPUS, n: int = 400, words: int = 120) -> list[str]:
    """``n`` real passages of ``words`` words, evenly sampled over the corpus in path order (deterministic)."""
    files = sorted(
        p for p in Path(root).rglob("*") if p.suffix in (".md", ".mdx") and p.is_file() and not p.is_symlink()
    )
    pieces: list[str] = []
    for f in files:
        w = _prose(f.read_text(encoding="utf-8", errors="replace")).split()
        pieces.extend(" ".join(w[i : i + words]) for i in range(0, len(w) - words + 1, words))
    if not pieces:
        raise SystemExit(f"{root}: no passages of {words} words found")
    step = max(1, len(pieces) // n)
    return pieces[::step][:n]


def run(
    n: int, rounds: int, batch_size: int | None, threads: int | None, cache: Path, chunk: int, cpu_time: bool = False
) -> dict:
    import torch
    from sentence_transformers import SentenceTransformer

    clock = time.perf_counter
    if cpu_time:
        # One thread each, timed by the calling thread's CPU clock: what each side costs in
        # CPU, independent of what the neighbours on a shared machine are doing.
        # Tokenizers would otherwise encode batches on rayon threads this clock does not see.
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
        torch.set_num_threads(1)
        threads, clock = 1, time.thread_time

    texts = corpus_passages(n=n)
    weights = model_path()
    t0 = time.perf_counter()
    files = ensure_encoder(cache, weights)
    ensure_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    fast = OnnxEncoder(files.directory, threads=threads)
    load_s = time.perf_counter() - t0
    st = SentenceTransformer(str(weights), device="cpu", local_files_only=True)
    lengths = fast.token_lengths(texts)
    # Warm both (first calls allocate arenas and pick kernels).
    st.encode(texts[:32])
    fast.encode(texts[:32], batch_size=batch_size)
    chunks = [texts[i : i + chunk] for i in range(0, len(texts), chunk)]
    ref_rates, fast_rates, ratios = [], [], []
    ref_parts: list[np.ndarray] = []
    fast_parts: list[np.ndarray] = []
    for r in range(rounds):
        spent = {"ref": 0.0, "fast": 0.0}
        ref_parts, fast_parts = [], []
        for k, part in enumerate(chunks):
            # Alternate which side goes first, so neither always inherits the other's cache state.
            sides = ("ref", "fast") if (k + r) % 2 == 0 else ("fast", "ref")
            for side in sides:
                t0 = clock()
                if side == "ref":
                    ref_parts.append(st.encode(part))
                else:
                    fast_parts.append(fast.encode(part, batch_size=batch_size))
                spent[side] += clock() - t0
        ref_rate, fast_rate = len(texts) / spent["ref"], len(texts) / spent["fast"]
        ref_rates.append(ref_rate)
        fast_rates.append(fast_rate)
        ratios.append(fast_rate / ref_rate)
        print(
            f"  round {r + 1}: reference {ref_rate:6.1f}/s  {Backend.ONNX_INT8} {fast_rate:6.1f}/s  "
            f"ratio {fast_rate / ref_rate:.2f}",
            flush=True,
        )
    ref = np.vstack(ref_parts).astype(np.float32)
    emb = np.vstack(fast_parts)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)  # ST already normalises; guards a config change
    cos = (emb * ref).sum(axis=1)
    t0 = clock()
    queries = ("how do I install the compact compiler", "what is a witness", "deploy a contract to testnet")
    for q in queries:
        fast.encode([q])
    query_ms = (clock() - t0) / len(queries) * 1000
    return {
        "passages": len(texts),
        "tokens_median": float(np.median(lengths)),
        "tokens_mean": float(np.mean(lengths)),
        "truncated_at_256": int(sum(x >= 256 for x in lengths)),
        "rounds": rounds,
        "chunk": chunk,
        "clock": "thread CPU time, 1 thread each" if cpu_time else "wall",
        "batch_size": batch_size,
        "onnx_threads": fast.threads,
        "torch_threads": torch.get_num_threads(),
        "cores": available_cores(),
        "load_average_1m": os.getloadavg()[0],
        "reference_passages_per_s": float(np.median(ref_rates)),
        "onnx_passages_per_s": float(np.median(fast_rates)),
        "ratio_median": float(np.median(ratios)),
        "ratios": [round(x, 3) for x in ratios],
        "cosine_median": float(np.median(cos)),
        "cosine_min": float(cos.min()),
        "cosine_p1": float(np.percentile(cos, 1)),
        "onnx_load_s": load_s,
        "ensure_encoder_s": ensure_s,
        "onnx_query_ms": query_ms,
        "model_id": fast.model_id,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=400, help="passages (default 400)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds (default 3)")
    ap.add_argument(
        "--batch-size", type=int, help="onnx texts per run at most (default: the encoder's own: same-length runs)"
    )
    ap.add_argument("--chunk", type=int, default=50, help="passages per interleaved timing step (default 50)")
    ap.add_argument("--threads", type=int, default=None, help="onnxruntime intra-op threads (default: cores)")
    ap.add_argument(
        "--cpu-time", action="store_true", help="one thread each, timed in thread CPU time (robust on a shared machine)"
    )
    ap.add_argument(
        "--cache",
        type=Path,
        default=Path(tempfile.gettempdir()) / "trustindex-encoder-cache",
        help="where the export is cached (reused when the source weights are unchanged)",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results_embedding.json")
    args = ap.parse_args(argv)
    r = run(args.n, args.rounds, args.batch_size, args.threads, args.cache, args.chunk, args.cpu_time)
    print(f"clock: {r['clock']}")
    print(
        f"passages: {r['passages']} (median {r['tokens_median']:.0f} tokens, {r['truncated_at_256']} truncated), "
        f"{r['cores']} cores, load {r['load_average_1m']:.1f}"
    )
    print(f"reference ({Backend.SENTENCE_TRANSFORMERS}, torch fp32): {r['reference_passages_per_s']:.1f} passages/s")
    print(
        f"onnx int8 (batch {r['batch_size']}, {r['onnx_threads']} threads): {r['onnx_passages_per_s']:.1f} passages/s"
    )
    print(f"ratio: {r['ratio_median']:.2f}x (per round {r['ratios']})")
    print(f"cosine: median {r['cosine_median']:.4f}  min {r['cosine_min']:.4f}  p1 {r['cosine_p1']:.4f}")
    print(f"onnx load {r['onnx_load_s']:.2f} s, one query {r['onnx_query_ms']:.1f} ms")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(r, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
