"""Static int8 activation scales: the encoder whose vectors do not depend on their batch-mates (issue 30 item 1).

``quantize_dynamic`` quantizes each MatMul's input with a scale computed per run (``DynamicQuantizeLinear``: the
min and max of the whole input tensor, every text of the batch together), so a text's vector moved with the other
texts in its batch and the encoder had to embed one text per run.  Here each of those nodes becomes a
``QuantizeLinear`` with a constant scale and zero point, calibrated once on a fixed sample shipped with the code
(``encoder_calibration.txt``, written for this project): quantization is then elementwise, the int8 products are
exact integer sums, and what is left in float (layer norms, GELU, softmax, layer 0's FFN output) is computed row by
row.  Texts of the same token length therefore share a run without padding, and a text's vector is bitwise the one
it gets alone (tests/encoder/test_onnx_encoder.py); padding is avoided because a masked softmax over a longer row
may sum in another order.

Ranges are the calibration sample's min and max per tensor (a percentile clip at 99.99 % cost 0.09 in median
cosine: BERT's few outlier dimensions matter), widened outwards to 4 significant bits so that the float noise of
another CPU running the calibration rarely changes a scale.  Measured on 399 real docs passages against torch fp32
(docs/embedding.md): median cosine 0.9935, min 0.9872 (the dynamic recipe: 0.9937 / 0.9829).

The ``MatMulInteger -> Cast -> Mul(a_scale * b_scale)`` chains the quantizer writes are rewritten into one
``MatMulIntegerToFloat`` each: onnxruntime fuses them itself only when the activation scale is computed at run time
(with constant scales it folds the scale product first and the pattern no longer matches), and unfused the casts
and multiplications cost ~7 % of a run.
"""

from __future__ import annotations

import collections
import hashlib
import math
from importlib import resources
from pathlib import Path

import numpy as np

from trustindex.query.onnx_encoder import EncoderError

CALIBRATION_FILE = "encoder_calibration.txt"
_SEPARATOR = "\n%%\n"  # between passages; the file's first part is its header comment
SIGNIFICANT_BITS = 4  # calibrated ranges are rounded outwards to this many significant bits


def calibration_texts() -> list[str]:
    """The shipped calibration passages, in file order."""
    raw = resources.files(__package__).joinpath(CALIBRATION_FILE).read_text(encoding="utf-8")
    texts = [p.strip("\n") for p in raw.split(_SEPARATOR)[1:]]
    if len(texts) < 16 or not all(texts):
        raise EncoderError(f"{CALIBRATION_FILE}: expected at least 16 non-empty passages separated by '%%' lines")
    return texts


def calibration_sha256() -> str:
    return hashlib.sha256("\0".join(calibration_texts()).encode()).hexdigest()


def _outward(x: float, up: bool) -> float:
    """``x`` rounded away from zero (``up``: towards +inf) to SIGNIFICANT_BITS significant bits."""
    if x == 0.0:
        return 0.0
    step = 2.0 ** (math.floor(math.log2(abs(x))) - SIGNIFICANT_BITS)
    return (math.ceil(x / step) if up else math.floor(x / step)) * step


def activation_ranges(fp32_model: Path, tensors: list[str], token_ids: list[list[int]]) -> dict[str, tuple]:
    """(min, max) of each named tensor over the calibration texts, each run alone through the float model;
    the range always holds 0 (as DynamicQuantizeLinear's does) and is rounded outwards."""
    import onnx
    import onnxruntime as ort

    model = onnx.load(str(fp32_model))
    present = {o.name for o in model.graph.output}
    for name in tensors:
        if name not in present:
            model.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    lo = dict.fromkeys(tensors, 0.0)
    hi = dict.fromkeys(tensors, 0.0)
    for ids in token_ids:
        x = np.asarray([ids], dtype=np.int64)
        feeds = {"input_ids": x, "attention_mask": np.ones_like(x), "token_type_ids": np.zeros_like(x)}
        for name, value in zip(tensors, session.run(tensors, feeds), strict=True):
            lo[name], hi[name] = min(lo[name], float(value.min())), max(hi[name], float(value.max()))
    return {n: (_outward(lo[n], up=False), _outward(hi[n], up=True)) for n in tensors}


def dynamic_inputs(quantized: Path) -> list[str]:
    """The tensors the dynamically quantized model quantizes at run time (its DynamicQuantizeLinear inputs)."""
    import onnx

    graph = onnx.load(str(quantized), load_external_data=False).graph
    return [n.input[0] for n in graph.node if n.op_type == "DynamicQuantizeLinear"]


def make_static(quantized: Path, ranges: dict[str, tuple], dst: Path) -> dict:
    """Write ``quantized`` with constant activation scales (``ranges``) into ``dst``; what was rewritten."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(quantized))
    graph = model.graph
    nodes, static = [], 0
    for node in graph.node:
        if node.op_type != "DynamicQuantizeLinear":
            nodes.append(node)
            continue
        lo, hi = ranges[node.input[0]]
        scale = np.float32((hi - lo) / 255.0)
        zero_point = np.uint8(np.clip(np.round(-lo / scale), 0, 255))
        # the node's scale and zero-point outputs become constants of the same names: their users are unchanged
        graph.initializer.append(numpy_helper.from_array(np.array(scale, np.float32), node.output[1]))
        graph.initializer.append(numpy_helper.from_array(np.array(zero_point, np.uint8), node.output[2]))
        nodes.append(helper.make_node("QuantizeLinear", [node.input[0], *node.output[1:]], [node.output[0]], node.name))
        static += 1
    fused, matmuls = _fuse_integer_matmuls(nodes)
    del graph.node[:]
    graph.node.extend(fused)
    onnx.save(model, str(dst))
    return {"static_activation_scales": static, "MatMulIntegerToFloat": matmuls}


def _fuse_integer_matmuls(nodes: list) -> tuple[list, int]:
    """Each MatMulInteger -> Cast -> Mul(a_scale * b_scale) chain as one MatMulIntegerToFloat; the nodes and how
    many chains were fused."""
    from onnx import helper

    users = collections.defaultdict(list)
    producer = {}
    for n in nodes:
        for name in n.input:
            users[name].append(n)
        for name in n.output:
            producer[name] = n
    replaced, dropped = {}, set()
    for mm in (n for n in nodes if n.op_type == "MatMulInteger"):
        (cast,) = users[mm.output[0]]
        (mul,) = users[cast.output[0]]
        scales = producer.get(mul.input[1])
        if cast.op_type != "Cast" or mul.op_type != "Mul" or scales is None or scales.op_type != "Mul":
            raise EncoderError(f"{mm.name}: not the MatMulInteger -> Cast -> Mul chain quantize_dynamic writes")
        if len(users[scales.output[0]]) != 1:
            raise EncoderError(f"{scales.name}: its scale product has other users")
        a, b, a_zero, b_zero = mm.input
        replaced[id(mm)] = helper.make_node(
            "MatMulIntegerToFloat",
            [a, b, *scales.input, a_zero, b_zero],
            [mul.output[0]],
            mm.name,
            domain="com.microsoft",
        )
        dropped |= {id(cast), id(mul), id(scales)}
    return [replaced.get(id(n), n) for n in nodes if id(n) not in dropped], len(replaced)
