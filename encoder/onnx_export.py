"""Build side of the query encoder: export all-MiniLM-L6-v2 to fused, int8 ONNX.

The recipe (measured in docs/embedding.md):

1. load the model with sentence-transformers, attention in the "eager" implementation:
   its MatMul/Softmax graph is what onnxruntime's BERT fusion recognises (the SDPA
   export fuses no attention at all);
2. ``torch.onnx.export(..., dynamo=False, opset_version=17)`` of the transformer alone,
   dynamic batch and sequence axes, traced on a *padded* batch so the mask path is kept;
3. ``onnxruntime.transformers.optimizer.optimize_model(model_type="bert")`` fuses
   embeddings+LayerNorm, attention, bias+GELU and skip+LayerNorm;
4. ``quantize_dynamic(weight_type=QInt8, per_channel=True, reduce_range=True)`` of the
   attention and MatMul weights: per-tensor int8 is badly off (median cosine 0.925 against
   torch), per-channel keeps ≥ 0.99, reduce_range avoids the AVX2 int16 saturation (see
   ``_quantize``); the embedding tables and the FFN output projection of layer 0 stay
   fp32 (see ``_kept_fp32``);
5. tokenizer.json with truncation at max_seq_length (256) and no fixed padding: the
   shipped file truncates and pads to 128, which changes the token ids;
6. (recipe 5, the default) static activation scales calibrated once on a shipped sample
   (encoder/static_quantization.py): a text's vector no longer depends on its batch-mates, so
   texts of one token length share a run;
7. an equivalence check against sentence-transformers on a fixed sample before anything
   is published.

Recipe 4 (dynamic activation scales, one text per run) can still be exported: old
snapshots carry their own encoder and never need it, but the benches measure against it
and the tests build an old-identity snapshot with it (``TRUSTINDEX_ENCODER_RECIPE=4``).

Mean pooling and normalisation are not in the graph; query.onnx_encoder does them in numpy.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trustindex.encoder.sentence_transformers_embedder import load_sentence_transformer
from trustindex.query.onnx_encoder import (
    ENCODER_JSON,
    FORMAT_VERSION,
    MODEL_FILE,
    EncoderError,
    OnnxEncoder,
    read_manifest,
    sha256_file,
    verify_files,
)
from trustindex.runtime.durable import fsync_path
from trustindex.schemas.embedding_model import MODEL_ID, TOKENIZER_FILE, model_path, weights_sha256

# Bumped whenever the recipe changes, so a cached export from an older recipe is rebuilt (and the encoder identity,
# embedder_factory.embedder_identity, changes with it).  4: dynamic int8 activation scales, one text per run;
# 5: static scales calibrated on encoder_calibration.txt, same-length batches (issue 30 item 1).
RECIPE_VERSION = 5
RECIPES = (4, 5)
DYNAMIC_RECIPE = 4
# Pins the recipe a build exports and embeds with (the benches' "today" and the tests' old snapshots).
RECIPE_ENV = "TRUSTINDEX_ENCODER_RECIPE"
QUANTIZATION = {
    "method": "onnxruntime.quantize_dynamic",
    "weight_type": "QInt8",
    "activation_type": "QUInt8",
    "per_channel": True,
    "reduce_range": True,
    "op_types": ["MatMul", "Attention"],
    "fusion": "onnxruntime.transformers.optimizer bert",
}
ONNX_OPSET = 17
# Layers whose FFN output projection stays fp32 (see _kept_fp32).
FP32_LAYERS = (0,)
_FP32_MATMUL = re.compile(rf"/encoder/layer\.({'|'.join(map(str, FP32_LAYERS))})/output/dense/MatMul$")
# Equivalence floor checked at export time (the tests and the bench hold the stricter 0.99 median).
MIN_EXPORT_COSINE = 0.98
_CHECK_TEXTS = [
    "How do I install the Compact compiler?",
    "The ledger state is updated only when a transaction's proof verifies.",
    "Deprecated: use the new wallet API instead of the legacy one.",
    "A circuit declared with `export` becomes an entry point of the contract, callable from a DApp.",
    "Midnight uses zero-knowledge proofs so that private data never leaves the user's machine, while the public "
    "ledger records only what the contract discloses.  " * 6,  # long enough to reach truncation
]


def encoder_recipe() -> int:
    """The recipe this process exports and embeds with: ``$TRUSTINDEX_ENCODER_RECIPE`` when set, else the newest."""
    raw = os.environ.get(RECIPE_ENV, "").strip()
    if not raw:
        return RECIPE_VERSION
    if not raw.isdigit() or int(raw) not in RECIPES:
        raise ValueError(f"{RECIPE_ENV}={raw!r}: expected one of {', '.join(map(str, RECIPES))}")
    return int(raw)


@dataclass(frozen=True)
class EncoderFiles:
    """An exported encoder directory and what it holds (paths are inside ``directory``)."""

    directory: Path
    model: Path
    tokenizer: Path
    manifest: Path
    source_sha256: str


@contextlib.contextmanager
def _quiet():
    """Silence the export's known, harmless chatter (documented in docs/embedding.md).

    torch warns that the TorchScript exporter is deprecated and that traced Python
    conditions become constants (transformers' mask helpers; true for every shape here,
    the tests check padded batches); onnxruntime's quantizer logs a hint to run its
    shape pre-processing on the root logger, which the fused model does not need.
    """

    def drop_hint(record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()

    root = logging.getLogger()
    root.addFilter(drop_hint)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        root.removeFilter(drop_hint)


def _files_of(directory: Path, source_sha: str) -> EncoderFiles:
    return EncoderFiles(
        directory, directory / MODEL_FILE, directory / TOKENIZER_FILE, directory / ENCODER_JSON, source_sha
    )


def _export_onnx(st, path: Path) -> None:
    import torch

    hf = st[0].auto_model.eval()

    class Transformer(torch.nn.Module):
        """The bare transformer with a positional signature (torch.onnx.export traces positionally)."""

        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    # A padded example: traced on an all-ones mask, transformers may skip building the mask.
    ids = torch.tensor([[101, 7592, 2088, 2003, 102], [101, 7592, 102, 0, 0]], dtype=torch.long)
    mask = (ids != 0).long()
    axes = {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(
            Transformer(hf),
            (ids, mask, torch.zeros_like(ids)),
            str(path),
            dynamo=False,
            opset_version=ONNX_OPSET,
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes, "last_hidden_state": axes},
            do_constant_folding=True,
        )


def _fuse(src: Path, dst: Path, config) -> dict:
    from onnxruntime.transformers.optimizer import optimize_model

    # opt_level=0: python fusions only; onnxruntime applies its own graph optimisations
    # at load time on the serving machine, so nothing CPU-specific is baked into the file.
    model = optimize_model(
        str(src),
        model_type="bert",
        num_heads=config.num_attention_heads,
        hidden_size=config.hidden_size,
        opt_level=0,
        use_gpu=False,
    )
    stats = {k: v for k, v in model.get_fused_operator_statistics().items() if v}
    if stats.get("Attention", 0) != config.num_hidden_layers:
        raise EncoderError(f"attention fusion matched {stats.get('Attention', 0)} of {config.num_hidden_layers} layers")
    model.save_model_to_file(str(dst))
    return stats


def _kept_fp32(src: Path) -> list[str]:
    """The MatMuls left in float32: the FFN output projection of layer 0.

    Its input is the GELU output, whose long positive tail makes one uint8 activation
    scale per tensor coarse, and an error made in the first layer is carried through
    every later one.  Measured on 200 real passages embedded one at a time against torch
    (docs/embedding.md, same run, reduce_range): all int8 3.39× torch's speed, cosine
    median 0.9920 / min 0.9822; layer 0 in fp32 3.23×, 0.9939 / 0.9886; layers 0 and 1
    3.04×, 0.9947 / 0.9893.  Layer 0 alone buys most of the accuracy for ~5 % of speed.
    """
    import onnx

    graph = onnx.load(str(src), load_external_data=False).graph
    names = [n.name for n in graph.node if n.op_type == "MatMul" and _FP32_MATMUL.search(n.name)]
    if len(names) != len(FP32_LAYERS):
        raise EncoderError(f"expected {len(FP32_LAYERS)} FFN output MatMuls to keep in fp32, found {names}")
    return names


def _quantize(src: Path, dst: Path) -> list[str]:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    keep = _kept_fp32(src)
    # op_types: the fused Attention (its packed QKV projection) and the MatMuls.  The
    # embedding tables stay fp32: a lookup gains nothing from int8 and loses accuracy.
    # DefaultTensorType: shape inference knows nothing of the fused com.microsoft ops, and
    # the quantizer needs an element type for their outputs (all float32 here).
    # reduce_range: 7-bit weights.  onnxruntime advises it for x86 without VNNI, where the
    # u8s8 kernel's VPMADDUBSW int16 pair sums saturate when activations span the full uint8
    # range (as they do when a text is quantized alone); the model is exported once and may
    # run on either kind of CPU.  Measured at batch 1 on this (VNNI) machine, FFN outputs of
    # layers 0-2 in fp32: min cosine 0.981 -> 0.992 at the same speed.
    quantize_dynamic(
        str(src),
        str(dst),
        weight_type=QuantType.QInt8,
        per_channel=True,
        reduce_range=True,
        op_types_to_quantize=["MatMul", "Attention"],
        nodes_to_exclude=keep,
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )
    return keep


def _write_tokenizer(weights_dir: Path, dst: Path, max_seq_length: int) -> int:
    """Copy tokenizer.json with truncation at max_seq_length and padding to the longest item; returns pad id."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(weights_dir) / TOKENIZER_FILE))
    pad = tok.padding or {}
    pad_id, pad_token = int(pad.get("pad_id", 0)), pad.get("pad_token", "[PAD]")
    tok.enable_truncation(max_seq_length)
    tok.enable_padding(pad_id=pad_id, pad_token=pad_token)  # length=None: pad to the longest item
    tok.save(str(dst), pretty=True)
    return pad_id


def export_encoder(out_dir: Path, weights_dir: Path | None = None, recipe: int = RECIPE_VERSION) -> EncoderFiles:
    """Export the model into ``out_dir`` (created; must not hold another export) and verify it.

    Writes model.int8.onnx, tokenizer.json and encoder.json.  Raises EncoderError when
    the fused int8 model disagrees with sentence-transformers (cosine < 0.98) on a fixed
    sample, so a broken export is never published.
    """
    if recipe not in RECIPES:
        raise ValueError(f"unknown encoder recipe {recipe} (known: {', '.join(map(str, RECIPES))})")
    weights = Path(weights_dir) if weights_dir else model_path()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    source_sha = weights_sha256(weights)
    st = load_sentence_transformer(weights, attn="eager")
    config = st[0].auto_model.config
    pooling = st[1].get_config_dict().get("pooling_mode")
    if pooling != "mean":
        raise EncoderError(f"{weights}: pooling {pooling!r}; only mean pooling is exported")
    normalize = any(type(m).__name__ == "Normalize" for m in st)
    max_seq_length = int(st.max_seq_length)
    pad_id = _write_tokenizer(weights, out_dir / TOKENIZER_FILE, max_seq_length)
    quantization: dict = {**QUANTIZATION}
    with tempfile.TemporaryDirectory(prefix="encoder-export-") as work, _quiet():
        fp32, fused = Path(work) / "model.fp32.onnx", Path(work) / "model.fused.onnx"
        _export_onnx(st, fp32)
        fusion = _fuse(fp32, fused, config)
        if recipe == DYNAMIC_RECIPE:
            quantization["kept_fp32"] = _quantize(fused, out_dir / MODEL_FILE)
        else:
            dynamic = Path(work) / "model.dynamic.onnx"
            quantization["kept_fp32"] = _quantize(fused, dynamic)
            quantization.update(_static_scales(fused, dynamic, out_dir))
    meta = {
        "format_version": FORMAT_VERSION,
        "recipe_version": recipe,
        # a text's vector is the same alone and among texts of its token length (query.onnx_encoder batches by it)
        "batch_independent": recipe != DYNAMIC_RECIPE,
        "model_id": MODEL_ID,
        "dimensions": int(config.hidden_size),
        "max_seq_length": max_seq_length,
        "pooling": "mean",
        "normalize": normalize,
        "pad_id": pad_id,
        "quantization": quantization,
        "fused_operators": fusion,
        "onnx_opset": ONNX_OPSET,
        "source_sha256": source_sha,
        "files": {name: sha256_file(out_dir / name) for name in (MODEL_FILE, TOKENIZER_FILE)},
    }
    (out_dir / ENCODER_JSON).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    _check_equivalence(out_dir, st)
    return _files_of(out_dir, source_sha)


def _static_scales(fused: Path, dynamic: Path, out_dir: Path) -> dict:
    """The dynamic model with constant activation scales calibrated on the shipped sample (static_quantization)."""
    from tokenizers import Tokenizer

    from trustindex.encoder import static_quantization

    tok = Tokenizer.from_file(str(out_dir / TOKENIZER_FILE))
    tok.no_padding()
    token_ids = [e.ids for e in tok.encode_batch(static_quantization.calibration_texts())]
    ranges = static_quantization.activation_ranges(fused, static_quantization.dynamic_inputs(dynamic), token_ids)
    rewritten = static_quantization.make_static(dynamic, ranges, out_dir / MODEL_FILE)
    return {
        "method": "onnxruntime.quantize_dynamic, then static activation scales",
        "activation_scales": "static",
        "calibration": {
            "file": static_quantization.CALIBRATION_FILE,
            "sha256": static_quantization.calibration_sha256(),
            "texts": len(token_ids),
            "range": f"min/max, rounded outwards to {static_quantization.SIGNIFICANT_BITS} significant bits",
        },
        **rewritten,
    }


def _check_equivalence(directory: Path, st) -> None:
    encoder = OnnxEncoder(directory)
    try:
        fast = encoder.encode(_CHECK_TEXTS)
    finally:
        encoder.close()
    ref = np.asarray(st.encode(_CHECK_TEXTS, normalize_embeddings=True), dtype=np.float32)
    cos = (fast * ref).sum(axis=1)
    if cos.min() < MIN_EXPORT_COSINE:
        raise EncoderError(
            f"{directory}: int8 export disagrees with sentence-transformers "
            f"(cosine min {cos.min():.4f} < {MIN_EXPORT_COSINE})"
        )


def _reusable(directory: Path, source_sha: str, recipe: int) -> bool:
    try:
        meta = read_manifest(directory)
        if meta.get("source_sha256") != source_sha or meta.get("recipe_version") != recipe:
            return False
        verify_files(directory, meta)
        return True
    except EncoderError:
        return False


def exporter_key() -> str:
    """8 hex digits naming the versions of the libraries that write the export (torch's ONNX exporter,
    onnx, onnxruntime's fusion and quantizer, transformers): a cache shared by a machine's environments keeps one
    export per set, so an upgrade exports anew instead of reusing what other versions wrote."""
    from importlib.metadata import PackageNotFoundError, version

    names = ("torch", "onnx", "onnxruntime", "transformers", "sentence-transformers")
    found = []
    for name in names:
        try:
            found.append(f"{name}=={version(name)}")
        except PackageNotFoundError:
            found.append(f"{name}==absent")
    return hashlib.sha256(",".join(found).encode()).hexdigest()[:8]


def ensure_encoder(cache_dir: Path, weights_dir: Path | None = None, recipe: int | None = None) -> EncoderFiles:
    """Return a verified export under ``cache_dir``, exporting once per source weights, recipe and exporter
    versions.

    Each export lives in ``cache_dir/<sha256 of the weights, 16 hex>-r<recipe>-x<exporter_key>/`` and is
    written to a temporary sibling first, then renamed into place, so a reader never sees
    half an export and two concurrent builders cannot corrupt each other (the loser of
    the rename discards its copy and uses the winner's).
    """
    recipe = encoder_recipe() if recipe is None else recipe
    weights = Path(weights_dir) if weights_dir else model_path()
    cache_dir = Path(cache_dir)
    source_sha = weights_sha256(weights)
    target = cache_dir / f"{source_sha[:16]}-r{recipe}-x{exporter_key()}"
    if _reusable(target, source_sha, recipe):
        return _files_of(target, source_sha)
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=cache_dir))
    try:
        export_encoder(tmp, weights, recipe)
        for p in tmp.iterdir():
            fsync_path(p)
        if _reusable(target, source_sha, recipe):  # another builder finished first: use theirs
            return _files_of(target, source_sha)
        if target.exists():  # a stale or corrupt export: move it aside, never delete under a reader's feet first
            stale = Path(tempfile.mkdtemp(prefix=f".{target.name}.stale-", dir=cache_dir))
            os.rename(target, stale / "old")
            shutil.rmtree(stale, ignore_errors=True)
        try:
            os.rename(tmp, target)
        except OSError:
            if not _reusable(target, source_sha, recipe):  # someone else's rename won, but their copy is bad
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _files_of(target, source_sha)
