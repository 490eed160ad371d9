#!/usr/bin/env bash
# The environments bench/encoder_anchor.py runs sentence-transformers' ONNX and OpenVINO sides in (issue 41).
#
# Neither extra installs beside the project's pins (requirements.lock: transformers 5.24.0): optimum-onnx 0.1.0
# needs transformers < 4.58 and optimum-intel 2.x transformers < 5.6 (the resolver's errors are quoted in
# docs/embedding.md).  So each gets the environment a user would get from `pip install
# "sentence-transformers[onnx]"` / `"sentence-transformers[openvino]"`, with the same CPU torch as the project (the
# machine's pip constraint caps torch; pinning it keeps pip from pulling a CUDA build).  The versions pip chose
# when this was written are pinned below, so that a rerun measures the same libraries; the bench records the
# versions each side ran with.
#
#     bash bench/anchor_envs.sh [DIR]       # default: .venv-anchors/ beside this folder (git ignores it)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$root/.venv-anchors}"
py="${PYTHON:-python3.11}"
mkdir -p "$dir"
for env in onnx openvino; do
  test -x "$dir/$env/bin/python" || "$py" -m venv "$dir/$env"
done
"$dir/onnx/bin/pip" install --quiet 'torch==2.13.0' 'sentence-transformers[onnx]==5.7.0' \
  'transformers==4.57.6' 'optimum-onnx[onnxruntime]==0.1.0'
# datasets: export_static_quantized_openvino_model refuses to run without it (the calibration set is its type)
"$dir/openvino/bin/pip" install --quiet 'torch==2.13.0' 'sentence-transformers[openvino]==6.3.0' \
  'transformers==5.0.0' 'optimum-intel[openvino]==2.0.0' 'nncf==3.4.0' 'datasets==5.2.0'
echo "anchor environments ready under $dir"
