#!/usr/bin/env bash
# The GPU benchmark's smoke run on a machine without a GPU (the test
# suite's bench_smoke_cuda): packs BUILD_DIR as it is configured into a
# scratch folder (pack_for_gpu.sh), then runs run_on_gpu.sh on the packed
# programs forced onto the vec target, with every carried library, over a
# tiny model: the plugins and bench stages must pass and the bench table
# come back, and the env stage must pass or say "no GPU". What a GPU run
# adds (NVRTC, the Driver API, cuDNN) cannot be checked here.
#
# usage: smoke.sh BUILD_DIR WORK_DIR
set -uo pipefail
build=$(cd "$1" && pwd)
work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
fail() { echo "smoke: FAIL: $*"; exit 1; }

HETC_GPU_PACK=$work/pack HETC_GPU_AS_CONFIGURED=1 bash "$here/pack_for_gpu.sh" "$build" ||
  fail "pack_for_gpu.sh exited with $?"
[ -x "$work/pack/bin/bench_conv_vs_onednn" ] && [ -s "$work/pack/MANIFEST.txt" ] ||
  fail "the pack lacks bench_conv_vs_onednn or its MANIFEST.txt"

HETC_GPU_PACK=$work/pack HETC_GPU_FORCE=1 HETC_GPU_TARGET=vec HETC_GPU_FORCE_DEPS=1 \
  HETC_GPU_BENCH_MODEL=samples/tiny_conv.json HETC_GPU_BENCH_REPEAT=1 HETC_GPU_BUDGET_S=120 OUT=$work/out \
  bash "$here/run_on_gpu.sh" plugins bench
echo "run_on_gpu.sh exited with $? (1 is expected without a GPU)"
summary=$work/out/summary.txt
[ -s "$summary" ] || fail "run_on_gpu.sh wrote no summary.txt"
grep -qE '^  env +(PASS|FAIL \(no GPU\))' "$summary" || fail "the env stage neither passed nor found no GPU"
for stage in plugins bench; do
  grep -qE "^  $stage +PASS" "$summary" || fail "the $stage stage did not pass"
done
grep -qE '^whole network' "$work/out/bench_cuda.txt" || fail "bench_cuda.txt has no whole-network line"
echo "smoke: PASS: packed, and run_on_gpu.sh ran the bench on vec and returned its table"
