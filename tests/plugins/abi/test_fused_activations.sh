#!/bin/sh
# SiLU, HardSwish and HardSigmoid (ABI minor 6) fuse into the conv2d or
# dense before them, and only where the pattern allows it; a plugin of an
# older minor gets the graph as it was before (sigmoid and multiply, the
# affine maps around relu6), and no workload it cannot know.
#   1. hetc tasks: each corpus case has the nodes and the epilogue expected
#      (a Sigmoid read twice, or also a graph output, makes no silu);
#   2. the EfficientNet-style net runs fewer steps on vec and on cpu than on
#      the sample plugin built against the minor-5 header, which gets the
#      sigmoids and multiplies apart; a silu with no conv before it is one
#      elementwise step;
#   3. on the minor-5 sample the cases match onnxruntime (test_onnx_corpus),
#      and beside vec too, where a hardswish of a 2-d value (the minor-5
#      sample cannot lower it) runs on vec. vec and cpu run every case in
#      test_onnx_corpus_vec / _cpu.
# usage: test_fused_activations.sh HETC TEST_ONNX_CORPUS CORPUS_DIR NOT_YET WORK_DIR
# (HETC_PLUGIN_PATH names the minor-5 sample's folder)
set -u
hetc=$1 corpus_test=$2 corpus=$3 not_yet=$4 work=$5
. "$(dirname "$0")/corpus_checks.sh"

tasks conv_silu 1 "g1+bias+silu"
tasks conv_bn_silu 1 "g1+bias+silu"
tasks conv_swish_gate_first 1 "g1+bias+silu"
tasks conv_hardswish 1 "g1+bias+hardswish"
tasks hardswish_as_mul 1
tasks conv_hardsigmoid 1 "g1+bias+hardsigmoid"
tasks gemm_silu 2 "units10+bias+silu"
tasks gemm_hardswish 2 "units10+bias+hardswish"
# No silu: the conv keeps its bias alone, sigmoid and multiply stay.
tasks sigmoid_two_consumers 4 "g1+bias"
tasks sigmoid_graph_output 3 "g1+bias"
# HardSigmoid with ONNX's default alpha 0.2: affine, relu6, affine (two
# depthwise 1x1 conv2d).
tasks hard_sigmoid 2 "g8+bias+relu6" "g8+bias"
tasks efficientnet_style 25 "g16+bias+silu" "g48+bias+silu" "g1+bias+sigmoid" "g1+bias+residual"
tasks mobilenet_v3_style 25 "g1+bias+hardswish" "g96+bias+hardswish" "g1+bias+hardsigmoid" "units64+bias+hardswish"

older=$(steps efficientnet_style example_c)
[ "$older" -eq 45 ] || { cat "$work/efficientnet_style.example_c.explain"; fail "efficientnet_style on the minor-5 sample: $older steps, expected 45"; }
grep -q ' silu ' "$work/efficientnet_style.example_c.explain" && fail "the minor-5 sample was handed a silu"
for target in vec cpu; do
  fused=$(steps efficientnet_style $target)
  [ "$fused" -eq 25 ] || { cat "$work/efficientnet_style.$target.explain"; fail "efficientnet_style on $target: $fused steps, expected 25"; }
  grep -qE ' (sigmoid|multiply) +[^ ]*/act[0-9]/' "$work/efficientnet_style.$target.explain" &&
    fail "efficientnet_style on $target: a silu ran as sigmoid and multiply"
done
[ "$(steps silu_after_add vec)" -eq 3 ] || fail "silu_after_add: expected 3 steps"
grep -qE '^ +3  silu ' "$work/silu_after_add.vec.explain" || { cat "$work/silu_after_add.vec.explain"; fail "silu_after_add: no silu step"; }
[ "$(steps hardswish_as_mul cpu)" -eq 1 ] || fail "hardswish_as_mul: expected 1 step"
grep -qE '^ +1  hardswish ' "$work/hardswish_as_mul.cpu.explain" || { cat "$work/hardswish_as_mul.cpu.explain"; fail "hardswish_as_mul: no hardswish step"; }

for name in conv_silu conv_bn_silu conv_swish_gate_first conv_hardswish hardswish_as_mul conv_hardsigmoid \
            gemm_silu silu_after_add hardsigmoid_torch sigmoid_two_consumers sigmoid_graph_output efficientnet_style; do
  "$corpus_test" "$corpus" "$not_yet" "$work" example_c "$name" || fail "$name on the minor-5 sample"
done
for name in gemm_hardswish mobilenet_v3_style; do
  "$corpus_test" "$corpus" "$not_yet" "$work" example_c,vec "$name" || fail "$name on the minor-5 sample and vec"
done
echo "PASS: silu, hardswish and hardsigmoid fused where they may be (25 steps for 45), kept apart for a minor-5 plugin; outputs match onnxruntime"
