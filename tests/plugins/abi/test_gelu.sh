#!/bin/sh
# gelu, gelu_tanh and erf (ABI minor 7): torch's GELU chains (exact and
# tanh) and ONNX's Gelu become one gelu or gelu_tanh, fused into the conv2d or dense before it, and
# only where the chain's intermediates have no other readers; a plugin of
# minor 6 is handed none of them (no older op computes erf exactly, so they
# are not lowered for it).
#   1. hetc tasks: each corpus case has the nodes and the epilogue expected
#      (an Erf read again makes no gelu);
#   2. conv_gelu_exact runs as one step on vec and on cpu; the sample built
#      against the minor-6 header alone cannot compile it, and the message
#      names ABI 1.7; beside vec it compiles, with the gelu apart from the
#      conv, on vec;
#   3. beside vec the minor-6 sample's outputs match onnxruntime. vec and
#      cpu run every case in test_onnx_corpus_vec / _cpu.
# usage: test_gelu.sh HETC TEST_ONNX_CORPUS CORPUS_DIR NOT_YET WORK_DIR
# (HETC_PLUGIN_PATH names the minor-6 sample's folder)
set -u
hetc=$1 corpus_test=$2 corpus=$3 not_yet=$4 work=$5
. "$(dirname "$0")/corpus_checks.sh"

tasks conv_gelu_exact 1 "g1+bias+gelu"
tasks conv_gelu_exact_mul_swapped 1 "g1+bias+gelu"
tasks gelu_exact_rank3 1
tasks gemm_gelu 2 "units10+bias+gelu"
tasks gemm_gelu_tanh 2 "units10+bias+gelu_tanh"
tasks conv_gelu_tanh_chain 1 "g1+bias+gelu_tanh"
tasks gemm_gelu_tanh_pow 2 "units10+bias+gelu_tanh"
tasks erf_rank3 1
# The Erf is read again: conv with its bias alone, the scale and the Add
# (affine maps, lowered to depthwise 1x1 conv2d), erf, multiply, add.
tasks gelu_erf_read_elsewhere 6 "g1+bias"

for target in vec cpu; do
  [ "$(steps conv_gelu_exact $target)" -eq 1 ] || { cat "$work/conv_gelu_exact.$target.explain"; fail "conv_gelu_exact on $target: expected 1 step"; }
  grep -qE '^ +1  conv2d ' "$work/conv_gelu_exact.$target.explain" || fail "conv_gelu_exact on $target: the step is no conv2d"
done
[ "$(steps erf_rank3 vec)" -eq 1 ] || fail "erf_rank3: expected 1 step"
grep -qE '^ +1  erf ' "$work/erf_rank3.vec.explain" || { cat "$work/erf_rank3.vec.explain"; fail "erf_rank3: no erf step"; }

"$hetc" compile "$corpus/conv_gelu_exact.onnx" --targets example_c -o "$work/older.hetc" >"$work/older.out" 2>&1 &&
  { cat "$work/older.out"; fail "the minor-6 sample alone compiled a gelu"; }
grep -q "no target supports it (example_c: the plugin speaks ABI 1.6; this workload needs ABI 1.7)" "$work/older.out" ||
  { cat "$work/older.out"; fail "the refusal does not name ABI 1.7"; }
[ "$(steps conv_gelu_exact example_c,vec)" -eq 2 ] ||
  { cat "$work/conv_gelu_exact.example_c,vec.explain"; fail "conv_gelu_exact beside the minor-6 sample: expected 2 steps"; }
grep -qE '^ +[0-9]+  gelu +[^ ]+ +vec ' "$work/conv_gelu_exact.example_c,vec.explain" ||
  { cat "$work/conv_gelu_exact.example_c,vec.explain"; fail "the gelu beside the minor-6 sample is not on vec"; }

for name in conv_gelu_exact gemm_gelu_tanh erf_rank3 gelu_erf_read_elsewhere; do
  "$corpus_test" "$corpus" "$not_yet" "$work" example_c,vec "$name" || fail "$name on the minor-6 sample and vec"
done
echo "PASS: gelu fused where it may be (one step), kept from the minor-6 sample (which names ABI 1.7 alone); outputs match onnxruntime"
