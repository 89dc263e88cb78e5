#!/usr/bin/env bash
# Shows that two builds of hetc compute the same thing: every sample model
# compiled for vec and for cpu by each (no records, so no timing decides
# anything), run on the same deterministic input, gives byte-identical
# outputs. For refactorings that must not change what hetc does.
# Usage: tests/e2e/outputs_identical.sh BEFORE/bin/hetc AFTER/bin/hetc [TARGETS]
set -euo pipefail
before=$1
after=$2
targets=${3:-vec cpu}
samples=$(cd "$(dirname "$0")/../../samples" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_DATA_HOME=$work/data XDG_CACHE_HOME=${XDG_CACHE_HOME:-$work/cache}
unset HETC_RECORDS HETC_PLUGIN_PATH
same=0
differ=0
for model in "$samples"/*.json; do
  name=$(basename "$model" .json)
  for target in $targets; do
    for side in before after; do
      hetc=$before
      [ "$side" = after ] && hetc=$after
      "$hetc" compile "$model" --targets "$target" -o "$work/$side.hetc" --quiet > /dev/null
      "$hetc" run "$work/$side.hetc" --random-input 5 --repeat 1 --output "$work/$side.out" > /dev/null
      rm -rf "$work/$side.hetc"
    done
    if cmp -s "$work/before.out" "$work/after.out"; then
      same=$((same + 1))
      printf '%-14s %-4s identical (%s bytes)\n' "$name" "$target" "$(stat -c %s "$work/after.out")"
    else
      differ=$((differ + 1))
      printf '%-14s %-4s DIFFERENT\n' "$name" "$target"
    fi
  done
done
echo "$same identical, $differ different"
[ "$differ" -eq 0 ]
