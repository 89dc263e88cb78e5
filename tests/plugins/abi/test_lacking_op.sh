#!/bin/sh
# A target that lacks an op leaves it to another: the sample plugin built
# against the minor-3 header has no transpose (minor 4). Alone it cannot
# compile the corpus's NCHW-to-NHWC transpose (exit 1, the node named);
# beside vec, the placement puts the transpose on vec, and every corpus
# network matches onnxruntime's outputs (test_onnx_corpus). (ShuffleNet's
# channel shuffles are no transposes any more: compile makes them picks.)
# usage: test_lacking_op.sh HETC TEST_ONNX_CORPUS CORPUS_DIR NOT_YET WORK_DIR
# (HETC_PLUGIN_PATH names the minor-3 sample's folder)
set -u
hetc=$1 corpus_test=$2 corpus=$3 not_yet=$4 work=$5
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

"$hetc" compile "$corpus/transpose_nhwc.onnx" --targets example_c -o "$work/alone.hetc" >"$work/out" 2>"$work/err"
status=$?
[ "$status" -eq 1 ] || fail "example_c alone: exit status $status, expected 1"
want="hetc: node 'output' (transpose): no target supports it (example_c: the plugin speaks ABI 1.3; this workload needs ABI 1.4)"
[ "$(cat "$work/err")" = "$want" ] || { cat "$work/err"; fail "example_c alone: unexpected message"; }
[ ! -e "$work/alone.hetc" ] || fail "example_c alone wrote a package"

"$hetc" compile "$corpus/transpose_nhwc.onnx" --targets example_c,vec -o "$work/both.hetc" --explain >"$work/explain" 2>&1 ||
  { cat "$work/explain"; fail "example_c,vec: compile failed"; }
transposes=$(grep -c ' transpose .* vec ' "$work/explain")
[ "$transposes" -eq 1 ] || { cat "$work/explain"; fail "expected the transpose on vec, found $transposes"; }

"$corpus_test" "$corpus" "$not_yet" "$work" example_c,vec net || fail "the corpus networks on example_c,vec"
echo "PASS: transpose placed on vec beside a target without it; the networks match onnxruntime"
