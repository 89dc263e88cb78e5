#!/usr/bin/env bash
# Issue 33's torchvision survey, its export half (make_torchvision.py):
# every torchvision classification model and four segmentation models as
# ONNX files, with a seeded input and onnxruntime's output beside each.
# Uses the torch exporter's virtual environment (TORCH_VENV, default
# build/torch-venv, as tests/bench/peers/export.sh does), adding
# onnxruntime and onnxscript to it (requirements.txt) on first use; then
# runs the exporter with the arguments given, e.g.
#
#   tests/onnx/torchvision/make_torchvision.sh build/tv-corpus
#   tests/onnx/torchvision/check_torchvision.sh build/bin/hetc build/tv-corpus
#
# or, with --small, the CI-sized corpus committed in tests/onnx/torchvision/small:
#
#   tests/onnx/torchvision/make_torchvision.sh --small
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
venv="${TORCH_VENV:-$repo/build/torch-venv}"
if [ ! -x "$venv/bin/python" ] ||
   ! "$venv/bin/python" -c 'import torch, torchvision, onnx, onnxruntime, onnxscript' 2>/dev/null; then
  echo "make_torchvision: installing torch, torchvision, onnx, onnxruntime and onnxscript into $venv" >&2
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip
  "$venv/bin/pip" install --quiet -r "$here/requirements.txt"
fi
# The TorchScript exporter (dynamo=False) warns that it is deprecated, once
# per model; the files it writes are what the survey wants.
exec "$venv/bin/python" -W ignore::DeprecationWarning "$here/make_torchvision.py" "$@"
