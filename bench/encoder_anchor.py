"""The project's encoder against what a user would pick: sentence-transformers' own ONNX and OpenVINO backends (issue
41 item 1), every side on the same real texts, turns interleaved within each round, in one run.

    PYTHONPATH=. .venv/bin/python bench/encoder_anchor.py --data DIR [--texts 1000] [--rounds 3] [--json OUT]
        [--python st-onnx=PATH] [--python st-openvino=PATH] [--sides ...]

Texts: the model inputs of ``--data``'s live snapshot (bench/encoder_alone.py ``real_mix``: distinct, evenly over
their content hashes, so the length mix a build embeds).  Sides (bench/anchor_side.py): ``trustindex`` (the
default encoder as a build runs it), ``st-onnx-fp32``, ``st-onnx-int8`` (``export_dynamic_quantized_onnx_model``
with this CPU's configuration), ``st-openvino-fp32``, ``st-openvino-int8`` (static, calibrated on the project's
shipped sample), ``torch-fp32``.  Each side is its own process, loaded once, with the interpreter of an environment
that has what it needs: sentence-transformers' ``[onnx]`` and ``[openvino]`` extras cannot be installed beside the
project's pins (the resolver's errors are in docs/embedding.md), so they live in environments of their own
(``bench/anchor_envs.sh`` makes them under ``.venv-anchors/``; ``--python GROUP=PATH`` names others).  A side whose
environment is missing is skipped, and the table says why.

Timing: the texts are cut into chunks of ``--chunk``; in each round every chunk is embedded by every side in turn
(the first side rotates per chunk) while the others wait, and a side's time is the sum of its encode calls, timed
inside its process.  ``texts_per_s`` is the median over rounds; each ratio is taken within a round, then the median.
Cosines are between each side's vector of a text and torch fp32's.  The JSON records the CPU's model and flags and
the load before and after every round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.anchor_side import NEEDS, SIDES, cpu_flags  # noqa: E402
from bench.common import ROOT, WORK, figure, machine, print_figures, save, setup_env  # noqa: E402

REFERENCE = "torch-fp32"
OURS = "trustindex"
ENVS = ROOT / ".venv-anchors"  # bench/anchor_envs.sh
GROUPS = {"st-onnx": ENVS / "onnx" / "bin" / "python", "st-openvino": ENVS / "openvino" / "bin" / "python"}
FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_tile", "amx_int8", "amx_bf16")
GOAL_COSINE_MEDIAN, GOAL_COSINE_MIN = 0.99, 0.98


def group_of(side: str) -> str | None:
    return next((g for g in GROUPS if side.startswith(g)), None)


def interpreter(side: str, pythons: dict[str, Path]) -> tuple[Path | None, str]:
    """The Python that runs ``side`` (this one when it can import what the side needs), or None and why not."""
    candidates = [Path(sys.executable)]
    group = group_of(side)
    if group:
        candidates.append(pythons.get(group, GROUPS[group]))
    tried = []
    for py in candidates:
        if not py.exists():
            tried.append(f"{py}: missing")
            continue
        p = subprocess.run([str(py), "-c", f"import {NEEDS[side]}"], capture_output=True, text=True, cwd=ROOT)
        if p.returncode == 0:
            return py, ""
        tried.append(f"{py}: {(p.stderr.strip().splitlines() or ['import failed'])[-1]}")
    return None, f"cannot import {NEEDS[side]} ({'; '.join(tried)}); make its environment with bench/anchor_envs.sh"


class Worker:
    """One side's process (bench/anchor_side.py) and its JSON-lines conversation."""

    def __init__(self, side: str, python: Path, args: list[str]):
        self.side = side
        env = dict(os.environ)
        env.setdefault("TOKENIZERS_PARALLELISM", "false")
        self.proc = subprocess.Popen(
            [str(python), str(ROOT / "bench" / "anchor_side.py"), side, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
        )
        self.ready = self._answer()

    def _answer(self) -> dict:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.side}: the side's process ended (exit {self.proc.wait()})")
        return json.loads(line)

    def ask(self, request: dict) -> dict:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return self._answer()

    def close(self) -> None:
        try:
            self.ask({"quit": True}) if self.proc.poll() is None else None
        except (BrokenPipeError, RuntimeError, json.JSONDecodeError):
            pass
        self.proc.wait(timeout=60)


def start_sides(wanted: list[str], pythons: dict[str, Path], side_args: list[str]) -> tuple[dict, dict]:
    """The workers that could start, and for the others why not."""
    workers, skipped = {}, {}
    for side in wanted:
        py, why = interpreter(side, pythons)
        if py is None:
            skipped[side] = why
            print(f"  {side}: skipped: {why}", flush=True)
            continue
        t0 = time.perf_counter()
        try:
            workers[side] = Worker(side, py, side_args)
        except RuntimeError as exc:
            skipped[side] = str(exc)
            print(f"  {side}: skipped: {exc}", flush=True)
            continue
        print(f"  {side}: ready in {time.perf_counter() - t0:.1f} s ({py})", flush=True)
    return workers, skipped


def measure(workers: dict[str, Worker], n: int, chunk: int, rounds: int) -> list[dict]:
    chunks = [(i, min(n, i + chunk)) for i in range(0, n, chunk)]
    names = list(workers)
    per_round = []
    for r in range(rounds):
        took = dict.fromkeys(names, 0.0)
        load_before = round(os.getloadavg()[0], 2)
        for j, (start, end) in enumerate(chunks):
            k = (j + r) % len(names)
            for name in names[k:] + names[:k]:
                took[name] += float(workers[name].ask({"encode": [start, end]})["seconds"])
        per_round.append({"seconds": took, "load_1m": {"before": load_before, "after": round(os.getloadavg()[0], 2)}})
        print(f"  round {r + 1}: " + ", ".join(f"{s} {n / t:.1f}/s" for s, t in took.items()), flush=True)
    return per_round


def cosines(workers: dict[str, Worker], work: Path) -> dict[str, np.ndarray]:
    vectors = {}
    for name, w in workers.items():
        path = work / f"{name}.npy"
        w.ask({"save": str(path)})
        vectors[name] = np.load(path)
    ref = vectors.get(REFERENCE)
    if ref is None:
        return {}
    return {name: (v * ref).sum(axis=1) / np.maximum(np.linalg.norm(v, axis=1), 1e-12) for name, v in vectors.items()}


def table(result: dict) -> list[dict]:
    """One row per side: texts/s, ratios against ours and torch (within a round), cosines against torch."""
    n, rounds = result["texts"], result["rounds"]
    rows = []
    for side in result["sides"]:

        def ratio(ref: str, side: str = side) -> float | None:
            if ref not in result["sides"]:
                return None
            return statistics.median(r["seconds"][ref] / r["seconds"][side] for r in rounds)

        cos = result["cosine"].get(side)
        rows.append(
            {
                "side": side,
                "texts_per_s": round(statistics.median(n / r["seconds"][side] for r in rounds), 2),
                # the side's speed over ours' and over torch's (each a median of per-round ratios)
                "vs_trustindex": _round(ratio(OURS)),
                "vs_torch_fp32": _round(ratio(REFERENCE)),
                "cosine_median": None if cos is None else round(float(np.median(cos)), 4),
                "cosine_min": None if cos is None else round(float(np.min(cos)), 4),
                "load_s": round(result["load_s"][side], 1),
            }
        )
    return rows


def _round(x: float | None) -> float | None:
    return None if x is None else round(float(x), 3)


def print_table(rows: list[dict], skipped: dict[str, str]) -> None:
    print("| side | texts/s | × ours | × torch fp32 | cosine median | cosine min |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['side']} | {r['texts_per_s']} | {r['vs_trustindex']} | {r['vs_torch_fp32']} "
            f"| {r['cosine_median']} | {r['cosine_min']} |"
        )
    for side, why in skipped.items():
        print(f"| {side} | skipped: {why} | | | | |")


def figures(rows: list[dict]) -> list[dict]:
    """For make bench's table: ours against the fastest sentence-transformers int8 side that keeps the cosines."""
    by = {r["side"]: r for r in rows}
    out = []
    honest = [
        r
        for r in rows
        if r["side"].startswith("st-")
        and r["side"].endswith("int8")
        and (r["cosine_median"] or 0) >= GOAL_COSINE_MEDIAN
    ]
    ours = by.get(OURS)
    if ours is not None and honest:
        best = max(honest, key=lambda r: r["texts_per_s"])
        ratio = 1 / best["vs_trustindex"] if best["vs_trustindex"] else None  # ours' speed / best's, within rounds
        out.append(
            figure(
                f"encoder vs the fastest sentence-transformers int8 side ({best['side']})",
                ours["texts_per_s"],
                "texts/s",
                reference=best["side"],
                reference_value=best["texts_per_s"],
                ratio=ratio,
                goal="≥ 1.0×",
                met=ratio is not None and ratio >= 1.0,
            )
        )
    for r in rows:
        if r["cosine_median"] is not None and r["side"] != REFERENCE:
            out.append(
                figure(
                    f"encoder anchor {r['side']}: cosine vs torch fp32 (median / min {r['cosine_min']})",
                    r["cosine_median"],
                    "",
                    goal=f"≥ {GOAL_COSINE_MEDIAN}",
                    met=r["cosine_median"] >= GOAL_COSINE_MEDIAN and r["cosine_min"] >= GOAL_COSINE_MIN,
                )
            )
    return out


def run(a: argparse.Namespace) -> dict:
    from bench.encoder_alone import real_mix
    from trustindex.encoder.static_quantization import CALIBRATION_FILE
    from trustindex.schemas.embedding_model import model_path

    texts = real_mix(a.data, a.texts)
    with tempfile.TemporaryDirectory(prefix="encoder-anchor-") as tmp:
        work = Path(tmp)
        (work / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
        calibration = ROOT / "encoder" / CALIBRATION_FILE
        side_args = ["--weights", str(model_path()), "--exports", str(a.exports), "--texts", str(work / "texts.json")]
        side_args += ["--calibration", str(calibration)]
        workers, skipped = start_sides(a.sides, dict(a.python), side_args)
        try:
            rounds = measure(workers, len(texts), a.chunk, a.rounds)
            cos = cosines(workers, work)
        finally:
            for w in workers.values():
                w.close()
    flags = cpu_flags()
    result = {
        "texts": len(texts),
        "chunk": a.chunk,
        "sides": list(workers),
        "skipped": skipped,
        "rounds": rounds,
        "cosine": {k: v.tolist() for k, v in cos.items()},
        "load_s": {k: w.ready["load_s"] for k, w in workers.items()},
        "versions": {k: w.ready["versions"] for k, w in workers.items()},
        "detail": {k: w.ready["detail"] for k, w in workers.items()},
        "cpu": {"model": machine()["cpu_model"], "flags": {f: f in flags for f in FLAGS}, "nproc": machine()["nproc"]},
    }
    result["table"] = table(result)
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=WORK / "retrieval" / "data", help="a built data directory")
    ap.add_argument("--texts", type=int, default=1000, help="texts sampled from the snapshot")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--chunk", type=int, default=200, help="texts per turn")
    ap.add_argument("--sides", nargs="+", choices=SIDES, default=list(SIDES))
    ap.add_argument("--exports", type=Path, default=WORK / "anchor-exports", help="where exports are kept")
    ap.add_argument(
        "--python",
        action="append",
        default=[],
        type=lambda s: (s.split("=", 1)[0], Path(s.split("=", 1)[1])),
        help="GROUP=PATH: the interpreter for st-onnx or st-openvino sides",
    )
    ap.add_argument("--json", type=Path, help="write the whole result here")
    ap.add_argument("--no-save", action="store_true", help="leave bench/results.json and docs/benchmarks.md alone")
    a = ap.parse_args(argv)
    setup_env()
    if not (a.data / "CURRENT").is_file():
        print(f"encoder anchor: skipped, {a.data} holds no built snapshot (bench_retrieval.py builds the real docs')")
        return 0
    r = run(a)
    r["load_average_1m"] = {"rounds": [x["load_1m"] for x in r["rounds"]]}
    print(f"CPU {r['cpu']['model']}, flags {r['cpu']['flags']}, {len(r['rounds'])} rounds of {r['texts']} texts")
    print_table(r["table"], r["skipped"])
    figs = figures(r["table"])
    print_figures("encoder anchor", figs)
    if a.json:
        a.json.write_text(json.dumps(r | {"figures": figs}, indent=1) + "\n", encoding="utf-8")
    if not a.no_save:
        method = (
            f"bench/encoder_anchor.py: {r['texts']} distinct model inputs of the real docs' snapshot, {a.rounds} "
            f"rounds; every side embeds every chunk of {a.chunk} in turn (the first side rotates), timed inside its "
            "own process; ratios within a round, medians over rounds; cosines against torch fp32."
        )
        keep = {k: v for k, v in r.items() if k != "cosine"}
        save("encoder_anchor", {"figures": figs, "details": keep, "method": method})
    return 0


if __name__ == "__main__":
    sys.exit(main())
