#!/usr/bin/env bash
# torchvision's CNNs as ONNX files with seeded random weights
# (export_torchvision.py), for `peers.py --onnx-dir OUTDIR`: creates the
# exporter's own virtual environment (TORCH_VENV, default build/torch-venv)
# from requirements-torch.txt on first use, then runs the exporter with the
# arguments given, e.g.
#
#   tests/bench/peers/export.sh build/tv-onnx --models resnet50,mobilenet_v2
#   tests/bench/peers/run.sh --onnx-dir build/tv-onnx
#
# torch is kept apart from the peers' environment (run.sh): it is large,
# and the benchmark itself never imports it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
venv="${TORCH_VENV:-$repo/build/torch-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import torch, torchvision, onnx' 2>/dev/null; then
  echo "export: installing torch, torchvision and onnx into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip
  "$venv/bin/pip" install --quiet -r "$here/requirements-torch.txt"
fi
# The TorchScript exporter (dynamo=False) warns that it is deprecated, once
# per model; the files it writes are what the benchmark wants.
exec "$venv/bin/python" -W ignore::DeprecationWarning "$here/export_torchvision.py" "$@"
