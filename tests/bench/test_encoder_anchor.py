"""bench/encoder_anchor.py's table and figures from a made-up run (no timing asserted), and a side whose environment
is missing being skipped with the reason."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench import encoder_anchor
from bench.anchor_side import SIDES


def _run() -> dict:
    seconds = [  # per round: ours fastest, then OpenVINO int8, then ONNX int8 (whose cosines fall short), torch
        {"trustindex": 10.0, "st-openvino-int8": 20.0, "st-onnx-int8": 15.0, "torch-fp32": 50.0},
        {"trustindex": 12.0, "st-openvino-int8": 18.0, "st-onnx-int8": 16.0, "torch-fp32": 60.0},
        {"trustindex": 11.0, "st-openvino-int8": 22.0, "st-onnx-int8": 14.0, "torch-fp32": 55.0},
    ]
    cos = {
        "trustindex": np.array([0.995, 0.99, 0.985]),
        "st-openvino-int8": np.array([0.996, 0.994, 0.97]),
        "st-onnx-int8": np.array([0.99, 0.95, 0.96]),
        "torch-fp32": np.ones(3),
    }
    result = {
        "texts": 100,
        "sides": list(seconds[0]),
        "rounds": [{"seconds": s} for s in seconds],
        "cosine": cos,
        "load_s": dict.fromkeys(seconds[0], 1.0),
    }
    result["table"] = encoder_anchor.table(result)
    return result


def test_the_table_takes_ratios_within_rounds_and_cosines_against_torch():
    rows = {r["side"]: r for r in _run()["table"]}
    assert rows["trustindex"]["texts_per_s"] == round(100 / 11.0, 2) and rows["trustindex"]["vs_trustindex"] == 1.0
    assert rows["torch-fp32"]["vs_torch_fp32"] == 1.0
    assert rows["trustindex"]["vs_torch_fp32"] == 5.0  # per round 5.0, 5.0, 5.0
    assert rows["st-openvino-int8"]["vs_trustindex"] == 0.5  # 0.5, 0.667, 0.5: the median
    assert (rows["st-onnx-int8"]["cosine_median"], rows["st-onnx-int8"]["cosine_min"]) == (0.96, 0.95)


def test_ours_is_set_against_the_fastest_int8_side_that_keeps_the_median_cosine():
    figs = encoder_anchor.figures(_run()["table"])
    head = figs[0]
    # st-onnx-int8 is faster than OpenVINO here but its median cosine is 0.96: not an honest rival
    assert head["reference"] == "st-openvino-int8" and head["ratio"] == 2.0 and head["met"] is True
    cos = {f["name"].split()[2].rstrip(":"): f for f in figs[1:]}
    assert cos["st-onnx-int8"]["met"] is False and cos["trustindex"]["met"] is True


def test_a_side_without_its_environment_is_skipped_with_the_reason(tmp_path):
    py, why = encoder_anchor.interpreter("st-openvino-int8", {"st-openvino": tmp_path / "none" / "python"})
    assert py is None and "cannot import optimum.intel.openvino" in why and "missing" in why
    assert encoder_anchor.interpreter("trustindex", {})[0] == Path(__import__("sys").executable)
    assert set(SIDES) == {
        "trustindex",
        "st-onnx-fp32",
        "st-onnx-int8",
        "st-openvino-fp32",
        "st-openvino-int8",
        "torch-fp32",
    }
