#!/bin/sh
# Every sample model through ONNX and back: export_onnx writes it as ONNX
# (opset 13), and hetc must find the same tasks in the ONNX file as in the
# model.json, and compile both to packages whose outputs on one input agree
# (vec): bit for bit, or within 1e-5 relative where ONNX holds a
# batch_norm's epsilon as a float32 (1e-5 becomes 9.99999975e-06), which
# moves a folded weight's last bit now and then.
# usage: test_samples_round_trip.sh HETC EXPORT_ONNX COMPARE_FLOATS SAMPLES_DIR WORK_DIR [quick]
# quick: the tiny models only (the sanitizer build).
set -u
hetc=$1
export_onnx=$2
compare_floats=$3
samples=$4
work=$5
quick=${6:-}
rm -rf "$work" && mkdir -p "$work" || exit 1
failures=0
count=0
for json in "$samples"/*.json; do
  model=$(basename "$json" .json)
  case $quick in quick) case $model in tiny_*) ;; *) continue ;; esac ;; esac
  count=$((count + 1))
  onnx=$work/$model.onnx
  if ! "$export_onnx" "$json" "$onnx"; then
    echo "FAIL: $model: export"
    failures=$((failures + 1))
    continue
  fi
  # The first line names the model (model.json's name, the ONNX file's name).
  "$hetc" tasks "$json" | sed '1s/^[^:]*://' >"$work/$model.tasks_json"
  "$hetc" tasks "$onnx" | sed '1s/^[^:]*://' >"$work/$model.tasks_onnx"
  if ! cmp -s "$work/$model.tasks_json" "$work/$model.tasks_onnx"; then
    echo "FAIL: $model: tasks differ"
    diff "$work/$model.tasks_json" "$work/$model.tasks_onnx" | head -20
    failures=$((failures + 1))
    continue
  fi
  ok=1
  for form in json onnx; do
    source=$json
    [ $form = onnx ] && source=$onnx
    "$hetc" compile "$source" --targets vec -o "$work/$model.$form.hetc" -q >/dev/null &&
      "$hetc" run "$work/$model.$form.hetc" --random-input 1 --repeat 1 --output "$work/$model.$form.out" >/dev/null ||
      ok=0
  done
  if [ $ok = 1 ] && cmp -s "$work/$model.json.out" "$work/$model.onnx.out"; then
    echo "ok: $model: same tasks, bit-identical outputs"
  elif [ $ok = 1 ] && worst=$("$compare_floats" "$work/$model.onnx.out" "$work/$model.json.out" 1e-5); then
    echo "ok: $model: same tasks, outputs within 1e-5 ($worst)"
  else
    echo "FAIL: $model: outputs differ or a compile or run failed"
    failures=$((failures + 1))
  fi
  rm -rf "$work/$model.json.hetc" "$work/$model.onnx.hetc" "$onnx"
done
echo "$count models, $failures failed"
[ "$count" -gt 0 ] && [ "$failures" -eq 0 ]
