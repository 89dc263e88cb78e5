#!/bin/sh
# `hetc import` and --input-shape through the command line:
# - the model.json and weights that import writes load back with the ONNX
#   model's tasks, and compile to a package whose outputs are bit-identical
#   to the ONNX model's on the same input;
# - a symbolic input needs --input-shape, and bad values of it are refused
#   with exit status 2 and their exact message;
# - a refused import writes no file.
# usage: test_import_cli.sh HETC_BINARY CORPUS_DIR WORK_DIR
set -u
hetc=$1
corpus=$2
work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect STATUS MESSAGE -- ARGS...: exit status and exact stderr.
expect() {
  want_status=$1
  want_message=$2
  shift 3
  "$hetc" "$@" >"$work/out" 2>"$work/err"
  status=$?
  [ "$status" -eq "$want_status" ] || fail "hetc $*: exit status $status, expected $want_status"
  printf '%s\n' "$want_message" >"$work/want"
  cmp -s "$work/want" "$work/err" || { fail "hetc $*: stderr differs"; diff "$work/want" "$work/err"; }
}

for model in resnet_style mobilenet_v2_style densenet_style lrn_alexnet logsoftmax_opset11_head exp_log; do
  onnx=$corpus/$model.onnx
  shape=""
  [ "$model" = mobilenet_v2_style ] && shape="--input-shape input=1x3x32x32"
  # shellcheck disable=SC2086
  "$hetc" import "$onnx" -o "$work/$model.json" $shape >"$work/out" 2>&1 || { fail "import $model"; cat "$work/out"; }
  [ -s "$work/$model.weights" ] || fail "import $model wrote no weights file"
  # shellcheck disable=SC2086
  "$hetc" tasks "$onnx" $shape >"$work/tasks_onnx" 2>&1
  "$hetc" tasks "$work/$model.json" >"$work/tasks_json" 2>&1
  cmp -s "$work/tasks_onnx" "$work/tasks_json" || { fail "$model: tasks differ"; diff "$work/tasks_onnx" "$work/tasks_json"; }
  # shellcheck disable=SC2086
  "$hetc" compile "$onnx" $shape --targets vec -o "$work/$model.onnx.hetc" -q >/dev/null 2>&1 || fail "compile $model.onnx"
  "$hetc" compile "$work/$model.json" --targets vec -o "$work/$model.json.hetc" -q >/dev/null 2>&1 ||
    fail "compile $model.json"
  for form in onnx json; do
    "$hetc" run "$work/$model.$form.hetc" --input "$corpus/$model.input.bin" --output "$work/$model.$form.out" \
      >/dev/null 2>&1 || fail "run $model.$form.hetc"
  done
  cmp -s "$work/$model.onnx.out" "$work/$model.json.out" || fail "$model: outputs of the ONNX and the imported model.json differ"
done

mobilenet=$corpus/mobilenet_v2_style.onnx
expect 2 "hetc: $mobilenet: graph input 'input': dimension 0 is symbolic ('N'); give the input's shape with --input-shape input=DIMS (e.g. input=1x3x224x224)" -- \
  tasks "$mobilenet"
expect 2 "hetc: --input-shape: 'input=1x3xx32' is not NAME=DIMS with 1 to 6 positive dims (e.g. input=1x3x224x224)" -- \
  tasks "$mobilenet" --input-shape input=1x3xx32
expect 2 "hetc: --input-shape: 'input' is not NAME=DIMS (e.g. input=1x3x224x224)" -- \
  tasks "$mobilenet" --input-shape input
expect 2 "hetc: --input-shape: $mobilenet has no graph input 'data'" -- \
  tasks "$mobilenet" --input-shape input=1x3x32x32,data=1x3x32x32
expect 2 "hetc: --input-shape: $work/resnet_style.json is a model.json, whose inputs have fixed shapes (the option is for ONNX models)" -- \
  tasks "$work/resnet_style.json" --input-shape input=1x3x32x32
# A batch of 2 through the symbolic dim: a shape the model allows.
"$hetc" tasks "$mobilenet" --input-shape input=2x3x32x32 | grep -q "conv2d n2 " || fail "batch 2 through --input-shape"
# A shape the weights do not allow is refused at the node it breaks.
"$hetc" tasks "$mobilenet" --input-shape input=1x4x32x32 >/dev/null 2>"$work/err" && fail "1x4x32x32 was accepted"
grep -q "^hetc: $mobilenet: node '.*' (index [0-9]*, Conv): " "$work/err" || { fail "1x4x32x32: no node named"; cat "$work/err"; }

# A refused import leaves nothing behind.
expect 2 "hetc: $corpus/../bad/unknown_op.onnx: node 'fancy' (index 1, FancyOp): op FancyOp is not supported (api/model-format.md lists the ONNX ops hetc imports)" -- \
  import "$corpus/../bad/unknown_op.onnx" -o "$work/refused.json"
[ -e "$work/refused.json" ] || [ -e "$work/refused.weights" ] && fail "a refused import wrote a file"
# A converted weight is noted on stderr.
"$hetc" import "$corpus/conv_fp16_weights.onnx" -o "$work/fp16.json" 2>"$work/err" >/dev/null || fail "import fp16"
grep -q "^hetc: note: $corpus/conv_fp16_weights.onnx: initializer '.*' is FLOAT16; hetc converted it to float32$" "$work/err" ||
  { fail "no note for the float16 weight"; cat "$work/err"; }

echo "$failures failed"
[ "$failures" -eq 0 ]
