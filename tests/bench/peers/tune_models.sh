#!/usr/bin/env bash
# Tunes models into one records store for peers.py --records: one `hetc
# tune` run per model, each with the same budget in seconds (a run's budget
# is spread over its tasks), the store shared so that every run learns from
# the records of the ones before (transfer learning). A model is a sample's
# name (samples/NAME.json) or a model file. For example
#
#   tests/bench/peers/tune_models.sh build/tuned.sqlite 300 resnet50 build/tv-onnx/*.onnx
#   tests/bench/peers/run.sh --models resnet50 --onnx-dir build/tv-onnx --records build/tuned.sqlite
#
# HETC (default build/bin/hetc) and TARGETS (default cpu) choose the binary
# and the targets. Each run's last lines and its wall time are printed; a
# run that fails is reported and the others go on (the exit status is then 1).
set -uo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 STORE BUDGET_SECONDS MODEL..." >&2
  exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
hetc="${HETC:-$repo/build/bin/hetc}"
store="$1"
budget="$2"
shift 2
status=0
for model in "$@"; do
  path="$model"
  [ -f "$path" ] || path="$repo/samples/$model.json"
  if [ ! -f "$path" ]; then
    echo "tune_models: $model is neither a file nor a sample" >&2
    status=1
    continue
  fi
  start=$(date +%s)
  echo "== $model: hetc tune --budget $budget"
  if ! "$hetc" tune "$path" --targets "${TARGETS:-cpu}" --records "$store" --budget "$budget" --quiet; then
    echo "tune_models: tuning $model failed" >&2
    status=1
  fi
  echo "== $model: $(( $(date +%s) - start )) s"
done
exit $status
