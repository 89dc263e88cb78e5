#!/usr/bin/env bash
# `hetc compare` end to end on tiny_conv over cpu and vec: every output
# written, consistent (check_compare_outputs.py), packages kept with --keep;
# a target that cannot run here is skipped with its reason; usage errors and
# bad models exit 2 with exact messages.
#   test_compare_cli.sh HETC SOURCE_DIR
set -euo pipefail
hetc=$1
source_dir=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
# The records store (device peaks too) of the runs without --records: its
# own folder, so that no run reads or writes the user's.
state=$(mktemp -d)
trap 'rm -rf "$work" "$state"' EXIT
export HETC_RECORDS=$state/records.sqlite
model=$source_dir/samples/tiny_conv.json

"$hetc" compare "$model" --targets cpu,vec --runs 3 --warmup 1 --csv "$work/r.csv" --json "$work/r.json" \
  --html "$work/r.html" --keep "$work/packages" > "$work/r.txt"
cat "$work/r.txt"
python3 "$here/check_compare_outputs.py" "$hetc" "$model" "$work" cpu,vec
grep -q "(2 of 2 targets available)" "$work/r.txt"
for p in cpu vec hetero; do
  test -f "$work/packages/$p.hetc/manifest.json" || { echo "--keep left no $p.hetc"; exit 1; }
done
# No temporary file is left beside the reports.
test "$(ls "$work" | tr '\n' ' ')" = "packages r.csv r.html r.json r.txt " || { ls "$work"; exit 1; }

# Configs per template: after a short tune of task 1 on cpu, the templates
# tuned there run their tuned configs; vec, never tuned, has none.
"$hetc" tune "$model" --targets cpu --records "$work/records.db" --trials 4 --tasks 1 --quiet > /dev/null
"$hetc" compare "$model" --targets cpu,vec --records "$work/records.db" --runs 1 --warmup 0 --quiet \
  --json "$work/tuned.json" > /dev/null
python3 - "$work/tuned.json" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
sources = {(t["index"], d["target"]): [x["config_source"] for x in d["templates"]]
           for t in result["tasks"] for d in t["devices"]}
assert "tuned" in sources[(1, "cpu")], sources
assert all("tuned" not in s for (task, target), s in sources.items() if target == "vec" or task != 1), sources
print("tuned configs per template:", sources[(1, "cpu")])
PY
rm -f "$work"/records.db*

# A GPU target that cannot run here is skipped, not an error.
if "$hetc" plugins 2>/dev/null | grep -A1 'libhetc_plugin_cuda.so$' | grep -q 'state: unavailable'; then
  mkdir "$work/cuda"
  "$hetc" compare "$model" --targets cpu,cuda --runs 1 --warmup 0 --csv "$work/cuda/r.csv" \
    --json "$work/cuda/r.json" --html "$work/cuda/r.html" > "$work/cuda/r.txt"
  python3 "$here/check_compare_outputs.py" "$hetc" "$model" "$work/cuda" cpu,cuda
  grep -q "^  hetero   skipped: placement needs two available targets$" "$work/cuda/r.txt"
else
  echo "cuda is available here or not built: the skipped-target case is not exercised"
fi

# Exit status 2 and the first line of stderr, exactly; nothing on stdout.
expect() {
  local want=$1
  shift
  local status=0
  "$hetc" compare "$@" > "$work/out" 2> "$work/err" || status=$?
  local got
  got=$(head -n 1 "$work/err")
  if [ "$status" != 2 ] || [ "$got" != "$want" ] || [ -s "$work/out" ]; then
    echo "hetc compare $*: exit $status, stderr '$got', want exit 2 and '$want'"
    exit 1
  fi
}
expect "hetc compare: --targets: empty target name in ','" "$model" --targets ,
expect "hetc compare: unexpected argument '--bogus'" "$model" --targets cpu,vec --bogus
expect "hetc compare: --targets is required" "$model"
expect "hetc compare: no MODEL.json given" --targets cpu,vec
expect "hetc compare: --runs: expected a whole number from 1 to 1000000, got '0'" "$model" --targets cpu --runs 0
expect "hetc compare: --targets: target 'cpu' is listed twice in 'cpu,cpu'" "$model" --targets cpu,cpu
expect "hetc: $work/missing.json: cannot open: No such file or directory" "$work/missing.json" --targets cpu,vec
# A malformed model: the loader's message for it (tests/model/bad_cases.txt),
# given from inside bad/ as that corpus is.
want=$(grep -P '^attr_channels_zero.json\t' "$source_dir/tests/model/bad_cases.txt" | cut -f3)
(cd "$source_dir/tests/model/bad" && expect "hetc: $want" attr_channels_zero.json --targets cpu,vec)
status=0
"$hetc" compare "$model" --targets cpu,nosuch > /dev/null 2> "$work/err" || status=$?
test "$status" = 2 && grep -q "^hetc: no plugin serves target 'nosuch'" "$work/err" ||
  { echo "unknown target: exit $status, $(cat "$work/err")"; exit 1; }
echo "test_compare_cli: ok"
