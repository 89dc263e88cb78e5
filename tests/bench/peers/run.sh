#!/usr/bin/env bash
# hetc against onnxruntime and OpenVINO on the sample models or ONNX files (peers.py):
# creates the benchmark's own virtual environment (PEERS_VENV, default
# build/peers-venv) from requirements.txt on first use, then runs peers.py
# with the arguments given, e.g.
#
#   tests/bench/peers/run.sh --targets cpu,vec --records tuned.sqlite
#   tests/bench/peers/run.sh --onnx-dir build/tv-onnx   # after export.sh build/tv-onnx
#
# CI runs peers.py alone on a tiny model (bench_smoke_peers), without the
# peers; the comparison needs PyPI (about 200 MB of wheels) and a quiet
# machine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
venv="${PEERS_VENV:-$repo/build/peers-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import onnx, onnxruntime, openvino' 2>/dev/null; then
  echo "peers: installing onnx, onnxruntime and OpenVINO into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip
  "$venv/bin/pip" install --quiet -r "$here/requirements.txt"
fi
exec "$venv/bin/python" "$here/peers.py" "$@"
