"""One side of bench/encoder_anchor.py: a process that loads one encoder and embeds what it is told to.

    PYTHON bench/anchor_side.py SIDE --weights DIR --exports DIR --texts FILE [--calibration FILE]

Run by encoder_anchor.py with the interpreter of the environment the side needs (sentence-transformers' ONNX and
OpenVINO backends cannot be installed beside the project's pins: docs/embedding.md), so this file imports nothing
from the project except for the ``trustindex`` side.  It reads JSON lines on standard input and answers one JSON
line each on standard output:

    {"encode": [start, end]}  ->  {"seconds": S}     texts[start:end] embedded, timed around the encode call only
    {"save": PATH}            ->  {"saved": PATH}    every text's last vector as a float32 .npy
    {"quit": true}                                   exit

Before the first request it prints ``{"ready": true, "load_s": ..., "versions": {...}, "detail": ...}``.

Exports are made offline from the packaged weights (``--weights``) the way sentence-transformers' documentation
shows a user making them, once per side and set of library versions, into ``--exports`` (written to a temporary
sibling, then renamed), and loaded from there afterwards:

- ``st-onnx-fp32``: ``SentenceTransformer(path, backend="onnx")`` (optimum exports ``onnx/model.onnx``), saved;
- ``st-onnx-int8``: ``export_dynamic_quantized_onnx_model`` with the configuration named after this CPU's best
  instruction set (``avx512_vnni``, ``avx512``, ``avx2``; ``arm64`` on ARM);
- ``st-openvino-fp32``: ``SentenceTransformer(path, backend="openvino")``, saved;
- ``st-openvino-int8``: ``export_static_quantized_openvino_model`` (NNCF post-training static int8) with its
  default ``OVQuantizationConfig``, calibrated on ``--calibration`` (the project's shipped sample) instead of the
  GLUE download it defaults to; everything else is that function's own code path;
- ``torch-fp32``: plain ``SentenceTransformer(path, device="cpu")``;
- ``trustindex``: the project's default encoder as a build runs it (``make_embedder(DEFAULT_BACKEND)``).

Every side encodes with its library's defaults (sentence-transformers: ``encode(texts, batch_size=32,
normalize_embeddings=True)``, threads as each runtime chooses them).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

# The names of the sides, as the issue writes them (encoder_anchor.py imports this tuple).
SIDES = ("trustindex", "st-onnx-fp32", "st-onnx-int8", "st-openvino-fp32", "st-openvino-int8", "torch-fp32")
# What each side's environment must import (encoder_anchor.py checks it before starting the side).
NEEDS = {
    "trustindex": "trustindex.encoder.factory",
    "st-onnx-fp32": "optimum.onnxruntime",
    "st-onnx-int8": "optimum.onnxruntime",
    "st-openvino-fp32": "optimum.intel.openvino",
    "st-openvino-int8": "optimum.intel.openvino",
    "torch-fp32": "sentence_transformers",
}
PACKAGES = (
    "sentence-transformers",
    "transformers",
    "torch",
    "onnxruntime",
    "optimum",
    "optimum-onnx",
    "optimum-intel",
    "openvino",
    "nncf",
)
ST_BATCH = 32  # sentence-transformers' default batch size


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


def cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def onnx_quantization_config() -> str:
    """sentence-transformers' configuration name for this CPU (what its documentation asks a user to pick)."""
    if platform.machine().lower() in ("aarch64", "arm64"):
        return "arm64"
    flags = cpu_flags()
    if "avx512_vnni" in flags:
        return "avx512_vnni"
    if "avx512f" in flags:
        return "avx512"
    return "avx2"


def _quiet() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import logging
    import warnings

    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)


def _export_key(side: str) -> str:
    return hashlib.sha256(json.dumps([side, versions()], sort_keys=True).encode()).hexdigest()[:10]


def _exported(side: str, weights: Path, exports: Path, make) -> Path:
    """``exports/<side>-<versions>``: made once by ``make(directory)`` on a copy of the weights, then reused."""
    target = exports / f"{side}-{_export_key(side)}"
    if (target / ".complete").is_file():
        return target
    exports.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=exports))
    try:
        work = tmp / "model"
        shutil.copytree(weights, work, ignore=shutil.ignore_patterns("onnx", "openvino"))
        make(work)
        (work / ".complete").write_text(json.dumps(versions(), sort_keys=True) + "\n")
        if target.exists():
            shutil.rmtree(target)
        os.rename(work, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _calibration_texts(path: Path) -> list[str]:
    raw = path.read_text(encoding="utf-8")
    return [p.strip("\n") for p in raw.split("\n%%\n")[1:] if p.strip()]


def _load_st_onnx(side: str, weights: Path, exports: Path):
    from sentence_transformers import SentenceTransformer

    config = onnx_quantization_config()

    def make(directory: Path) -> None:
        model = SentenceTransformer(str(directory), backend="onnx", device="cpu")
        model.save_pretrained(str(directory))
        if side == "st-onnx-int8":
            from sentence_transformers import export_dynamic_quantized_onnx_model

            export_dynamic_quantized_onnx_model(model, config, str(directory))

    directory = _exported(side, weights, exports, make)
    name = f"onnx/model_qint8_{config}.onnx" if side == "st-onnx-int8" else "onnx/model.onnx"
    model = SentenceTransformer(str(directory), backend="onnx", device="cpu", model_kwargs={"file_name": name})
    return model, {"file": name, "quantization_config": config if side == "st-onnx-int8" else None}


def _load_st_openvino(side: str, weights: Path, exports: Path, calibration: Path | None):
    from sentence_transformers import SentenceTransformer

    def make(directory: Path) -> None:
        model = SentenceTransformer(str(directory), backend="openvino", device="cpu")
        model.save_pretrained(str(directory))
        if side == "st-openvino-int8":
            _static_openvino_int8(model, directory, calibration)

    directory = _exported(side, weights, exports, make)
    name = (
        "openvino/openvino_model_qint8_quantized.xml" if side == "st-openvino-int8" else "openvino/openvino_model.xml"
    )
    model = SentenceTransformer(str(directory), backend="openvino", device="cpu", model_kwargs={"file_name": name})
    # the calibration file as the repository names it (an absolute path would name this machine's checkout)
    shown = _repository_path(calibration) if side == "st-openvino-int8" and calibration is not None else None
    return model, {"file": name, "calibration": shown}


def _repository_path(path: Path) -> str:
    """``path`` relative to the repository when it lies inside it, else its name."""
    root = Path(__file__).resolve().parents[1]
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return Path(path).name


def _static_openvino_int8(model, directory: Path, calibration: Path | None) -> None:
    """``export_static_quantized_openvino_model`` as a user calls it, its calibration set read from ``calibration``
    (the function would download GLUE/sst2; there is no network here): the texts go through the function's own
    preprocessing (padding to 384 tokens), so only where the sentences come from differs."""
    if calibration is None:
        raise SystemExit("st-openvino-int8 needs --calibration FILE (the shipped calibration sample)")
    import datasets
    from optimum.intel import OVQuantizationConfig
    from optimum.intel.openvino import OVQuantizer
    from sentence_transformers import export_static_quantized_openvino_model

    texts = _calibration_texts(calibration)

    def local_sample(self, dataset_name, num_samples=None, dataset_config_name=None, dataset_split=None,
                     preprocess_function=None, preprocess_batch=True, **kwargs):  # fmt: skip
        ds = datasets.Dataset.from_dict({"sentence": texts})
        if num_samples is not None:
            ds = ds.select(range(min(num_samples, len(ds))))
        if preprocess_function is not None:
            ds = ds.map(preprocess_function, batched=preprocess_batch)
        return ds

    OVQuantizer.get_calibration_dataset = local_sample
    export_static_quantized_openvino_model(
        model, OVQuantizationConfig(num_samples=len(texts)), str(directory), column_name="sentence",
        dataset_name="local", dataset_config_name="local", dataset_split="train",
    )  # fmt: skip


class Side:
    """The loaded encoder of one side and the vectors it has made."""

    def __init__(self, side: str, args: argparse.Namespace, texts: list[str]):
        self.texts = texts
        self.vectors = np.zeros((len(texts), 384), np.float32)
        started = time.perf_counter()
        self.detail: dict = {}
        if side == "trustindex":
            from trustindex.encoder.factory import make_embedder
            from trustindex.schemas.embedding_model import DEFAULT_BACKEND

            embedder = make_embedder(DEFAULT_BACKEND, cache_dir=args.exports / "trustindex")
            self.detail = {"backend": str(DEFAULT_BACKEND), "info": embedder.info()}
            self._encode = embedder.encode
        else:
            model = self._load_st(side, args)
            self._encode = lambda batch: model.encode(
                batch, batch_size=ST_BATCH, normalize_embeddings=True, show_progress_bar=False, convert_to_numpy=True
            )
        self._encode(texts[:8])  # untimed: sessions, thread pools and first-call allocations warmed
        self.load_s = time.perf_counter() - started

    def _load_st(self, side: str, args: argparse.Namespace):
        if side == "torch-fp32":
            from sentence_transformers import SentenceTransformer

            return SentenceTransformer(str(args.weights), device="cpu")
        if side.startswith("st-onnx"):
            model, self.detail = _load_st_onnx(side, args.weights, args.exports)
            return model
        model, self.detail = _load_st_openvino(side, args.weights, args.exports, args.calibration)
        return model

    def encode(self, start: int, end: int) -> float:
        t0 = time.perf_counter()
        out = self._encode(self.texts[start:end])
        seconds = time.perf_counter() - t0
        self.vectors[start:end] = np.asarray(out, np.float32)
        return seconds


def serve(side: Side, out) -> None:
    """Answer requests on ``out`` (the real standard output: anything a library prints goes to standard error)."""
    for line in sys.stdin:
        req = json.loads(line)
        if "encode" in req:
            answer: dict = {"seconds": side.encode(*req["encode"])}
        elif "save" in req:
            np.save(req["save"], side.vectors)
            answer = {"saved": req["save"]}
        else:
            return
        print(json.dumps(answer), file=out, flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("side", choices=SIDES)
    ap.add_argument("--weights", type=Path, required=True, help="the packaged model weights")
    ap.add_argument("--exports", type=Path, required=True, help="where exports are made once and kept")
    ap.add_argument("--texts", type=Path, required=True, help="a JSON list of the texts")
    ap.add_argument("--calibration", type=Path, help="calibration passages ('%%' lines between), for static int8")
    a = ap.parse_args(argv)
    _quiet()
    texts = json.loads(a.texts.read_text(encoding="utf-8"))
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # libraries that print while loading must not break the protocol
    side = Side(a.side, a, texts)
    ready = {"ready": True, "load_s": side.load_s, "versions": versions(), "detail": side.detail}
    print(json.dumps(ready, default=str), file=real_stdout, flush=True)
    serve(side, real_stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
